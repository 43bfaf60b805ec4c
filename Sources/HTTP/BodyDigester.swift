import Hashing

/// Computes a `BodyDigest` while a body streams: each chunk is hashed once, as
/// it passes, and nothing is buffered.
///
/// Feed content after transfer-decoding (chunk payloads, not chunk framing;
/// HTTP/2 DATA payloads). A value is owned by one message and used on that
/// message's loop; `finish` is called once, after which the digester is spent.
/// Every digest is taken with the recording's `DigestFunction`; with none
/// (a proxy whose records nothing reads digests from:
/// `RecordingSettings.takesDigests`), the digester only counts the bytes.
public struct BodyDigester: Sendable {
    private var running: RunningDigest?
    private let function: DigestFunction?
    /// Content bytes seen so far.
    public private(set) var length = 0

    /// - Parameter function: what the body and trailers are digested with;
    ///   nil hashes nothing, and `finish` gives the length with a zero digest
    ///   and no trailers digest.
    public init(using function: DigestFunction?) {
        self.function = function
        running = function?.begin()
    }

    /// Hashes one chunk of content.
    public mutating func update<Bytes: Collection>(_ chunk: Bytes) where Bytes.Element == UInt8 {
        guard !chunk.isEmpty else { return }
        running?.update(chunk)
        length += chunk.count
    }

    /// Ends the body and digests the trailers, if any.
    public mutating func finish(trailers: HTTPFields? = nil) -> BodyDigest {
        guard let function, running != nil else { return BodyDigest(length: length, sha256: .untaken) }
        return BodyDigest(length: length, sha256: SHA256Digest.finishing(&running!),
                          trailers: BodyDigest.TrailersDigest(trailers, using: function))
    }
}
