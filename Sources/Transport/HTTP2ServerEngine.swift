import HTTP

/// HTTP/2 on the server side of a channel: each stream the client opens
/// becomes an `HTTPServerStream`, delivered concurrently. A paused consumer
/// holds the client at its stream window without stalling sibling streams.
/// After a complete response, request DATA nobody reads is consumed and dropped.
final class HTTP2ServerEngine: HTTP2Engine, HTTPConnectionEngine, HTTPServerStreamDriver, @unchecked Sendable {
    private unowned let connection: HTTPServerConnection

    init(connection: HTTPServerConnection) {
        self.connection = connection
        super.init(role: .server, configuration: connection.configuration.http2, channel: connection.channel,
                   streamWriteHighWater: connection.configuration.streamWriteHighWater)
    }

    override func handle(_ events: [HTTP2Event]) {
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
                receiveData(id, bytes, dropUnread: true)
            case .streamEnded(let id, let trailers):
                receiveEnd(id, trailers: trailers)
            case .streamReset(let reset):
                streams.removeValue(forKey: reset.stream)?.fail(.streamReset(reset))
            case .connectionError(let error):
                connectionFailed(error)
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

    func sendHead(_ head: HTTPResponseHead, framing: HTTP1Framing?,
                  on stream: HTTPServerStream) throws(TransportError) -> (sent: HTTPResponseHead, wire: HeadDigest.WireForm) {
        let id = try id(stream)
        var head = head
        // HTTP/2 carries no reason phrase.
        head.version = .http2
        head.reason = ""
        do {
            try session.sendResponse(stream: id, head: head, endStream: false)
        } catch {
            throw .http2Session(error)
        }
        pump.scheduleFlush()
        return (head.asSentOverHTTP2, .http2Sent(response: head))
    }

    override func inboundWanted(_ stream: HTTPStream) {
        (stream as? HTTPServerStream)?.answerContinueIfOwed(automatic: connection.configuration.automaticContinue)
    }
}
