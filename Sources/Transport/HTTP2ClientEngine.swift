import HTTP

/// HTTP/2 on the client side of a channel: each `open` is a new stream on
/// the shared session. After the server's GOAWAY, streams it did not process
/// fail with `.goAway` and no new stream opens.
final class HTTP2ClientEngine: HTTP2Engine, HTTPClientEngine, @unchecked Sendable {
    private unowned let connection: HTTPClientConnection
    /// The server's GOAWAY, once received.
    private var goAway: (lastStreamID: HTTP2StreamID, code: HTTP2ErrorCode)?
    /// The owner asked to close: no new streams.
    private var closing = false

    init(connection: HTTPClientConnection) {
        self.connection = connection
        super.init(role: .client, configuration: connection.configuration.http2, channel: connection.channel,
                   streamWriteHighWater: connection.configuration.streamWriteHighWater)
    }

    var canOpenStream: Bool { goAway == nil && failure == nil && !closing && channel.isOpen }

    func open(_ head: HTTPRequestHead, framing: HTTP1Framing?,
              handler: @escaping (HTTPStreamEvent) -> Void) throws(TransportError) -> HTTPClientStream {
        if let failure { throw failure }
        guard canOpenStream else { throw .invalidState("the HTTP/2 connection is going away") }
        // Refused here only when the server's SETTINGS said no; before they arrive (a fresh
        // connection) the CONNECT goes out, and a server without RFC 8441 resets the stream.
        if let name = head.connectProtocol, head.method == "CONNECT", session.peerSettingsReceived,
           !session.peerAllowsExtendedConnect {
            throw .extendedConnectNotAllowed(protocol: name)
        }
        var head = head
        head.version = .http2
        // One value for an agreeing Content-Length list.
        head.fields = head.fields.collapsingContentLengthList
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
        // The head as the server decodes it (and so as recorded): no Host, no connection-specific field.
        let stream = HTTPClientStream(loop: channel.loop, streamID: Int(id), version: .http2, request: head.asSentOverHTTP2,
                                      requestWire: .http2Sent(request: head), connection: connection, driver: self)
        streams[id] = stream
        stream.setHandler(handler)
        if endStream { stream.outboundEnded() }
        pump.scheduleFlush()
        return stream
    }

    override func closeGracefully() {
        closing = true
        super.closeGracefully()
    }

    override func streamRemoved() {
        connection.deliverLater(.available)
    }

    override func handle(_ events: [HTTP2Event]) {
        for event in events {
            switch event {
            case .interimResponse(let id, let head, let decodedFields):
                streams[id]?.receive(.interimResponse(head, wire: .http2(fields: decodedFields)))
            case .responseHead(let id, let head, let decodedFields):
                (streams[id] as? HTTPClientStream)?.receiveResponse(head, wire: .http2(fields: decodedFields))
            case .data(let id, let bytes):
                receiveData(id, bytes, dropUnread: false)
            case .streamEnded(let id, let trailers):
                receiveEnd(id, trailers: trailers)
            case .streamReset(let reset):
                guard let stream = streams.removeValue(forKey: reset.stream) else { break }
                if let goAway, reset.stream > goAway.lastStreamID {
                    stream.fail(.goAway(lastStreamID: goAway.lastStreamID, code: goAway.code))
                } else {
                    stream.fail(.streamReset(reset))
                }
                streamRemoved()
            case .goAwayReceived(let lastStreamID, let code, _):
                goAway = (lastStreamID, code)
                for id in streams.keys where id > lastStreamID {
                    streams.removeValue(forKey: id)?.fail(.goAway(lastStreamID: lastStreamID, code: code))
                }
                connection.deliver(.goAway(lastStreamID: Int(lastStreamID), code: code))
            case .connectionError(let error):
                connectionFailed(error)
            case .requestHead, .settingsAcknowledged, .pingAcknowledged:
                break
            }
        }
    }
}
