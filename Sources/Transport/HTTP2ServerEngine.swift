import HTTP

/// HTTP/2 on the server side of a channel: each stream the client opens
/// becomes an `HTTPServerStream`. Received DATA counts against the client's
/// windows until the stream's consumer takes it, so a paused consumer holds
/// the client at its window without stalling sibling streams.
///
/// `@unchecked Sendable`: touched only on the channel's loop.
final class HTTP2ServerEngine: HTTPConnectionEngine, HTTPServerStreamDriver, @unchecked Sendable {
    private unowned let connection: HTTPServerConnection
    private let pump: HTTP2ChannelPump
    private var session: HTTP2Session { pump.session }
    private var channel: ByteChannel { pump.channel }
    /// Streams whose exchange is not finished on our side.
    private var streams: [HTTP2StreamID: HTTPServerStream] = [:]
    /// The connection error, once the session reported one.
    private var failure: TransportError?

    init(connection: HTTPServerConnection) {
        self.connection = connection
        pump = HTTP2ChannelPump(session: HTTP2Session(role: .server, configuration: connection.configuration.http2),
                                channel: connection.channel)
        pump.onEvents = { [unowned self] events in handle(events) }
        pump.afterFlush = { [unowned self] in
            for stream in streams.values { stream.writabilityMayHaveChanged() }
        }
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
        try? session.goAway()
        pump.scheduleFlush()
    }

    func abort() {
        failAll(.cancelled)
        channel.abort()
    }

    var activeStreamCount: Int { streams.count }

    private func failAll(_ error: TransportError) {
        let open = streams.values
        streams.removeAll()
        for stream in open { stream.fail(error) }
    }

    // MARK: Session events

    private func handle(_ events: [HTTP2Event]) {
        for (index, event) in events.enumerated() {
            switch event {
            case .requestHead(let id, let head, let decodedFields):
                let endsWithHead: Bool
                if index + 1 < events.count, case .streamEnded(id, nil) = events[index + 1] {
                    endsWithHead = true
                } else {
                    endsWithHead = false
                }
                open(id, head: head, wire: decodedFields, endsWithHead: endsWithHead)
            case .data(let id, let bytes):
                // After a complete response, a body nobody reads is consumed and dropped.
                if let stream = streams[id], stream.handler != nil || stream.outbound == .open {
                    stream.receive(.body(bytes))
                } else {
                    session.consumed(stream: id, bytes: bytes.count)
                }
            case .streamEnded(let id, let trailers):
                streams[id]?.receive(.end(trailers: trailers))
                removeIfDone(id)
            case .streamReset(let reset):
                streams.removeValue(forKey: reset.stream)?.fail(.streamReset(reset))
            case .connectionError(let error):
                failure = .http2Connection(error)
                failAll(.http2Connection(error))
            case .goAwayReceived, .settingsAcknowledged, .pingAcknowledged, .interimResponse, .responseHead:
                break
            }
        }
    }

    private func open(_ id: HTTP2StreamID, head: HTTPRequestHead, wire: [HTTPField], endsWithHead: Bool) {
        let framing: HTTP1Framing
        if endsWithHead {
            framing = .none
        } else if let length = head.fields["content-length"].flatMap({ Int($0) }), length >= 0 {
            framing = .contentLength(length)
        } else {
            framing = .chunked
        }
        let expectsContinue = head.fields["expect"].map { HTTPField.lowercaseASCII($0) == "100-continue" } ?? false
        let stream = HTTPServerStream(loop: channel.loop, streamID: Int(id), version: .http2, request: head,
                                      requestWire: .http2(fields: wire), requestBodyFraming: framing,
                                      expectsContinue: expectsContinue, connection: connection, driver: self)
        streams[id] = stream
        connection.deliver(.stream(stream))
        stream.answerContinueIfOwed(automatic: connection.configuration.automaticContinue)
    }

    private func removeIfDone(_ id: HTTP2StreamID) {
        guard let stream = streams[id], stream.inbound == .ended, stream.outbound == .ended else { return }
        streams[id] = nil
    }

    // MARK: Stream side

    private func id(_ stream: HTTPStream) throws(TransportError) -> HTTP2StreamID {
        let id = HTTP2StreamID(stream.streamID)
        guard streams[id] === stream else { throw stream.failure ?? .invalidState("stream \(id) is over") }
        return id
    }

    func sendHead(_ head: HTTPResponseHead, framing: HTTP1Framing?,
                  on stream: HTTPServerStream) throws(TransportError) -> HeadDigest.WireForm {
        let id = try id(stream)
        var head = head
        head.version = .http2
        do {
            try session.sendResponse(stream: id, head: head, endStream: false)
        } catch {
            throw .http2Session(error)
        }
        pump.scheduleFlush()
        return .http2Sent(response: head)
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
    }

    func isWritable(_ stream: HTTPStream) -> Bool {
        channel.isWritable
            && session.queuedBytes(stream: HTTP2StreamID(stream.streamID)) < connection.configuration.streamWriteHighWater
    }

    func pendingOutboundBytes(_ stream: HTTPStream) -> Int {
        session.queuedBytes(stream: HTTP2StreamID(stream.streamID)) + channel.pendingWriteByteCount
    }

    func inboundWanted(_ stream: HTTPStream) {
        (stream as? HTTPServerStream)?.answerContinueIfOwed(automatic: connection.configuration.automaticContinue)
    }

    func consumed(_ stream: HTTPStream, bytes: Int) {
        session.consumed(stream: HTTP2StreamID(stream.streamID), bytes: bytes)
        pump.scheduleFlush()
    }
}
