import HTTP
import Wire

/// HTTP/1.1 on the client side of a channel: one exchange at a time (see
/// `HTTPClientConnection`). Reading follows demand as on the server side: the
/// parser is asked for events only while the stream wants them, and the
/// channel reads only when the parser needs bytes (or, between exchanges, to
/// notice the server closing).
///
/// `@unchecked Sendable`: touched only on the channel's loop.
final class HTTP1ClientEngine: HTTPClientEngine, HTTPStreamDriver, @unchecked Sendable {
    /// Where the connection is.
    enum Phase {
        /// Requests may be sent (one at a time).
        case open
        /// The current exchange is the last one (either side said close, or the owner did).
        case lastExchange
        case closed
    }

    /// The request in flight.
    final class Exchange {
        let stream: HTTPClientStream
        /// Our request allows another after it.
        let requestKeepAlive: Bool
        /// The final response allows another after it; nil until it arrived.
        var responseKeepAlive: Bool?

        init(stream: HTTPClientStream, requestKeepAlive: Bool) {
            self.stream = stream
            self.requestKeepAlive = requestKeepAlive
        }
    }

    private unowned let connection: HTTPClientConnection
    private let channel: ByteChannel
    private var parser: HTTP1Parser
    private var serializer = HTTP1Serializer()
    private var phase = Phase.open
    private var exchange: Exchange?
    private var nextStreamID = 1
    private var pumpScheduled = false
    private var peerEnded = false
    /// What made the connection fail, reported with `.closed`.
    private var failure: TransportError?

    init(connection: HTTPClientConnection) {
        self.connection = connection
        self.channel = connection.channel
        self.parser = HTTP1Parser(parsing: .response, limits: connection.configuration.http1Limits)
    }

    var canOpenStream: Bool {
        if case .open = phase { return exchange == nil }
        return false
    }

    var activeStreamCount: Int { exchange == nil ? 0 : 1 }

    // MARK: Opening

    func open(_ head: HTTPRequestHead, framing: HTTP1Framing?,
              handler: @escaping (HTTPStreamEvent) -> Void) throws(TransportError) -> HTTPClientStream {
        guard canOpenStream else {
            throw .invalidState(exchange == nil ? "the HTTP/1.1 connection is closing" : "the HTTP/1.1 connection is busy")
        }
        var head = head
        if head.version == .http2 { head.version = .http1_1 }
        if !head.fields.contains("host"), let authority = head.authority { head.fields.append("Host", authority) }
        let serialized: HTTP1SerializedHead
        do {
            serialized = try serializer.writeRequestHead(head, framing: framing)
        } catch {
            throw .http1Serialize(error)
        }
        channel.write(serialized.bytes)
        parser.expectResponse(to: head.method)
        head.fields = serialized.fields
        let stream = HTTPClientStream(loop: channel.loop, streamID: nextStreamID, version: head.version, request: head,
                                      requestWire: .http1(head: Array(serialized.rawHead)), driver: self)
        nextStreamID += 1
        let keepAlive = head.version == .http1_1 && !serialized.fields.requestsClose
        exchange = Exchange(stream: stream, requestKeepAlive: keepAlive)
        if !keepAlive { phase = .lastExchange }
        stream.setHandler(handler)
        if !serialized.framing.allowsBody {
            _ = try? serializer.writeEnd()
            stream.outboundEnded()
        }
        schedulePump()
        return stream
    }

    // MARK: Channel side

    func start(leftover: [UInt8]) {
        parser.feed(leftover)
        pump()
    }

    func received(_ bytes: [UInt8]) {
        guard !isClosed else { return }
        parser.feed(bytes)
        pump()
    }

    func readEnded() {
        peerEnded = true
        guard !isClosed else { return }
        parser.finish()
        pump()
    }

    func channelWritable() {
        exchange?.stream.writabilityMayHaveChanged()
    }

    func channelClosed(_ error: TransportError?) -> TransportError? {
        phase = .closed
        if let current = exchange {
            exchange = nil
            current.stream.fail(failure ?? error ?? .peerClosed(during: .response))
        }
        return failure ?? error
    }

    func closeGracefully() {
        guard !isClosed else { return }
        if exchange == nil {
            close()
        } else {
            phase = .lastExchange
        }
    }

    func abort() {
        phase = .closed
        let current = exchange
        exchange = nil
        current?.stream.fail(.cancelled)
        channel.abort()
    }

    private var isClosed: Bool {
        if case .closed = phase { return true }
        return false
    }

    private func close() {
        phase = .closed
        channel.close()
    }

    // MARK: Parsing

    private func schedulePump() {
        guard !pumpScheduled else { return }
        pumpScheduled = true
        channel.loop.execute { [self] in pump() }
    }

    private func pump() {
        pumpScheduled = false
        while !isClosed {
            if let current = exchange, current.stream.inbound == .ended || !current.stream.wantsInbound {
                channel.pauseReading()
                return
            }
            let event: HTTP1Event?
            do {
                event = try parser.next()
            } catch {
                parseFailed(error)
                return
            }
            guard let event else {
                if !peerEnded {
                    channel.resumeReading()
                } else if exchange == nil {
                    close()
                }
                return
            }
            handle(event)
        }
    }

    private func handle(_ event: HTTP1Event) {
        guard let current = exchange else { return }
        switch event {
        case .responseHead(let parsed) where parsed.isInterim:
            current.stream.receive(.interimResponse(parsed.head, wire: .http1(head: parsed.rawHead)))
        case .responseHead(let parsed):
            current.responseKeepAlive = parsed.keepAlive
            current.stream.receiveResponse(parsed.head, wire: .http1(head: parsed.rawHead))
            if parsed.framing == .tunnel {
                // The connection now carries another protocol, which this type does not speak.
                current.stream.receive(.end(trailers: nil))
                exchange = nil
                close()
            }
        case .body(let bytes):
            current.stream.receive(.body(bytes))
        case .end(let trailers):
            current.stream.receive(.end(trailers: trailers))
            completeIfDone()
        case .requestHead, .tunnel:
            break
        }
    }

    private func parseFailed(_ error: HTTP1ParseError) {
        let current = exchange
        exchange = nil
        if case .truncated = error {
            current?.stream.fail(.peerClosed(during: .response))
        } else {
            failure = .http1Parse(error)
            current?.stream.fail(.http1Parse(error))
        }
        close()
    }

    /// Once the request and its response are both complete: reuse or close.
    private func completeIfDone() {
        guard let current = exchange, current.stream.inbound == .ended, current.stream.outbound == .ended else { return }
        exchange = nil
        guard case .open = phase, current.responseKeepAlive == true, !peerEnded else {
            close()
            return
        }
        connection.deliverLater(.available)
        schedulePump()
    }

    // MARK: Stream side

    private func current(_ stream: HTTPStream) throws(TransportError) -> Exchange {
        guard let current = exchange, current.stream === stream, !isClosed else {
            throw .invalidState("the exchange is over")
        }
        return current
    }

    func sendBody(_ bytes: [UInt8], on stream: HTTPStream) throws(TransportError) {
        _ = try current(stream)
        do {
            channel.write(try serializer.writeBody(bytes))
        } catch {
            throw .http1Serialize(error)
        }
    }

    func sendEnd(trailers: HTTPFields?, on stream: HTTPStream) throws(TransportError) {
        _ = try current(stream)
        do {
            let bytes = try serializer.writeEnd(trailers: trailers)
            if !bytes.isEmpty { channel.write(bytes) }
        } catch {
            throw .http1Serialize(error)
        }
        stream.outboundEnded()
        completeIfDone()
    }

    func reset(_ stream: HTTPStream, code: HTTP2ErrorCode) {
        guard exchange?.stream === stream else { return }
        exchange = nil
        phase = .closed
        channel.abort()
    }

    func isWritable(_ stream: HTTPStream) -> Bool {
        exchange?.stream === stream && channel.isWritable
    }

    func pendingOutboundBytes(_ stream: HTTPStream) -> Int {
        exchange?.stream === stream ? channel.pendingWriteByteCount : 0
    }

    func inboundWanted(_ stream: HTTPStream) {
        if exchange?.stream === stream { schedulePump() }
    }

    func consumed(_ stream: HTTPStream, bytes: Int) {}
}
