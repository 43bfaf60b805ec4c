import Hashing

/// The digest of a message's content after transfer-decoding (what RFC 9530
/// `Content-Digest` covers) and of its trailers, produced by `BodyDigester`.
public struct BodyDigest: Codable, Hashable, Sendable {
    /// Content bytes after transfer-decoding.
    public var length: Int
    /// The digest of those bytes (SHA-256, or HMAC-SHA-256 under the digest key).
    public var sha256: SHA256Digest
    /// Digests of the trailer section; nil when there were no trailer fields.
    public var trailers: TrailersDigest?

    public init(length: Int, sha256: SHA256Digest, trailers: TrailersDigest? = nil) {
        self.length = length
        self.sha256 = sha256
        self.trailers = trailers
    }

    /// The plain SHA-256 digest of a message with no content and no trailers.
    public static let empty = BodyDigest(length: 0, sha256: .ofNothing)

    /// The digests of a trailer section, in the item encoding of `DigestInput`.
    public struct TrailersDigest: Codable, Hashable, Sendable {
        /// The digest over `item(name_1) item(value_1) … item(name_n) item(value_n)`,
        /// names with their original case, in the order received.
        public var exact: SHA256Digest
        /// The digest over `item("trailers") count(G) group_1 … group_G`, groups
        /// built as in the semantic form of a head (`HeadDigest+Canonical.swift`),
        /// nothing left out.
        public var semantic: SHA256Digest
        /// The trailer names in order, with their original case.
        public var fieldNames: [String]

        /// Digests a trailer section with `function`; nil when it holds no field.
        public init?(_ trailers: HTTPFields?, using function: DigestFunction) {
            guard let trailers, !trailers.isEmpty else { return nil }
            let bound = HeadDigest.inputCapacity(trailers, wire: .http1(head: []))
            let capacity = 24 + 2 * bound.input
            (exact, semantic) = DigestInput.with(capacity: capacity) { input in
                for field in trailers {
                    input.appendItem(field.name)
                    input.appendItem(field.value)
                }
                let exactEnd = input.position
                input.appendItem("trailers")
                trailers.fields.withUnsafeBufferPointer { section in
                    FieldNameIndex.with(section, nameBytes: bound.names) { index in
                        input.appendCount(index.groups.count)
                        for group in index.groups { input.appendGroup(group, of: index) }
                    }
                }
                return (input.digest(of: 0..<exactEnd, using: function), input.digest(of: exactEnd..<input.position, using: function))
            }
            fieldNames = trailers.map(\.name)
        }
    }
}
