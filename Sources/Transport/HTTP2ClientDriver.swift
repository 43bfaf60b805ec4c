import HTTP

/// HTTP/2 on the client side of a channel: each `open` is a new stream on
/// the shared session. After the server's GOAWAY, streams it did not process
/// fail with `.goAway` and no new stream opens. The connection logic is
/// `HTTP2ConnectionLayer`'s (see `HTTP2Driver`).
final class HTTP2ClientDriver: HTTP2Driver, HTTPClientDriver, @unchecked Sendable {
    private unowned let connection: HTTPClientConnection

    init(connection: HTTPClientConnection) {
        self.connection = connection
        super.init(role: .client, configuration: connection.configuration.http2, channel: connection.channel,
                   streamWriteHighWater: connection.configuration.streamWriteHighWater)
    }

    var canOpenStream: Bool { layer.canOpenStream && channel.isOpen }

    func open(_ head: HTTPRequestHead, framing: HTTP1Framing?,
              handler: @escaping (HTTPStreamEvent) -> Void) throws(TransportError) -> HTTPClientStream {
        guard channel.isOpen || layer.failure != nil else { throw .invalidState(HTTP2LayerError.goingAway.description) }
        let opened: (id: HTTP2StreamID, head: HTTPRequestHead, endStream: Bool, sent: [HTTPField])
        do {
            opened = try layer.openStream(head, framing: framing)
        } catch {
            throw TransportError(error)
        }
        // The head as the server decodes the list that went out (and so as
        // recorded): no Host, no connection-specific field.
        let stream = HTTPClientStream(loop: channel.loop, streamID: Int(opened.id), version: .http2,
                                      request: .decodedFromHTTP2(opened.sent), requestWire: .http2(fields: opened.sent),
                                      connection: connection, driver: self)
        streams[opened.id] = stream
        stream.setHandler(handler)
        if opened.endStream { stream.outboundEnded() }
        schedulePump()
        return stream
    }

    override func streamRemoved(inStep: Bool) {
        connection.announceAvailable(inStep: inStep)
    }

    override func receiveResponse(_ id: HTTP2StreamID, head: HTTPResponseHead, wire: [HTTPField], interim: Bool) {
        if interim {
            streams[id]?.receive(.interimResponse(head, wire: .http2(fields: wire)))
        } else {
            (streams[id] as? HTTPClientStream)?.receiveResponse(head, wire: .http2(fields: wire))
        }
    }

    override func goAwayReceived(lastStreamID: HTTP2StreamID, code: HTTP2ErrorCode) {
        connection.deliver(.goAway(lastStreamID: Int(lastStreamID), code: code))
    }
}
