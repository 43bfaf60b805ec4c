import HTTP

/// HTTP/2 on the server side of a channel: each stream the client opens
/// becomes an `HTTPServerStream`, delivered concurrently. A paused consumer
/// holds the client at its stream window without stalling sibling streams.
/// After a complete response, request DATA nobody reads is consumed and
/// dropped. The connection logic is `HTTP2ConnectionLayer`'s (see `HTTP2Driver`).
final class HTTP2ServerDriver: HTTP2Driver, HTTPConnectionDriver, HTTPServerStreamDriver, @unchecked Sendable {
    private unowned let connection: HTTPServerConnection

    init(connection: HTTPServerConnection) {
        self.connection = connection
        super.init(role: .server, configuration: connection.configuration.http2, channel: connection.channel,
                   streamWriteHighWater: connection.configuration.streamWriteHighWater)
    }

    override func openStream(_ id: HTTP2StreamID, head: HTTPRequestHead, wire: [HTTPField], endsWithHead: Bool) {
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

    override func refusedStream(_ id: HTTP2StreamID, head: HTTPRequestHead?, reason: String) {
        connection.deliver(.refusedStream(streamID: Int(id), request: head, reason: reason))
    }

    func sendHead(_ head: HTTPResponseHead, framing: HTTP1Framing?,
                  on stream: HTTPServerStream) throws(TransportError) -> (sent: HTTPResponseHead, wire: HeadDigest.WireForm) {
        let id = try id(stream)
        let sent: (head: HTTPResponseHead, sent: [HTTPField])
        do {
            sent = try layer.sendResponseHead(head, on: id)
        } catch {
            throw TransportError(error)
        }
        schedulePump()
        // Recorded from the very list that went out.
        return (sent.head.decodedFromHTTP2(sent.sent), .http2(fields: sent.sent))
    }

    override func inboundWanted(_ stream: HTTPStream) {
        (stream as? HTTPServerStream)?.answerContinueIfOwed(automatic: connection.configuration.automaticContinue)
    }
}
