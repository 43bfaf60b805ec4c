import Evidence
import HTTP

/// Follows one message (a request or a response) on one leg of an exchange
/// as it streams, and turns it into a `RecordedMessage` at the end: the head
/// digests are computed once from the head's wire form, each body chunk is
/// digested once as it passes (`BodyRecorder`), nothing is buffered beyond
/// the stored-body limit.
///
/// Owned by one exchange on its loop. A message whose head never crossed the
/// leg records as nil.
struct MessageRecorder {
    /// What is known of the head.
    enum Head {
        case none
        case request(HTTPRequestHead, HeadDigest, connectionScheme: String)
        case response(HTTPResponseHead, HeadDigest)
    }

    /// How far the message got.
    enum Progress {
        /// Head (if any) and body so far; the end has not crossed.
        case open
        /// The end crossed, with these trailers.
        case ended(trailers: HTTPFields?)
    }

    private(set) var head = Head.none
    private var body: BodyRecorder
    private var progress = Progress.open
    private var timings = MessageTimings()

    init(bodyStoreLimit: Int) {
        body = BodyRecorder(storeLimit: bodyStoreLimit)
    }

    /// True once a head has been recorded.
    var hasHead: Bool {
        if case .none = head { return false }
        return true
    }

    /// True once the end crossed.
    var isEnded: Bool {
        if case .ended = progress { return true }
        return false
    }

    /// Body bytes seen so far.
    var bodyLength: Int { body.length }

    mutating func recordRequest(_ request: HTTPRequestHead, wire: HeadDigest.WireForm, connectionScheme: String,
                                at time: Timestamp) {
        let digest = HeadDigest(request: request, wire: wire, connectionScheme: connectionScheme)
        head = .request(request, digest, connectionScheme: connectionScheme)
        timings.start = time
        timings.headersDone = time
    }

    mutating func recordResponse(_ response: HTTPResponseHead, wire: HeadDigest.WireForm, at time: Timestamp) {
        head = .response(response, HeadDigest(response: response, wire: wire))
        timings.start = time
        timings.headersDone = time
    }

    mutating func recordBody(_ chunk: [UInt8]) {
        body.update(chunk)
    }

    mutating func recordEnd(trailers: HTTPFields?, at time: Timestamp) {
        progress = .ended(trailers: trailers)
        timings.end = time
    }

    /// The message as recorded; nil when no head crossed. Finishes the body
    /// digest, so it is called once.
    mutating func finish(redaction: RedactionPolicy, at time: Timestamp) -> RecordedMessage? {
        let trailers: HTTPFields?
        let complete: Bool
        switch progress {
        case .open:
            trailers = nil
            complete = false
            if timings.end == nil, hasHead { timings.end = time }
        case .ended(let t):
            trailers = t
            complete = true
        }
        let (bodyDigest, stored) = body.finish(trailers: trailers)
        switch head {
        case .none:
            return nil
        case let .request(request, digest, scheme):
            return RecordedMessage(request: request, connectionScheme: scheme,
                                   digest: MessageDigest(head: digest, body: bodyDigest), trailers: trailers,
                                   body: stored, complete: complete, timings: timings, redaction: redaction)
        case let .response(response, digest):
            return RecordedMessage(response: response, digest: MessageDigest(head: digest, body: bodyDigest),
                                   trailers: trailers, body: stored, complete: complete, timings: timings,
                                   redaction: redaction)
        }
    }
}
