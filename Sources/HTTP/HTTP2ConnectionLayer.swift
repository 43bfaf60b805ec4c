/// One HTTP/2 connection (server or client role), without I/O: which streams
/// are open and when they are over, when the session's output is taken and
/// how much at a time, the channel's backpressure, flow control toward the
/// consumers of streams, GOAWAY received or sent, connection failure (a
/// flood, a rapid reset, a protocol violation: the session's verdicts), and
/// the end: lingering after the last frame, closing. Built on
/// `HTTP2Session`; a driver (`HTTP2ServerDriver`/`HTTP2ClientDriver` in
/// Transport) feeds it the connection's events and carries out what comes back.
///
/// Events in: bytes received (`receive`), the peer's end of input
/// (`readEnded`), the channel writable again (`channelWritable`), the linger
/// timer (`lingerTimerFired`), the channel closed (`channelClosed`), an abort
/// (`abort`), the owner's stop (`stop`); from the streams' owners, heads,
/// DATA, ends with trailers, resets and consumption (see
/// `HTTP2ConnectionLayer+Sending.swift`).
/// What to do comes back one `Step` at a time from `next(channelWritable:)`;
/// nothing is queued but the session's own event batch, walked by index.
///
/// Invariants:
/// - `streams` holds exactly the streams whose exchange is not over on this
///   side: an entry from the stream's head (received by a server, sent by a
///   client) until both messages ended (`.end` with `streamDone`,
///   `sendEnd` returning true), or a failure or reset removed it. Every
///   removal is reported (a step or a return value), so a driver's table of
///   stream objects stays the same set.
/// - Received DATA counts against the peer's windows until the consumer
///   reports it with `consumed`: a consumer that stops reading holds the
///   peer at the stream window (and, over all streams, the connection
///   window); DATA for a stream no longer open is consumed at once.
/// - Output is taken from the session only while the driver says the
///   channel is writable, at most `writeSize` bytes per `.write`; while it is
///   not, acknowledgements pile up in the session and a peer that floods
///   without reading is caught (`HTTP2Configuration.maxOutboundAcks`).
/// - After each flush round `.streamsMayWrite` lets the streams re-check
///   `streamAcceptsData`; a stream accepts DATA while its queue in the
///   session is below `streamWriteHighWater`.
/// - `phase` only moves forward: open → lingering (the session finished:
///   our FIN goes out after the last frame, the peer's is awaited) → closed.
/// - `streams` is changed only with `updateValue`/`removeValue`, never
///   through `streams[id]?.field = …`, which gets and sets the whole value
///   (Docs/performance.md#http2-stream-state-changed-in-place).
/// - Not thread-safe: one owner, one queue. A class because it owns its
///   session (an nghttp2 object that cannot be copied).
public final class HTTP2ConnectionLayer {
    /// Where the connection is.
    public enum Phase: Hashable, Sendable {
        case open
        /// The session neither reads nor writes: our side is shut down,
        /// waiting for the peer's end of input or the linger timer.
        case lingering
        case closed
    }

    /// What the driver does next. After `.idle` it waits for an event; after
    /// any other step it carries it out and calls `next` again.
    public enum Step: Hashable, Sendable {
        /// Nothing more to do until another event.
        case idle
        /// Write these bytes (never empty) to the channel.
        case write([UInt8])
        /// Server: a request head opened a stream; `endsWithHead`: the request has no body.
        case requestHead(HTTP2StreamID, HTTPRequestHead, decodedFields: [HTTPField], endsWithHead: Bool)
        /// Server role: a request refused before it became a stream (`HTTP2Event.requestRefused`).
        case requestRefused(HTTP2StreamID, HTTPRequestHead?, reason: String)
        /// Client: an interim (1xx) response on an open stream.
        case interimResponse(HTTP2StreamID, HTTPResponseHead, decodedFields: [HTTPField])
        /// Client: the final response head on an open stream.
        case responseHead(HTTP2StreamID, HTTPResponseHead, decodedFields: [HTTPField])
        /// Body bytes for an open stream; report them with `consumed` once
        /// passed on (or dropped: see `dropsUnreadBody`).
        case body(HTTP2StreamID, [UInt8])
        /// The peer ended its message; `streamDone`: ours had ended too and
        /// the stream left `streams`.
        case end(HTTP2StreamID, trailers: HTTPFields?, streamDone: Bool)
        /// The stream left `streams` unfinished. `slotFreed`: a client may
        /// announce room for another stream.
        case streamFailed(HTTP2StreamID, HTTP2StreamFailure, slotFreed: Bool)
        /// Client: the server's GOAWAY; the streams it did not process failed just before.
        case goAwayReceived(lastStreamID: HTTP2StreamID, code: HTTP2ErrorCode)
        /// A flush round ended: the open streams may accept DATA again.
        case streamsMayWrite
        /// The session is finished: shut the sending side down after what is
        /// written, keep reading, and arm the linger timer. A peer still
        /// reading our last DATA keeps sending WINDOW_UPDATE; closing
        /// outright would answer those with a reset that destroys what it had not read.
        case shutdownAndLinger
        case close
        case abort
    }

    /// What this side knows of one open stream.
    struct StreamProgress {
        var inboundEnded = false
        var outboundEnded = false
    }

    /// Largest piece of output taken from the session per `.write`.
    public static let writeSize = 128 * 1024

    let session: HTTP2Session
    public var role: HTTP2Session.Role { session.role }
    let streamWriteHighWater: Int
    var streams = HTTP2StreamMap<StreamProgress>()
    public private(set) var phase = Phase.open
    /// The connection error, once the session reported one.
    public private(set) var failure: HTTP2ConnectionError?
    /// Client: the server's GOAWAY, once received.
    public private(set) var goAway: (lastStreamID: HTTP2StreamID, code: HTTP2ErrorCode)?
    /// The owner asked to stop: GOAWAY sent, no new stream.
    public private(set) var stopping = false

    /// The session's events not yet turned into steps: `events[eventIndex...]`.
    private var events: [HTTP2Event] = []
    private var eventIndex = 0
    /// Output may be due: take it at the next writable `next`.
    var flushDue = false
    /// A flush round ended; `.streamsMayWrite` is owed.
    private var writabilityDue = false
    /// Every open stream fails with this, one per step.
    private var failingAll: HTTP2StreamFailure?
    /// Client: `goAway` came and is not reported yet: streams above its last
    /// id fail, then `.goAwayReceived`.
    private var goAwayUnreported = false
    /// Carried out once the failures are reported; the phase is then closed.
    private var finalStep: Step?

    /// A layer whose session has queued its preface (client magic, SETTINGS,
    /// connection WINDOW_UPDATE); it goes out at the first writable `next`.
    public init(role: HTTP2Session.Role, configuration: HTTP2Configuration = HTTP2Configuration(),
                streamWriteHighWater: Int) {
        session = HTTP2Session(role: role, configuration: configuration)
        self.streamWriteHighWater = streamWriteHighWater
        flushDue = true
    }

    /// Streams open on this side.
    public var openStreamCount: Int { streams.count }

    public func isOpen(_ id: HTTP2StreamID) -> Bool { streams[id] != nil }

    // MARK: Connection events

    /// Bytes from the peer (or left over from protocol detection); run `next` afterwards.
    public func receive(_ bytes: [UInt8]) {
        guard phase != .closed else { return }
        session.feed(bytes)
        takeSessionEvents()
        flushDue = true
    }

    /// The channel can take writes again; run `next` afterwards.
    public func channelWritable() {
        flushDue = true
    }

    /// The peer finished sending: open streams fail, then `.close`.
    public func readEnded() {
        guard phase != .closed else { return }
        failingAll = .peerClosed
        finalStep = .close
    }

    /// This side aborts: open streams fail with `.cancelled`, then `.abort`.
    public func abort() {
        guard phase != .closed else { return }
        failingAll = .cancelled
        finalStep = .abort
    }

    /// The channel closed. Nothing more is written; `next` reports each
    /// stream still open as failed (`.peerClosed`) and then idles. Returns
    /// the connection error when the session had found one (the reason the
    /// channel closed, as far as HTTP/2 is concerned).
    @discardableResult
    public func channelClosed() -> HTTP2ConnectionError? {
        phase = .closed
        events.removeAll()
        eventIndex = 0
        finalStep = nil
        goAwayUnreported = false
        failingAll = .peerClosed
        return failure
    }

    /// The owner stops the connection: GOAWAY goes out, open streams finish,
    /// a client opens no new stream. The session finishing then leads to `.shutdownAndLinger`.
    public func stop() {
        stopping = true
        try? session.goAway()
        flushDue = true
    }

    /// The linger timer armed for `.shutdownAndLinger` fired: true when the
    /// channel is to be closed now.
    public func lingerTimerFired() -> Bool {
        guard phase == .lingering else { return false }
        phase = .closed
        return true
    }

    // MARK: Steps

    /// The next thing to do. `channelWritable`: the channel is open and
    /// takes writes now (output stays in the session otherwise).
    public func next(channelWritable: Bool) -> Step {
        while true {
            if let failure = failingAll {
                if let id = streams.keys.first {
                    streams.removeValue(forKey: id)
                    return .streamFailed(id, failure, slotFreed: false)
                }
                failingAll = nil
            }
            if goAwayUnreported, let goAway {
                if let id = streams.keys.first(where: { $0 > goAway.lastStreamID }) {
                    streams.removeValue(forKey: id)
                    return .streamFailed(id, .notProcessed(lastStreamID: goAway.lastStreamID, code: goAway.code),
                                         slotFreed: false)
                }
                goAwayUnreported = false
                return .goAwayReceived(lastStreamID: goAway.lastStreamID, code: goAway.code)
            }
            if eventIndex < events.count {
                let index = eventIndex
                eventIndex += 1
                if let step = translate(events[index], at: index) { return step }
                continue
            }
            if let step = finalStep {
                finalStep = nil
                phase = .closed
                return step
            }
            guard phase != .closed else { return .idle }
            if flushDue {
                if channelWritable {
                    let bytes = session.takeOutbound(maxBytes: HTTP2ConnectionLayer.writeSize)
                    takeSessionEvents()
                    // The events the sending caused come after these bytes.
                    if !bytes.isEmpty { return .write(bytes) }
                }
                flushDue = false
                writabilityDue = true
                continue
            }
            if writabilityDue {
                writabilityDue = false
                if !streams.isEmpty { return .streamsMayWrite }
            }
            if phase == .open && session.isFinished {
                phase = .lingering
                return .shutdownAndLinger
            }
            return .idle
        }
    }

    /// Adds the session's new events after the unread ones; the read ones
    /// are dropped first, their storage kept (`HTTP2Session.moveEvents`).
    private func takeSessionEvents() {
        if eventIndex > 0 && eventIndex >= events.count {
            events.removeAll(keepingCapacity: true)
            eventIndex = 0
        }
        session.moveEvents(into: &events)
    }

    /// The step for one session event, or nil when it needs none.
    private func translate(_ event: HTTP2Event, at index: Int) -> Step? {
        switch event {
        case .requestHead(let id, let head, let decodedFields):
            let endsWithHead: Bool
            if index + 1 < events.count, case .streamEnded(id, nil) = events[index + 1] {
                endsWithHead = true
            } else {
                endsWithHead = false
            }
            streams.updateValue(StreamProgress(), forKey: id)
            return .requestHead(id, head, decodedFields: decodedFields, endsWithHead: endsWithHead)
        case .requestRefused(let id, let head, let reason):
            return .requestRefused(id, head, reason: reason)
        case .interimResponse(let id, let head, let decodedFields):
            guard streams[id] != nil else { return nil }
            return .interimResponse(id, head, decodedFields: decodedFields)
        case .responseHead(let id, let head, let decodedFields):
            guard streams[id] != nil else { return nil }
            return .responseHead(id, head, decodedFields: decodedFields)
        case .data(let id, let bytes):
            guard streams[id] != nil else {
                consumed(id, bytes: bytes.count)
                return nil
            }
            return .body(id, bytes)
        case .streamEnded(let id, let trailers):
            guard var progress = streams[id] else { return nil }
            progress.inboundEnded = true
            let done = progress.outboundEnded
            if done {
                streams.removeValue(forKey: id)
            } else {
                streams.updateValue(progress, forKey: id)
            }
            return .end(id, trailers: trailers, streamDone: done)
        case .streamReset(let reset):
            guard streams.removeValue(forKey: reset.stream) != nil else { return nil }
            guard role == .client else { return .streamFailed(reset.stream, .reset(reset), slotFreed: false) }
            if let goAway, reset.stream > goAway.lastStreamID {
                return .streamFailed(reset.stream, .notProcessed(lastStreamID: goAway.lastStreamID, code: goAway.code),
                                     slotFreed: true)
            }
            return .streamFailed(reset.stream, .reset(reset), slotFreed: true)
        case .goAwayReceived(let lastStreamID, let code, _):
            // A server lets the client's streams finish; the session refuses new ones.
            guard role == .client else { return nil }
            goAway = (lastStreamID, code)
            goAwayUnreported = true
            return nil
        case .connectionError(let error):
            failure = error
            failingAll = .connection(error)
            return nil
        case .settingsAcknowledged, .pingAcknowledged:
            return nil
        }
    }
}
