import Foundation
import Hashing
import HTTP

/// Follows one body as it streams: digests every chunk once (`BodyDigester`)
/// and, when the recording stores bodies, keeps the first `storeLimit` bytes.
///
/// Owned by one message on its loop; `finish` is called once.
public struct BodyRecorder: Sendable {
    private var digester: BodyDigester
    private var kept: [UInt8] = []
    private var truncated = false
    /// The most bytes kept; 0 keeps nothing and `finish` returns no stored body.
    public let storeLimit: Int

    /// - Parameter function: what the body and trailers are digested with
    ///   (the recording's); nil counts the bytes and hashes none (`BodyDigester`).
    public init(storeLimit: Int = 0, using function: DigestFunction?) {
        self.storeLimit = max(0, storeLimit)
        digester = BodyDigester(using: function)
    }

    /// Content bytes seen so far.
    public var length: Int { digester.length }

    /// Digests a chunk of content (after transfer-decoding) and keeps what fits.
    public mutating func update(_ chunk: [UInt8]) {
        digester.update(chunk)
        guard storeLimit > 0 else { return }
        let room = storeLimit - kept.count
        if chunk.count <= room {
            kept.append(contentsOf: chunk)
        } else {
            kept.append(contentsOf: chunk.prefix(room))
            truncated = true
        }
    }

    /// Ends the body: its digest (with the trailers') and the stored copy, if any.
    public mutating func finish(trailers: HTTPFields? = nil) -> (digest: BodyDigest, stored: StoredBody?) {
        let digest = digester.finish(trailers: trailers)
        guard storeLimit > 0 else { return (digest, nil) }
        return (digest, StoredBody(base64: Data(kept).base64EncodedString(), truncated: truncated))
    }
}
