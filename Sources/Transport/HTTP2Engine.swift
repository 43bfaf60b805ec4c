import HTTP

/// What the HTTP/2 server and client engines share: the session on its
/// channel (through `HTTP2ChannelPump`), the open streams, and everything a
/// stream asks of its engine once its head is out — body, end, reset,
/// writability, consumption. Subclasses turn session events into streams.
///
/// Flow control: DATA is reported consumed only when the stream's consumer
/// takes it; a stream is writable while its queued DATA is below the high
/// water mark and the channel is writable.
///
/// `@unchecked Sendable`: touched only on the channel's loop.
class HTTP2Engine: HTTPStreamDriver, @unchecked Sendable {
    let pump: HTTP2ChannelPump
    var session: HTTP2Session { pump.session }
    var channel: ByteChannel { pump.channel }
    /// Streams whose exchange is not finished on our side.
    var streams: [HTTP2StreamID: HTTPStream] = [:]
    /// The connection error, once the session reported one.
    var failure: TransportError?
    private let streamWriteHighWater: Int

    init(role: HTTP2Session.Role, configuration: HTTP2Configuration, channel: ByteChannel, streamWriteHighWater: Int) {
        self.streamWriteHighWater = streamWriteHighWater
        pump = HTTP2ChannelPump(session: HTTP2Session(role: role, configuration: configuration), channel: channel)
        pump.onEvents = { [unowned self] events in handle(events) }
        pump.afterFlush = { [unowned self] in
            for stream in streams.values { stream.writabilityMayHaveChanged() }
        }
    }

    /// Turns session events into stream events; overridden by each role.
    func handle(_ events: [HTTP2Event]) {}

    /// A stream left `streams`; the client role announces the free slot.
    func streamRemoved() {}

    // MARK: Channel side (`HTTPConnectionEngine`)

    func start(leftover: [UInt8]) {
        pump.received(leftover)
    }

    func received(_ bytes: [UInt8]) {
        pump.received(bytes)
    }

    func readEnded() {
        failAll(.peerClosed(during: .http2Streams))
        channel.close()
    }

    func channelWritable() {
        pump.flush()
    }

    func channelClosed(_ error: TransportError?) -> TransportError? {
        let reported = failure ?? error
        failAll(reported ?? .peerClosed(during: .http2Streams))
        return reported
    }

    func closeGracefully() {
        try? session.goAway()
        pump.scheduleFlush()
    }

    func abort() {
        failAll(.cancelled)
        channel.abort()
    }

    var activeStreamCount: Int { streams.count }

    func failAll(_ error: TransportError) {
        let open = streams.values
        streams.removeAll()
        for stream in open { stream.fail(error) }
    }

    // MARK: Session events both roles handle alike

    /// DATA for a stream: to its consumer, or consumed and dropped when no one will read it.
    func receiveData(_ id: HTTP2StreamID, _ bytes: [UInt8], dropUnread: Bool) {
        if let stream = streams[id], !(dropUnread && stream.handler == nil && stream.outbound == .ended) {
            stream.receive(.body(bytes))
        } else {
            session.consumed(stream: id, bytes: bytes.count)
        }
    }

    func receiveEnd(_ id: HTTP2StreamID, trailers: HTTPFields?) {
        streams[id]?.receive(.end(trailers: trailers))
        removeIfDone(id)
    }

    func connectionFailed(_ error: HTTP2ConnectionError) {
        failure = .http2Connection(error)
        failAll(.http2Connection(error))
    }

    /// Forgets a stream once both messages are complete.
    func removeIfDone(_ id: HTTP2StreamID) {
        guard let stream = streams[id], stream.inbound == .ended, stream.outbound == .ended else { return }
        streams[id] = nil
        streamRemoved()
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
            try session.sendData(stream: id, bytes: bytes, endStream: false)
        } catch {
            throw .http2Session(error)
        }
        pump.scheduleFlush()
    }

    func sendEnd(trailers: HTTPFields?, on stream: HTTPStream) throws(TransportError) -> HTTPFields? {
        let id = try id(stream)
        do {
            try session.sendTrailers(stream: id, trailers: trailers ?? HTTPFields())
        } catch {
            throw .http2Session(error)
        }
        stream.outboundEnded()
        removeIfDone(id)
        pump.scheduleFlush()
        // What went out: the peer decodes no connection-specific field, and names in lowercase.
        return trailers?.asSentOverHTTP2
    }

    func reset(_ stream: HTTPStream, code: HTTP2ErrorCode) {
        let id = HTTP2StreamID(stream.streamID)
        guard streams[id] === stream else { return }
        streams[id] = nil
        try? session.resetStream(id, code: code)
        pump.scheduleFlush()
        streamRemoved()
    }

    func isWritable(_ stream: HTTPStream) -> Bool {
        channel.isWritable && session.queuedBytes(stream: HTTP2StreamID(stream.streamID)) < streamWriteHighWater
    }

    func pendingOutboundBytes(_ stream: HTTPStream) -> Int {
        session.queuedBytes(stream: HTTP2StreamID(stream.streamID)) + channel.pendingWriteByteCount
    }

    func inboundWanted(_ stream: HTTPStream) {}

    func consumed(_ stream: HTTPStream, bytes: Int) {
        session.consumed(stream: HTTP2StreamID(stream.streamID), bytes: bytes)
        pump.scheduleFlush()
    }
}
