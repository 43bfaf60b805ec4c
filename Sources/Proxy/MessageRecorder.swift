import Evidence
import Hashing
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
    /// The last body chunk recorded, held so the other leg can tell that it
    /// forwards these very bytes (same storage: a held array cannot change).
    private var lastBodyChunk: [UInt8] = []
    /// True while every body chunk so far was adopted from the other leg
    /// (`recordBody(_:following:)`), so this body equals that one's prefix.
    private var followsOtherLeg = true
    private var progress = Progress.open
    /// The body's digest (with the trailers') and stored copy once finished
    /// (`finishBody`, or taken from the other leg by `adoptFinishedBody`).
    private var finishedBody: Optional<(digest: BodyDigest, stored: StoredBody?)> = nil
    private var timings = MessageTimings()
    /// What the head and body are digested with (the recording's); nil when
    /// nothing reads the digests (`RecordingSettings.takesDigests`): heads
    /// then record `HeadDigest(untaken:)` and bodies only their length.
    private let digests: DigestFunction?
    /// Where the head digests of this message are shared with the other leg
    /// (`HeadDigestMemos`), and whether this leg's head comes first (it
    /// keeps its memo for the other) or second (it reads it).
    private let headMemo: Optional<(memos: HeadDigestMemos, keeps: Bool)>

    init(bodyStoreLimit: Int, digests: DigestFunction?, headMemo: (memos: HeadDigestMemos, keeps: Bool)? = nil) {
        self.digests = digests
        self.headMemo = headMemo
        body = BodyRecorder(storeLimit: bodyStoreLimit, using: digests)
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

    /// The status of a recorded response head; nil for a request or no head.
    var responseStatus: Int? {
        if case .response(let response, _) = head { return response.status.code }
        return nil
    }

    /// Body bytes seen so far.
    var bodyLength: Int { body.length }

    /// True when this message's head and `other`'s hold their fields in one
    /// storage (a head forwarded with the very field list it came with):
    /// `RedactionPolicy.record` then gives both the same recorded fields,
    /// and `finish` can take the other's (`recordedFields`). The same
    /// storage, not equal fields: an array that is shared cannot have
    /// changed, so nothing is compared.
    func fieldsShareStorage(with other: MessageRecorder) -> Bool {
        guard let mine = fieldStorage, let theirs = other.fieldStorage else { return false }
        return mine == theirs
    }

    /// Where the recorded head's field list is stored (its array's
    /// elements, which the head keeps alive) and its count; nil without a
    /// head. Noted when the head is recorded: reading it from `head` would
    /// copy the head.
    private var fieldStorage: Optional<(UnsafeRawPointer?, Int)> = nil

    private static func storage(of fields: HTTPFields) -> (UnsafeRawPointer?, Int) {
        fields.fields.withUnsafeBufferPointer { (UnsafeRawPointer($0.baseAddress), $0.count) }
    }

    mutating func recordRequest(_ request: HTTPRequestHead, wire: HeadDigest.WireForm, connectionScheme: String,
                                at time: Timestamp) {
        let digest: HeadDigest
        if let digests, let (memos, keeps) = headMemo {
            let read = memos.request
            digest = HeadDigest(request: request, wire: wire, connectionScheme: connectionScheme, using: digests,
                                memo: &memos.request, earlier: memos.earlierRequest, keepingMemo: keeps)
            if memos.acrossExchanges { memos.earlierRequest = read }
        } else if let digests {
            digest = HeadDigest(request: request, wire: wire, connectionScheme: connectionScheme, using: digests)
        } else {
            digest = HeadDigest(untaken: request)
        }
        head = .request(request, digest, connectionScheme: connectionScheme)
        fieldStorage = MessageRecorder.storage(of: request.fields)
        timings.start = time
        timings.headersDone = time
    }

    mutating func recordResponse(_ response: HTTPResponseHead, wire: HeadDigest.WireForm, at time: Timestamp) {
        if let digests, let (memos, keeps) = headMemo {
            let read = memos.response
            head = .response(response, HeadDigest(response: response, wire: wire, using: digests, memo: &memos.response,
                                                  earlier: memos.earlierResponse, keepingMemo: keeps))
            if memos.acrossExchanges { memos.earlierResponse = read }
        } else if let digests {
            head = .response(response, HeadDigest(response: response, wire: wire, using: digests))
        } else {
            head = .response(response, HeadDigest(untaken: response))
        }
        fieldStorage = MessageRecorder.storage(of: response.fields)
        timings.start = time
        timings.headersDone = time
    }

    mutating func recordBody(_ chunk: [UInt8]) {
        followsOtherLeg = false
        body.update(chunk)
        lastBodyChunk = chunk
    }

    /// The body so far, when `chunk` is the very array this leg recorded
    /// last (not merely equal bytes): what the other leg may adopt.
    func bodyEndingWith(_ chunk: [UInt8]) -> BodyRecorder? {
        guard !chunk.isEmpty, chunk.count == lastBodyChunk.count else { return nil }
        let same = chunk.withUnsafeBufferPointer { mine in
            lastBodyChunk.withUnsafeBufferPointer { $0.baseAddress == mine.baseAddress }
        }
        return same ? body : nil
    }

    /// Records `chunk` as forwarded from the other leg, which recorded it
    /// last and whose body up to there is `source` (`bodyEndingWith`). While
    /// this body has been the other leg's all along, its digest state is
    /// adopted (shared, copy-on-write) instead of hashing the chunk a second
    /// time; otherwise the chunk is hashed here.
    mutating func recordBody(_ chunk: [UInt8], following source: BodyRecorder?) {
        guard !chunk.isEmpty else { return }
        guard followsOtherLeg, let source, body.length + chunk.count == source.length else {
            recordBody(chunk)
            return
        }
        body = source
        lastBodyChunk = chunk
    }

    /// The trailers that crossed with the end; nil before the end or when there were none.
    private var trailers: HTTPFields? {
        if case .ended(let trailers) = progress { return trailers }
        return nil
    }

    /// The body's digest and stored copy once finished (`finishBody`,
    /// `adoptFinishedBody`), until `finish` takes them.
    var finished: (digest: BodyDigest, stored: StoredBody?)? { finishedBody }

    /// Finishes the body's digest, once: later calls do nothing, and
    /// `finish` takes the result (moved out, not copied).
    mutating func finishBody() {
        guard case .none = finishedBody else { return }
        finishedBody = body.finish(trailers: trailers)
    }

    /// Takes `source`'s finished body (`finishBody`) instead of finishing the
    /// same digest again, when this body is `source`'s: every chunk was
    /// adopted from it (`recordBody(_:following:)`, which shares its digest
    /// state), it came to the same length (so nothing of `source` was left
    /// out after), and the same trailers ended both. The result is then the
    /// one this recorder would compute (same bytes, digest function and
    /// store limit, both from the recording's settings). Otherwise nothing
    /// changes and `finish` digests this body itself.
    mutating func adoptFinishedBody(of source: MessageRecorder) {
        guard case .none = finishedBody, followsOtherLeg, case .some = source.finishedBody,
              body.length == source.body.length, trailers == source.trailers else { return }
        finishedBody = source.finishedBody  // one copy, not a binding and then a copy of it
    }

    mutating func recordEnd(trailers: HTTPFields?, at time: Timestamp) {
        progress = .ended(trailers: trailers)
        timings.end = time
    }

    /// The message as recorded; nil when no head crossed. Finishes the body
    /// digest, so it is called once; the head and its digest move into the
    /// record (`head` is `.none` afterwards) rather than being copied.
    /// `recordedFields`: the head's fields as `redaction` records them, when
    /// the other leg's message recorded them already (`fieldsShareStorage`).
    mutating func finish(redaction: RedactionPolicy, at time: Timestamp,
                         recordedFields: [RecordedField]? = nil) -> RecordedMessage? {
        let trailers = self.trailers
        let complete: Bool
        switch progress {
        case .open:
            complete = false
            if timings.end == nil, hasHead { timings.end = time }
        case .ended:
            complete = true
        }
        // Moved out of `finishedBody` when `finishBody` or `adoptFinishedBody` set it.
        let (bodyDigest, stored) = finishedBody.take() ?? body.finish(trailers: trailers)
        var recorded = Head.none
        swap(&recorded, &head)
        fieldStorage = nil
        switch consume recorded {
        case .none:
            return nil
        case let .request(request, digest, scheme):
            return RecordedMessage(request: request, connectionScheme: scheme,
                                   digest: MessageDigest(head: digest, body: bodyDigest), trailers: trailers,
                                   body: stored, complete: complete, timings: timings, redaction: redaction,
                                   recordedFields: recordedFields)
        case let .response(response, digest):
            return RecordedMessage(response: response, digest: MessageDigest(head: digest, body: bodyDigest),
                                   trailers: trailers, body: stored, complete: complete, timings: timings,
                                   redaction: redaction, recordedFields: recordedFields)
        }
    }
}

/// The head digests of an exchange's request and of its final response as
/// the leg that saw each head first took them, for the other leg: a
/// forwarded head mostly unchanged reuses the digest of each equal range
/// instead of hashing it again (`HeadDigestMemo`). The request crosses
/// downstream first, the response upstream first.
///
/// Shared by the exchange's four head `MessageRecorder`s, on the exchange's
/// loop (one `ExchangeFlow` records both legs). One object per exchange
/// (`acrossExchanges` false: the second head of each pair reads the memo and
/// drops it), or one per client connection (`DownstreamLayer`,
/// `acrossExchanges` true: every head keeps its memo, so the next request
/// or response on the connection, whose fields mostly repeat the last one's
/// (`server`, `content-type`, `user-agent`, …), reuses their digests too;
/// concurrent HTTP/2 streams only replace each other's memo, which costs
/// hits, never a digest). Across exchanges the head before the last is kept
/// too (`earlierRequest`, `earlierResponse`): a request crosses as HTTP/1.1
/// on one leg and HTTP/2 on the other, and its wire form (`exact`) repeats
/// only the same leg's, two heads back. Either way it only saves work: a
/// memo never changes a digest. Memory: the last two requests' and
/// responses' digest input and digests, per connection.
public final class HeadDigestMemos {
    var request: HeadDigestMemo?
    var response: HeadDigestMemo?
    /// With `acrossExchanges`: the request head before `request`'s, looked up after it.
    var earlierRequest: HeadDigestMemo?
    /// With `acrossExchanges`: the response head before `response`'s, looked up after it.
    var earlierResponse: HeadDigestMemo?
    /// True when the memos outlive one exchange (every head keeps its memo).
    let acrossExchanges: Bool

    public init(acrossExchanges: Bool = false) {
        self.acrossExchanges = acrossExchanges
    }
}
