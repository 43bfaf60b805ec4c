import HTTP
import Wire

/// What the HTTP/2 server and client drivers share: a thin driver of
/// `HTTP2ConnectionLayer`, which holds the connection logic (flushing,
/// backpressure, flow control, GOAWAY, failures, lingering close). The
/// driver feeds it the channel's events and the streams' calls, and carries
/// out its steps: writes, stream events to the `HTTPStream` objects, the
/// linger timer, closing. Subclasses open the role's streams.
///
/// Invariants: `streams` holds the stream object of exactly the streams open
/// in the layer (every removal the layer reports removes the object); a
/// stream's consumer taking DATA reports it to the layer (`consumed`), which
/// is what lets the peer send more.
///
/// `@unchecked Sendable`: touched only on the channel's loop.
class HTTP2Driver: HTTPStreamDriver, LoopWork, @unchecked Sendable {
    let layer: HTTP2ConnectionLayer
    let channel: ByteChannel
    /// The objects of the streams open in the layer.
    var streams = HTTP2StreamMap<HTTPStream>()
    private var pumpScheduled = false
    /// True while `runLayer` runs: a change made meanwhile is seen by its next step.
    private var running = false
    /// True while `runLayer` runs inside an owner's call (`abort`): what the
    /// steps announce to the connection's owner must then wait a turn.
    private var inOwnersCall = false

    /// How long a finished session waits for the peer's FIN before closing.
    static let lingerTimeout: Duration = .seconds(2)

    init(role: HTTP2Session.Role, configuration: HTTP2Configuration, channel: ByteChannel, streamWriteHighWater: Int) {
        self.channel = channel
        layer = HTTP2ConnectionLayer(role: role, configuration: configuration, streamWriteHighWater: streamWriteHighWater)
    }

    // MARK: Role hooks

    /// Server: a request opened stream `id`.
    func openStream(_ id: HTTP2StreamID, head: HTTPRequestHead, wire: [HTTPField], endsWithHead: Bool) {}
    /// Server: a request refused before it became a stream (its header list too large).
    func refusedStream(_ id: HTTP2StreamID, head: HTTPRequestHead?, reason: String) {}
    /// Client: a response head (interim or final) for stream `id`.
    func receiveResponse(_ id: HTTP2StreamID, head: HTTPResponseHead, wire: [HTTPField], interim: Bool) {}
    /// Client: the server's GOAWAY.
    func goAwayReceived(lastStreamID: HTTP2StreamID, code: HTTP2ErrorCode) {}
    /// A stream left `streams`; the client role announces the free slot.
    /// `inStep`: it happened in one of the layer's own steps, outside any
    /// owner's call, so the announcement may go at once.
    func streamRemoved(inStep: Bool) {}

    // MARK: Channel side (`HTTPConnectionDriver`)

    func start(leftover: [UInt8]) {
        layer.receive(leftover)
        runLayer()
    }

    func received(_ bytes: [UInt8]) {
        layer.receive(bytes)
        runLayer()
    }

    func readEnded() {
        layer.readEnded()
        runLayer()
    }

    func channelWritable() {
        layer.channelWritable()
        runLayer()
    }

    func channelClosed(_ error: TransportError?) -> TransportError? {
        let reported = layer.channelClosed().map(TransportError.http2Connection) ?? error
        while case .streamFailed(let id, _, _) = layer.next(channelWritable: false) {
            streams.removeValue(forKey: id)?.fail(reported ?? .peerClosed(during: .http2Streams))
        }
        return reported
    }

    func closeGracefully() {
        layer.stop()
        schedulePump()
    }

    func abort() {
        layer.abort()
        let outer = inOwnersCall
        inOwnersCall = true
        runLayer()
        inOwnersCall = outer
    }

    var activeStreamCount: Int { streams.count }

    // MARK: The layer's steps

    /// Runs the layer on the next loop turn (the calls of one turn make one
    /// flush). Nothing to schedule while `runLayer` runs: the stream's call
    /// came from one of its steps, and it asks the layer again once that call returned.
    func schedulePump() {
        guard !pumpScheduled, !running else { return }
        pumpScheduled = true
        // The driver itself, not a closure: scheduled once per stream opened.
        channel.loop.execute(self)
    }

    /// The pump `schedulePump` scheduled (the one piece of `LoopWork` a driver has).
    func runOnLoop() {
        pumpScheduled = false
        runLayer()
    }

    /// Carries out the layer's steps until it idles.
    func runLayer() {
        let outer = running
        running = true
        defer { running = outer }
        while true {
            switch layer.next(channelWritable: channel.isOpen && channel.isWritable) {
            case .idle:
                return
            case .write(let bytes):
                channel.write(bytes)
            case .requestHead(let id, let head, let wire, let endsWithHead):
                openStream(id, head: head, wire: wire, endsWithHead: endsWithHead)
            case .requestRefused(let id, let head, let reason):
                refusedStream(id, head: head, reason: reason)
            case .interimResponse(let id, let head, let wire):
                receiveResponse(id, head: head, wire: wire, interim: true)
            case .responseHead(let id, let head, let wire):
                receiveResponse(id, head: head, wire: wire, interim: false)
            case .body(let id, let bytes):
                if let stream = streams[id], !(stream.handler == nil && layer.dropsUnreadBody(id)) {
                    stream.receive(.body(bytes))
                } else {
                    layer.consumed(id, bytes: bytes.count)
                }
            case .end(let id, let trailers, let streamDone):
                streams[id]?.receive(.end(trailers: trailers))
                if streamDone { remove(id, inStep: !inOwnersCall) }
            case .streamFailed(let id, let failure, let slotFreed):
                streams.removeValue(forKey: id)?.fail(TransportError(failure))
                if slotFreed { streamRemoved(inStep: !inOwnersCall) }
            case .goAwayReceived(let lastStreamID, let code):
                goAwayReceived(lastStreamID: lastStreamID, code: code)
            case .streamsMayWrite:
                for stream in streams.values { stream.writabilityMayHaveChanged() }
            case .shutdownAndLinger:
                channel.shutdownWrite()
                channel.loop.schedule(after: HTTP2Driver.lingerTimeout) { [self] in
                    if layer.lingerTimerFired(), channel.isOpen { channel.close() }
                }
            case .close:
                channel.close()
            case .abort:
                channel.abort()
            }
        }
    }

    /// Forgets a stream both of whose messages are complete.
    private func remove(_ id: HTTP2StreamID, inStep: Bool) {
        guard streams.removeValue(forKey: id) != nil else { return }
        streamRemoved(inStep: inStep)
    }

    // MARK: Stream side

    /// The stream's id, if the stream is still ours.
    func id(_ stream: HTTPStream) throws(TransportError) -> HTTP2StreamID {
        let id = HTTP2StreamID(stream.streamID)
        guard streams[id] === stream else { throw stream.failure ?? .invalidState("stream \(id) is over") }
        return id
    }

    func sendBody(_ bytes: [UInt8], on stream: HTTPStream) throws(TransportError) {
        let id = try id(stream)
        do {
            try layer.sendBody(bytes, on: id)
        } catch {
            throw TransportError(error)
        }
        schedulePump()
    }

    func sendEnd(trailers: HTTPFields?, on stream: HTTPStream) throws(TransportError) -> HTTPFields? {
        let id = try id(stream)
        let done: Bool
        do {
            done = try layer.sendEnd(trailers: trailers, on: id)
        } catch {
            throw TransportError(error)
        }
        stream.outboundEnded()
        if done { remove(id, inStep: false) }
        schedulePump()
        // What went out: the peer decodes no connection-specific field, and names in lowercase.
        return trailers?.asSentOverHTTP2
    }

    func reset(_ stream: HTTPStream, code: HTTP2ErrorCode) {
        let id = HTTP2StreamID(stream.streamID)
        guard streams[id] === stream else { return }
        streams[id] = nil
        layer.reset(id, code: code)
        schedulePump()
        streamRemoved(inStep: false)
    }

    func isWritable(_ stream: HTTPStream) -> Bool {
        channel.isWritable && layer.streamAcceptsData(HTTP2StreamID(stream.streamID))
    }

    func pendingOutboundBytes(_ stream: HTTPStream) -> Int {
        layer.queuedBytes(HTTP2StreamID(stream.streamID)) + channel.pendingWriteByteCount
    }

    func inboundWanted(_ stream: HTTPStream) {}

    func consumed(_ stream: HTTPStream, bytes: Int) {
        layer.consumed(HTTP2StreamID(stream.streamID), bytes: bytes)
        schedulePump()
    }
}
