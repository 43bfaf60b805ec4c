import Evidence
import Hashing
import HTTP

/// One message (request or response) as a tap sees it pass: the head is
/// digested once, from the wire form the transport reports, and the body is
/// digested chunk by chunk as it streams (`BodyRecorder`), never buffered
/// here. `finish` turns it into the `RecordedMessage` of a recording.
///
/// A value owned by one exchange on its connection's loop.
public struct MessageObservation: Sendable {
    /// The head and what its record needs besides the digest.
    enum Head: Sendable {
        case request(HTTPRequestHead, connectionScheme: String)
        case response(HTTPResponseHead)
    }

    let head: Head
    let headDigest: HeadDigest
    private var body: BodyRecorder
    private var timings: MessageTimings

    /// A request whose head was sent or received at `headersDone` (its first byte at `start`).
    ///
    /// - Parameters:
    ///   - wire: the header section as it crossed the wire (raw HTTP/1.1 bytes, or the HTTP/2 field list).
    ///   - connectionScheme: `https` or `http`, recorded when the head carries no scheme.
    ///   - storeLimit: body bytes to keep in the record; 0 keeps none.
    ///   - digests: what the head and body are digested with (the recording's, `RedactionPolicy.digests`).
    public init(request head: HTTPRequestHead, wire: HeadDigest.WireForm, connectionScheme: String,
                storeLimit: Int = 0, using digests: DigestFunction, start: Timestamp, headersDone: Timestamp) {
        self.head = .request(head, connectionScheme: connectionScheme)
        headDigest = HeadDigest(request: head, wire: wire, connectionScheme: connectionScheme, using: digests)
        body = BodyRecorder(storeLimit: storeLimit, using: digests)
        timings = MessageTimings(start: start, headersDone: headersDone)
    }

    /// A response whose head was sent or received at `headersDone` (its
    /// first byte at `start`); nil when the tap did not see the instant.
    /// Digested with `digests`, as the request.
    public init(response head: HTTPResponseHead, wire: HeadDigest.WireForm, storeLimit: Int = 0,
                using digests: DigestFunction, start: Timestamp?, headersDone: Timestamp?) {
        self.head = .response(head)
        headDigest = HeadDigest(response: head, wire: wire, using: digests)
        body = BodyRecorder(storeLimit: storeLimit, using: digests)
        timings = MessageTimings(start: start, headersDone: headersDone)
    }

    /// Content bytes seen so far.
    public var bodyLength: Int { body.length }

    /// Digests one chunk of content (after transfer-decoding).
    public mutating func append(_ chunk: [UInt8]) {
        body.update(chunk)
    }

    /// The message as a recording keeps it. `complete` is false when it ended
    /// early (reset, refused past a limit): the body digest then covers what passed.
    public mutating func finish(trailers: HTTPFields? = nil, complete: Bool = true, end: Timestamp,
                                redaction: RedactionPolicy) -> RecordedMessage {
        timings.end = end
        let (bodyDigest, stored) = body.finish(trailers: trailers)
        let digest = MessageDigest(head: headDigest, body: bodyDigest)
        switch head {
        case .request(let head, let scheme):
            return RecordedMessage(request: head, connectionScheme: scheme, digest: digest, trailers: trailers,
                                   body: stored, complete: complete, timings: timings, redaction: redaction)
        case .response(let head):
            return RecordedMessage(response: head, digest: digest, trailers: trailers, body: stored,
                                   complete: complete, timings: timings, redaction: redaction)
        }
    }
}
