import HTTP
import Wire

/// One request/response exchange on an HTTP/1.1 connection or one HTTP/2
/// stream, the same to its owner whatever the version: inbound parts arrive
/// as `HTTPStreamEvent`s, outbound parts go out through `sendBody` and
/// `sendEnd`, and backpressure works both ways.
///
/// Inbound flow control: `pauseInbound()` stops `.body` (and, on a client,
/// response head) events until `resumeInbound()`. Underneath, HTTP/1.1 stops
/// reading the socket (TCP pushes back on the peer) and HTTP/2 holds received
/// DATA without reporting it consumed, so the peer stops at its window. A
/// stream that has no handler yet counts as paused.
///
/// Invariant: an `.end` that the driver already parsed is never held by a
/// pause once every event before it was delivered. It carries no body, so
/// holding it relieves no pressure; it would only part the end of a message
/// from its last bytes, and a consumer relaying the message (the proxy)
/// would send that end loop turns later — after a peer that already had
/// every byte may have hung up, failing a message that had fully crossed.
///
/// Outbound flow control: `isWritable` turns false when bytes pile up
/// (HTTP/1.1: the channel's pending bytes reached its high watermark;
/// HTTP/2: the stream's queued DATA reached `streamWriteHighWater`, or the
/// channel is blocked); `.writable` follows once it is true again.
/// Writing while not writable still works; it only queues more.
///
/// Subclasses: `HTTPServerStream` (answers a received request) and
/// `HTTPClientStream` (sent a request, receives the response).
///
/// `@unchecked Sendable`: the `let` properties are immutable; everything else
/// is touched only on `loop` (each public method says so and checks it).
public class HTTPStream: @unchecked Sendable {
    /// The loop of the connection carrying the stream.
    public let loop: EventLoop
    /// HTTP/1.1: the exchange's number on its connection (1, 2, …); HTTP/2: the stream identifier.
    public let streamID: Int
    /// `.http2`, or the HTTP/1.x version of the request line.
    public let version: HTTPVersion
    /// The request head: as received (server) or as asked to send (client).
    public let request: HTTPRequestHead
    /// The request's header section as it crossed the wire: received (server)
    /// or sent (client). The input of the exact head digest.
    public let requestWire: HeadDigest.WireForm

    /// How far one direction of the exchange got.
    enum Progress {
        case open
        /// The message ended (the peer's, as the protocol driver read it; or ours, as sent).
        case ended
    }

    /// The peer's message, as the driver parsed it (events may still be held).
    var inbound = Progress.open
    /// Our message.
    var outbound = Progress.open
    /// The driver; nil once the stream finished (breaks the reference cycle).
    var driver: (any HTTPStreamDriver)?
    var handler: ((HTTPStreamEvent) -> Void)?
    /// Inbound events not yet delivered (paused, no handler yet, or a drain pending).
    var held: [HTTPStreamEvent] = []
    var inboundPaused = false
    var drainScheduled = false
    /// `isWritable` was seen false: deliver `.writable` when it turns true.
    var awaitingWritable = false
    /// Set once the stream failed or was reset; no events after that.
    public private(set) var failure: TransportError?
    /// Whether the owner knows of `failure`: it was delivered as `.failed`, or
    /// the owner caused it (`reset`). A stream that fails before its owner
    /// installed a handler reports the failure when the handler comes.
    private var failureKnown = false

    init(loop: EventLoop, streamID: Int, version: HTTPVersion, request: HTTPRequestHead,
         requestWire: HeadDigest.WireForm, driver: any HTTPStreamDriver) {
        self.loop = loop
        self.streamID = streamID
        self.version = version
        self.request = request
        self.requestWire = requestWire
        self.driver = driver
    }

    // MARK: Owner's API

    /// Installs the handler; events held so far follow on a later loop turn.
    /// Called only on the loop.
    public func setHandler(_ handler: @escaping (HTTPStreamEvent) -> Void) {
        loop.preconditionOnLoop()
        guard driver != nil else {
            // Failed before anyone listened (a request head and its malformed
            // body in one read): the owner must still learn it, or it would
            // wait for the rest of a message that never comes.
            if let failure, !failureKnown {
                failureKnown = true
                let late = LoopBound(handler, on: loop)
                loop.execute { late.value(.failed(failure)) }
            }
            return
        }
        self.handler = handler
        scheduleDrain()
    }

    /// Stops inbound body events until `resumeInbound()` (an `.end` with
    /// nothing held before it still comes). Called only on the loop.
    public func pauseInbound() {
        loop.preconditionOnLoop()
        inboundPaused = true
    }

    /// Delivers held events (on a later loop turn) and lets the peer send
    /// again. Called only on the loop.
    public func resumeInbound() {
        loop.preconditionOnLoop()
        guard inboundPaused else { return }
        inboundPaused = false
        scheduleDrain()
    }

    /// Whether more outbound bytes can go without piling up; when false, a
    /// `.writable` event follows once they can. Read only on the loop.
    public var isWritable: Bool {
        loop.preconditionOnLoop()
        guard outbound == .open, let driver else { return false }
        let writable = driver.isWritable(self)
        if !writable { awaitingWritable = true }
        return writable
    }

    /// Outbound bytes written on this stream and not yet taken by the kernel
    /// (see `isWritable`); for metrics and tests. Read only on the loop.
    public var pendingOutboundBytes: Int {
        loop.preconditionOnLoop()
        return driver?.pendingOutboundBytes(self) ?? 0
    }

    /// Sends body bytes of our message (empty input does nothing, whatever
    /// the state; nor does a message that has no body by rule,
    /// `dropsOutboundBody`: a response to HEAD, a 204 or a 304). Throws
    /// `.invalidState` after the end or a failure, and the driver's error
    /// when the bytes break the message's framing. Called only on the loop.
    public func sendBody(_ bytes: [UInt8]) throws(TransportError) {
        loop.preconditionOnLoop()
        guard !bytes.isEmpty, !dropsOutboundBody else { return }
        let driver = try writableDriver("body")
        try driver.sendBody(bytes, on: self)
        if !driver.isWritable(self) { awaitingWritable = true }
    }

    /// Ends our message, with trailers when given, and returns the trailers
    /// that went out: HTTP/1.x carries them only in a chunked message, so on
    /// one that is not (a `Content-Length` or close-delimited body, an
    /// HTTP/1.0 peer) they are dropped and nil comes back — the caller
    /// records what was sent, not what it asked for. Called only on the loop.
    @discardableResult
    public func sendEnd(trailers: HTTPFields? = nil) throws(TransportError) -> HTTPFields? {
        loop.preconditionOnLoop()
        let driver = try writableDriver("end of message")
        return try driver.sendEnd(trailers: trailers, on: self)
    }

    /// Abandons the exchange: HTTP/2 sends RST_STREAM with `code`; HTTP/1.1
    /// resets the whole connection (it cannot abandon one message and go on).
    /// No event follows. Called only on the loop.
    public func reset(code: HTTP2ErrorCode = .cancel) {
        loop.preconditionOnLoop()
        guard !hasFailed, let driver else { return }
        failure = .cancelled
        failureKnown = true
        release()
        driver.reset(self, code: code)
    }

    /// True once both messages ended and every event was delivered, or the stream failed. Read only on the loop.
    public var isFinished: Bool { driver == nil }

    func writableDriver(_ what: String) throws(TransportError) -> any HTTPStreamDriver {
        if let failure { throw failure }
        guard outbound == .open, let driver else { throw .invalidState("\(what) after the message ended") }
        return driver
    }

    // MARK: Driver's side

    /// An inbound part from the driver: delivered now if the consumer takes
    /// it, else held. Called by drivers from channel events or their own
    /// loop turns, never inside an owner's call.
    func receive(_ event: HTTPStreamEvent) {
        guard !hasFailed else { return }
        if case .end = event { inbound = .ended }
        if wantsInbound || (event.isEnd && handler != nil && held.isEmpty && !hasFailed) {
            deliver(event)
        } else {
            held.append(event)
        }
    }

    /// Whether the consumer takes inbound events now.
    /// Whether `failure` is set; reads its tag only, without copying the
    /// error out as `failure == nil` does on every event.
    private var hasFailed: Bool {
        if case .none = failure { return false }
        return true
    }

    var wantsInbound: Bool { handler != nil && !inboundPaused && held.isEmpty && !hasFailed }

    /// The driver marks our message ended (it wrote the end, or the head ended it).
    func outboundEnded() {
        outbound = .ended
        finishIfComplete()
    }

    /// Fails the stream: held events are dropped and `.failed` is delivered
    /// (at once when a handler is installed). Ignored once failed or reset.
    ///
    /// A stream whose two messages had both ended is not failed: everything
    /// of it already crossed, and only the delivery of held inbound events to
    /// a paused consumer was pending. The connection closing then (a client
    /// that hangs up once it has the whole response) changes nothing, so the
    /// held events are handed over and the stream finishes as it would have.
    func fail(_ error: TransportError) {
        guard !hasFailed, driver != nil else { return }
        if inbound == .ended, outbound == .ended, handler != nil {
            let pending = held
            held.removeAll()
            for event in pending where handler != nil { deliver(event) }
            release()
            return
        }
        failure = error
        held.removeAll()
        let handler = self.handler
        failureKnown = handler != nil
        release()
        handler?(.failed(error))
    }

    /// Called by a driver when writing may have become possible again.
    func writabilityMayHaveChanged() {
        guard awaitingWritable, outbound == .open, let driver, driver.isWritable(self) else { return }
        awaitingWritable = false
        handler?(.writable)
    }

    private func deliver(_ event: HTTPStreamEvent) {
        if case .body(let bytes) = event { driver?.consumed(self, bytes: bytes.count) }
        handler?(event)
        if case .end = event { finishIfComplete() }
    }

    /// Whether the driver must hear of the consumer's demand only on a later
    /// turn, after the owner's call finished: a server stream that owes a
    /// `100 Continue` (the owner may still pause or answer first).
    var defersInboundWanted: Bool { false }

    /// True when our message has no body by rule whatever its fields say (a
    /// response to HEAD, a 204, a 304: `HTTPServerStream`), so `sendBody`
    /// drops the bytes instead of writing DATA an HTTP/2 peer resets the
    /// stream for, or bytes an HTTP/1.1 peer would read as the next response.
    var dropsOutboundBody: Bool { false }

    /// Drains held events on a later loop turn (they must not reach the
    /// handler inside the owner's call). With nothing held and nothing
    /// deferred there is nothing to deliver, so the driver hears at once
    /// that the consumer wants more: `inboundWanted` then never delivers
    /// inline (it schedules), and a loop turn per stream is saved.
    private func scheduleDrain() {
        guard !drainScheduled else { return }
        if held.isEmpty, !defersInboundWanted {
            if wantsInbound, let driver { driver.inboundWanted(self) }
            return
        }
        drainScheduled = true
        loop.execute { [self] in drain() }
    }

    /// Delivers held events while the consumer takes them, then tells the
    /// driver it wants more.
    private func drain() {
        drainScheduled = false
        // An `.end` is always the last held event: first means nothing is left before it.
        while let next = held.first, handler != nil, !hasFailed, !inboundPaused || next.isEnd {
            deliver(held.removeFirst())
        }
        if wantsInbound, let driver { driver.inboundWanted(self) }
    }

    /// Drops the driver and the handler once nothing more can happen.
    private func finishIfComplete() {
        if inbound == .ended && outbound == .ended && held.isEmpty { release() }
    }

    /// Ends the stream silently: no event follows (the driver is done with it,
    /// for example after handing the connection over to a tunnel).
    func release() {
        driver = nil
        handler = nil
        held.removeAll()
    }
}
