import HTTP

/// HTTP/2 on the client side of a channel: each `open` is a new stream on
/// the shared session. Received DATA counts against the server's windows
/// until the stream's consumer takes it.
///
/// `@unchecked Sendable`: touched only on the channel's loop.
final class HTTP2ClientEngine: HTTPClientEngine, HTTPStreamDriver, @unchecked Sendable {
    private unowned let connection: HTTPClientConnection
    private let pump: HTTP2ChannelPump
    private var session: HTTP2Session { pump.session }
    private var channel: ByteChannel { pump.channel }
    private var streams: [HTTP2StreamID: HTTPClientStream] = [:]
    /// The server's GOAWAY, once received.
    private var goAway: (lastStreamID: HTTP2StreamID, code: HTTP2ErrorCode)?
    /// The owner asked to close: no new streams.
    private var closing = false
    /// The connection error, once the session reported one.
    private var failure: TransportError?

    init(connection: HTTPClientConnection) {
        self.connection = connection
        pump = HTTP2ChannelPump(session: HTTP2Session(role: .client, configuration: connection.configuration.http2),
                                channel: connection.channel)
        pump.onEvents = { [unowned self] events in handle(events) }
        pump.afterFlush = { [unowned self] in
            for stream in streams.values { stream.writabilityMayHaveChanged() }
        }
    }

    var canOpenStream: Bool { goAway == nil && failure == nil && !closing && channel.isOpen }

    var activeStreamCount: Int { streams.count }

    func open(_ head: HTTPRequestHead, framing: HTTP1Framing?,
              handler: @escaping (HTTPStreamEvent) -> Void) throws(TransportError) -> HTTPClientStream {
        if let failure { throw failure }
        guard canOpenStream else { throw .invalidState("the HTTP/2 connection is going away") }
        var head = head
        head.version = .http2
        let endStream: Bool
        switch framing {
        case .none?, .contentLength(0)?: endStream = true
        case nil: endStream = !head.fields.declareRequestBody
        case .contentLength?, .chunked?, .closeDelimited?, .tunnel?: endStream = false
        }
        let id: HTTP2StreamID
        do {
            id = try session.sendRequest(head, endStream: endStream)
        } catch {
            throw .http2Session(error)
        }
        let stream = HTTPClientStream(loop: channel.loop, streamID: Int(id), version: .http2, request: head,
                                      requestWire: .http2Sent(request: head), driver: self)
        streams[id] = stream
        stream.setHandler(handler)
        if endStream { stream.outboundEnded() }
        pump.scheduleFlush()
        return stream
    }

    // MARK: Channel side

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
        closing = true
        try? session.goAway()
        pump.scheduleFlush()
    }

    func abort() {
        failAll(.cancelled)
        channel.abort()
    }

    private func failAll(_ error: TransportError) {
        let open = streams.values
        streams.removeAll()
        for stream in open { stream.fail(error) }
    }

    // MARK: Session events

    private func handle(_ events: [HTTP2Event]) {
        for event in events {
            switch event {
            case .interimResponse(let id, let head, let decodedFields):
                streams[id]?.receive(.interimResponse(head, wire: .http2(fields: decodedFields)))
            case .responseHead(let id, let head, let decodedFields):
                streams[id]?.receiveResponse(head, wire: .http2(fields: decodedFields))
            case .data(let id, let bytes):
                if let stream = streams[id] {
                    stream.receive(.body(bytes))
                } else {
                    session.consumed(stream: id, bytes: bytes.count)
                }
            case .streamEnded(let id, let trailers):
                streams[id]?.receive(.end(trailers: trailers))
                removeIfDone(id)
            case .streamReset(let reset):
                guard let stream = streams.removeValue(forKey: reset.stream) else { break }
                if let goAway, reset.stream > goAway.lastStreamID {
                    stream.fail(.goAway(lastStreamID: goAway.lastStreamID, code: goAway.code))
                } else {
                    stream.fail(.streamReset(reset))
                }
                connection.deliver(.available)
            case .goAwayReceived(let lastStreamID, let code, _):
                goAway = (lastStreamID, code)
                for id in streams.keys where id > lastStreamID {
                    streams.removeValue(forKey: id)?.fail(.goAway(lastStreamID: lastStreamID, code: code))
                }
                connection.deliver(.goAway(lastStreamID: Int(lastStreamID), code: code))
            case .connectionError(let error):
                failure = .http2Connection(error)
                failAll(.http2Connection(error))
            case .requestHead, .settingsAcknowledged, .pingAcknowledged:
                break
            }
        }
    }

    /// Forgets a stream once both messages are complete and says a slot is free.
    private func removeIfDone(_ id: HTTP2StreamID) {
        guard let stream = streams[id], stream.inbound == .ended, stream.outbound == .ended else { return }
        streams[id] = nil
        connection.deliverLater(.available)
    }

    // MARK: Stream side

    private func id(_ stream: HTTPStream) throws(TransportError) -> HTTP2StreamID {
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

    func sendEnd(trailers: HTTPFields?, on stream: HTTPStream) throws(TransportError) {
        let id = try id(stream)
        do {
            try session.sendTrailers(stream: id, trailers: trailers ?? HTTPFields())
        } catch {
            throw .http2Session(error)
        }
        stream.outboundEnded()
        removeIfDone(id)
        pump.scheduleFlush()
    }

    func reset(_ stream: HTTPStream, code: HTTP2ErrorCode) {
        let id = HTTP2StreamID(stream.streamID)
        guard streams[id] === stream else { return }
        streams[id] = nil
        try? session.resetStream(id, code: code)
        pump.scheduleFlush()
        connection.deliverLater(.available)
    }

    func isWritable(_ stream: HTTPStream) -> Bool {
        channel.isWritable
            && session.queuedBytes(stream: HTTP2StreamID(stream.streamID)) < connection.configuration.streamWriteHighWater
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
