import HTTP
import Wire

/// HTTP/1.1 on the client side of a channel: one exchange at a time (see
/// `HTTPClientConnection`). Between exchanges the channel keeps reading, to
/// notice the server closing (bytes then are an unsolicited response, an error).
final class HTTP1ClientEngine: HTTP1Engine, HTTPClientEngine, @unchecked Sendable {
    /// Where the connection is.
    enum Phase {
        /// Requests may be sent (one at a time).
        case open
        /// The current exchange is the last one (either side said close, or the owner did).
        case lastExchange
        /// The server answered 101: the connection carries another protocol,
        /// which this type does not speak. Reading pauses (bytes past the 101
        /// stay in the parser, at most one read) until the owner detaches the
        /// channel, so a FIN waits for the owner too.
        case upgraded
        /// The server answered 101 to a request translated from an HTTP/2
        /// extended CONNECT (RFC 8441): the bytes after the 101 are the
        /// exchange's, both ways — what the server sends arrives as the
        /// stream's body, the stream's body goes out unframed, its end is a
        /// half-close. The connection closes when both ways ended.
        case tunnelling
        case closed
    }

    /// The request in flight.
    final class Exchange {
        let stream: HTTPClientStream
        /// The connection carried an exchange before this one.
        let reusedConnection: Bool
        /// The final response allows another exchange after it; nil until it arrived.
        var responseKeepAlive: Bool?
        /// A response head (interim or final) arrived.
        var responseStarted = false
        /// The request is an HTTP/2 extended CONNECT sent as an HTTP/1.1
        /// `Upgrade`: a 101 makes the exchange a tunnel (`Phase.tunnelling`).
        var tunnelAsked = false

        init(stream: HTTPClientStream, reusedConnection: Bool) {
            self.stream = stream
            self.reusedConnection = reusedConnection
        }

        /// How the exchange fails when the connection ends before its response
        /// head: on a reused connection with no byte of response, the request
        /// was most likely never processed.
        var unansweredStage: TransportStage {
            reusedConnection && !responseStarted ? .responseOnReusedConnection : .response
        }
    }

    private unowned let connection: HTTPClientConnection
    private var phase = Phase.open
    private var exchange: Exchange?
    /// What made the connection fail, reported with `.closed`.
    private var failure: TransportError?

    init(connection: HTTPClientConnection) {
        self.connection = connection
        super.init(channel: connection.channel, parsing: .response, limits: connection.configuration.http1Limits)
    }

    var canOpenStream: Bool {
        if case .open = phase { return exchange == nil }
        return false
    }

    var activeStreamCount: Int { exchange == nil ? 0 : 1 }

    func open(_ head: HTTPRequestHead, framing: HTTP1Framing?,
              handler: @escaping (HTTPStreamEvent) -> Void) throws(TransportError) -> HTTPClientStream {
        guard canOpenStream else {
            throw .invalidState(exchange == nil ? "the HTTP/1.1 connection is closing" : "the HTTP/1.1 connection is busy")
        }
        var head = head
        var framing = framing
        // RFC 8441 §5: an extended CONNECT goes to an HTTP/1.1 server as the `Upgrade` handshake.
        let tunnelAsked = head.isExtendedConnect
        if tunnelAsked {
            head = ExtendedConnect.http1Upgrade(head, key: ExtendedConnect.newWebSocketKey())
            framing = HTTP1Framing.none
        }
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
                                      requestWire: .http1(head: Array(serialized.rawHead)), connection: connection,
                                      driver: self)
        nextStreamID += 1
        let current = Exchange(stream: stream, reusedConnection: nextStreamID > 2)
        current.tunnelAsked = tunnelAsked
        exchange = current
        if head.version != .http1_1 || serialized.fields.requestsClose || tunnelAsked { phase = .lastExchange }
        stream.setHandler(handler)
        if !serialized.framing.allowsBody {
            _ = try? serializer.writeEnd()
            // A tunnel's stream stays open: its body is the bytes after a 101.
            if !tunnelAsked { stream.outboundEnded() }
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
        // The server finished sending before any response head, and every
        // byte it sent was parsed: no response will come (an intermediary
        // that closes without answering). Waiting would last until a timeout.
        if let current = exchange, current.responseKeepAlive == nil, !waitsForConsumer {
            exchange = nil
            current.stream.fail(.peerClosed(during: current.unansweredStage))
            close()
        }
    }

    func channelClosed(_ error: TransportError?) -> TransportError? {
        phase = .closed
        if let current = exchange {
            exchange = nil
            current.stream.fail(failure ?? error ?? .peerClosed(during: current.unansweredStage))
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

    private var isClosed: Bool {
        if case .closed = phase { return true }
        return false
    }

    private func close() {
        phase = .closed
        channel.close()
    }

    // MARK: Parsing

    override var activeStream: HTTPStream? { exchange?.stream }

    override var isParsing: Bool {
        if case .tunnelling = phase { return exchange?.stream.inbound == .open }
        return !isClosed
    }

    override var waitsForConsumer: Bool {
        if case .upgraded = phase { return true }
        guard let current = exchange else { return false }
        return current.stream.inbound == .ended || !current.stream.wantsInbound
    }

    override func handle(_ event: HTTP1Event) {
        guard let current = exchange else { return }
        switch event {
        case .responseHead(let parsed) where parsed.isInterim:
            current.responseStarted = true
            current.stream.receive(.interimResponse(parsed.head, wire: .http1(head: parsed.rawHead)))
        case .responseHead(let parsed):
            current.responseStarted = true
            current.responseKeepAlive = parsed.keepAlive
            let tunnels = parsed.framing == .tunnel && current.tunnelAsked && parsed.head.status == 101
            // The stream carries the tunnel's bytes from here on (`Phase.tunnelling`); set before
            // the owner hears of the 101, which may reset the stream at once.
            if tunnels { phase = .tunnelling }
            current.stream.receiveResponse(parsed.head, wire: .http1(head: parsed.rawHead))
            if parsed.framing == .tunnel && !tunnels {
                // The connection now carries another protocol, which this type does
                // not speak: it waits for the owner to take the channel (`detachForTunnel`).
                exchange = nil
                phase = .upgraded
                current.stream.receive(.end(trailers: nil))
            }
        case .body(let bytes):
            current.stream.receive(.body(bytes))
        case .end(let trailers):
            current.stream.receive(.end(trailers: trailers))
            completeIfDone()
        case .tunnel(let bytes):
            if case .tunnelling = phase, !bytes.isEmpty { current.stream.receive(.body(bytes)) }
        case .requestHead:
            break
        }
    }

    /// In a tunnel, the server's FIN ends the stream's inbound side once every byte before it was passed on.
    override func peerFinishedSending() {
        guard case .tunnelling = phase, let current = exchange else { return super.peerFinishedSending() }
        guard current.stream.inbound == .open else { return }
        current.stream.receive(.end(trailers: nil))
        completeIfDone()
    }

    /// Hands the channel over after a 101; returns the bytes read past it
    /// and whether the server's FIN was read too.
    func detachForTunnel() throws(TransportError) -> (leftover: [UInt8], peerEnded: Bool) {
        guard case .upgraded = phase else { throw .invalidState("no 101 Switching Protocols was received") }
        var leftover: [UInt8] = []
        while case .tunnel(let bytes)? = try? parser.next() { leftover += bytes }
        phase = .closed
        return (leftover, peerEnded)
    }

    override func peerClosedWhileIdle() {
        close()
    }

    override func parseFailed(_ error: HTTP1ParseError) {
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
        if case .tunnelling = phase { return close() }
        guard case .open = phase, current.responseKeepAlive == true, !peerEnded else {
            close()
            return
        }
        connection.deliverLater(.available)
        schedulePump()
    }

    // MARK: Stream side

    override func dropExchange() {
        exchange = nil
        phase = .closed
    }

    override func sendBody(_ bytes: [UInt8], on stream: HTTPStream) throws(TransportError) {
        guard case .tunnelling = phase else { return try super.sendBody(bytes, on: stream) }
        guard exchange?.stream === stream else { throw .invalidState("the exchange is over") }
        channel.write(bytes)
    }

    override func sendEnd(trailers: HTTPFields?, on stream: HTTPStream) throws(TransportError) -> HTTPFields? {
        guard exchange?.stream === stream, !isClosed else { throw .invalidState("the exchange is over") }
        if case .tunnelling = phase {
            // The tunnel's end this way is a half-close; a tunnel has no trailers.
            channel.shutdownWrite()
            stream.outboundEnded()
            completeIfDone()
            return nil
        }
        let sent = try writeEnd(trailers: trailers)
        stream.outboundEnded()
        completeIfDone()
        return sent
    }
}
