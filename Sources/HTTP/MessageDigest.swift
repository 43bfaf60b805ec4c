/// Every digest of one message as one tap saw it: the head and the body with
/// its trailers. Two of these, from before and after a hop, are what
/// `DigestComparison` (in Evidence, the verifier's) judges.
public struct MessageDigest: Codable, Hashable, Sendable {
    public var head: HeadDigest
    public var body: BodyDigest

    public init(head: HeadDigest, body: BodyDigest = .empty) {
        self.head = head
        self.body = body
    }
}
