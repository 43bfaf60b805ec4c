import Hashing

/// Computes a `BodyDigest` while a body streams: each chunk is hashed once, as
/// it passes, and nothing is buffered.
///
/// Feed content after transfer-decoding (chunk payloads, not chunk framing;
/// HTTP/2 DATA payloads). A value is owned by one message and used on that
/// message's loop; `finish` is called once, after which the digester is spent.
/// Every digest is taken with the recording's `DigestFunction`.
public struct BodyDigester: Sendable {
    private var running: RunningDigest
    private let function: DigestFunction
    /// Content bytes seen so far.
    public private(set) var length = 0

    public init(using function: DigestFunction) {
        self.function = function
        running = function.begin()
    }

    /// Hashes one chunk of content.
    public mutating func update<Bytes: Collection>(_ chunk: Bytes) where Bytes.Element == UInt8 {
        guard !chunk.isEmpty else { return }
        running.update(chunk)
        length += chunk.count
    }

    /// Ends the body and digests the trailers, if any.
    public mutating func finish(trailers: HTTPFields? = nil) -> BodyDigest {
        BodyDigest(length: length, sha256: SHA256Digest.finishing(&running),
                   trailers: BodyDigest.TrailersDigest(trailers, using: function))
    }
}
