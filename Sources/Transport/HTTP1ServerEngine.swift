import HTTP
import Wire

/// HTTP/1.1 on the server side of a channel: parses requests, writes
/// responses, one exchange at a time (see `HTTPServerConnection`).
/// Pipelined requests wait in the parser's buffer (at most one read's worth,
/// since reading stops while an exchange is in progress) until their turn.
final class HTTP1ServerEngine: HTTP1Engine, HTTPConnectionEngine, HTTPServerStreamDriver, @unchecked Sendable {
    /// Where the connection is.
    enum Phase {
        case serving
        /// Our side is shut down after the last response; what the client
        /// still sends is discarded until its FIN or the deadline.
        case lingering(LoopTimer)
        /// The channel went back to the owner for a tunnel.
        case detached
        case closed
    }

    /// Where the response of the current exchange is.
    enum ResponseProgress {
        case awaitingHead
        /// The final head went out; `persistent` says whether the connection
        /// may carry another exchange after this one.
        case body(persistent: Bool)
        case done(persistent: Bool)
        /// A tunnel-opening head went out; the owner detaches the channel.
        case tunnel
    }

    /// The request being served.
    final class Exchange {
        let stream: HTTPServerStream
        /// The request allows another one after it.
        let requestKeepAlive: Bool
        var response = ResponseProgress.awaitingHead

        init(stream: HTTPServerStream, requestKeepAlive: Bool) {
            self.stream = stream
            self.requestKeepAlive = requestKeepAlive
        }

        var isAwaitingHead: Bool {
            if case .awaitingHead = response { return true }
            return false
        }

        var isDone: Bool {
            if case .done = response { return true }
            return false
        }
    }

    private unowned let connection: HTTPServerConnection
    private var phase = Phase.serving
    private var exchange: Exchange?
    /// The owner asked to close: no request after the current one.
    private var stopAfterExchange = false

    init(connection: HTTPServerConnection) {
        self.connection = connection
        super.init(channel: connection.channel, parsing: .request, limits: connection.configuration.http1Limits)
    }

    // MARK: Channel side

    func start(leftover: [UInt8]) {
        parser.feed(leftover)
        pump()
    }

    func received(_ bytes: [UInt8]) {
        guard case .serving = phase else { return }
        parser.feed(bytes)
        pump()
    }

    func readEnded() {
        peerEnded = true
        switch phase {
        case .serving:
            parser.finish()
            pump()
        case .lingering(let timer):
            timer.cancel()
            phase = .closed
            channel.close()
        case .detached, .closed:
            break
        }
    }

    func channelClosed(_ error: TransportError?) -> TransportError? {
        if case .lingering(let timer) = phase { timer.cancel() }
        phase = .closed
        if let current = exchange {
            exchange = nil
            let stage: TransportStage = current.stream.inbound == .open ? .request : .response
            current.stream.fail(error ?? .peerClosed(during: stage))
        }
        return error
    }

    func closeGracefully() {
        stopAfterExchange = true
        if exchange == nil { finish() }
    }

    var activeStreamCount: Int { exchange == nil ? 0 : 1 }

    // MARK: Parsing

    override var activeStream: HTTPStream? { exchange?.stream }

    override var isParsing: Bool {
        if case .serving = phase { return true }
        return false
    }

    /// Waits while the request is complete (for its response) or its consumer
    /// does not want more — unless the response is complete, when the rest of
    /// an unread body is discarded.
    override var waitsForConsumer: Bool {
        guard let current = exchange else { return false }
        return current.stream.inbound == .ended || !(current.stream.wantsInbound || current.isDone)
    }

    override func handle(_ event: HTTP1Event) {
        switch event {
        case .requestHead(let parsed):
            let stream = HTTPServerStream(
                loop: channel.loop, streamID: nextStreamID, version: parsed.head.version, request: parsed.head,
                requestWire: .http1(head: parsed.rawHead), requestBodyFraming: parsed.framing,
                expectsContinue: parsed.expectsContinue, connection: connection, driver: self)
            nextStreamID += 1
            exchange = Exchange(stream: stream, requestKeepAlive: parsed.keepAlive)
            connection.deliver(.stream(stream))
            stream.answerContinueIfOwed(automatic: connection.configuration.automaticContinue)
        case .body(let bytes):
            guard let current = exchange else { return }
            if current.stream.wantsInbound || !current.isDone { current.stream.receive(.body(bytes)) }
        case .end(let trailers):
            exchange?.stream.receive(.end(trailers: trailers))
            completeIfDone()
        case .responseHead, .tunnel:
            // A request parser yields no response heads, and tunnels only after `detachForTunnel`.
            break
        }
    }

    override func peerClosedWhileIdle() {
        phase = .closed
        channel.close()
    }

    /// A malformed request: answer it when no response is under way, report, close.
    override func parseFailed(_ error: HTTP1ParseError) {
        let current = exchange
        exchange = nil
        if case .truncated = error {
            current?.stream.fail(.peerClosed(during: .request))
            phase = .closed
            channel.close()
            return
        }
        current?.stream.fail(.http1Parse(error))
        if let current, !current.isAwaitingHead {
            connection.deliver(.malformedRequest(error, answer: nil, wire: nil))
            phase = .closed
            channel.abort()
            return
        }
        let body = Array("\(error.status) \(error.reason)\n".utf8)
        var head = HTTPResponseHead(status: error.status)
        head.fields.append("Content-Type", "text/plain; charset=utf-8")
        head.fields.append("Connection", "close")
        serializer = HTTP1Serializer()
        // A fixed status, ASCII fields and a fresh serializer: this cannot fail.
        if let serialized = try? serializer.writeResponseHead(head, framing: .contentLength(body.count)) {
            channel.write(serialized.bytes + body)
            head.fields = serialized.fields
            connection.deliver(.malformedRequest(error, answer: head, wire: .http1(head: Array(serialized.rawHead))))
        }
        finish()
    }

    /// Moves on once the response is complete: after the rest of the request
    /// (read, or discarded when nobody reads it) on a persistent connection;
    /// at once, failing the unfinished request with `.cancelled`, otherwise.
    private func completeIfDone() {
        guard let current = exchange, case .done(let persistent) = current.response else { return }
        let keepAlive = persistent && !stopAfterExchange && !peerEnded
        if current.stream.inbound == .open {
            if keepAlive {
                schedulePump()
                return
            }
            exchange = nil
            current.stream.fail(.cancelled)
            finish()
            return
        }
        exchange = nil
        guard keepAlive else {
            finish()
            return
        }
        // After a refused CONNECT or Upgrade, parsing goes on with the next request.
        parser.refuseTunnel()
        schedulePump()
    }

    /// No more requests: shut our side down, then close once the client's
    /// FIN arrives or the linger deadline passes.
    private func finish() {
        guard case .serving = phase else { return }
        channel.shutdownWrite()
        if peerEnded {
            phase = .closed
            channel.close()
            return
        }
        let timer = channel.loop.schedule(after: connection.configuration.lingerTimeout) { [self] in
            if case .lingering = phase {
                phase = .closed
                channel.close()
            }
        }
        phase = .lingering(timer)
        channel.resumeReading()
    }

    /// Hands the channel over after a tunnel-opening response; returns the bytes read past the request.
    func detachForTunnel() throws(TransportError) -> [UInt8] {
        guard let current = exchange, case .tunnel = current.response else {
            throw .invalidState("no tunnel-opening response (2xx to CONNECT, 101) was sent")
        }
        // The request's end may not have been parsed yet if the owner answered at once.
        while !parser.isAwaitingTunnelDecision {
            guard case .some = try? parser.next() else {
                throw .invalidState("the request did not ask for a tunnel, or it is incomplete")
            }
        }
        parser.acceptTunnel()
        var leftover: [UInt8] = []
        if case .tunnel(let bytes)? = try? parser.next() { leftover = bytes }
        exchange = nil
        phase = .detached
        current.stream.release()
        return leftover
    }

    // MARK: Stream side

    override func dropExchange() {
        exchange = nil
        phase = .closed
    }

    private func current(_ stream: HTTPStream) throws(TransportError) -> Exchange {
        guard let current = exchange, current.stream === stream, case .serving = phase else {
            throw .invalidState("the exchange is over")
        }
        return current
    }

    func sendHead(_ head: HTTPResponseHead, framing: HTTP1Framing?,
                  on stream: HTTPServerStream) throws(TransportError) -> (sent: HTTPResponseHead, wire: HeadDigest.WireForm) {
        let current = try current(stream)
        guard current.isAwaitingHead else { throw .invalidState("the final response head was already sent") }
        let translated = head.version == .http2
        var head = head.carriedByHTTP1()
        var framing = framing
        if framing == nil, translated, Self.expectsTrailers(head, answering: stream.request) {
            head.fields.removeAll { $0.lowercasedName == "content-length" }
            framing = .chunked
        }
        // A final answer before the 100 the client waits for: it will not send the body, so
        // the connection cannot carry another request (RFC 9110 §10.1.1).
        let bodyWithheld = stream.continueOwed && stream.inbound == .open
        let closesAfter = !current.requestKeepAlive || stopAfterExchange || peerEnded || bodyWithheld
        if closesAfter, Self.mayAnnounceClose(head, answering: stream.request), !head.fields.requestsClose {
            // The connection closes after this response: say so (RFC 9112 §9.6), or a client
            // that asked to close but reads no `close` sends its next request into the closing
            // connection and sees it fail.
            head.fields.append("Connection", "close")
        }
        let serialized: HTTP1SerializedHead
        do {
            serialized = try serializer.writeResponseHead(head, framing: framing, requestMethod: stream.request.method,
                                                          requestVersion: stream.request.version)
        } catch {
            throw .http1Serialize(error)
        }
        channel.write(serialized.bytes)
        head.fields = serialized.fields
        let wire = HeadDigest.WireForm.http1(head: Array(serialized.rawHead))
        guard !head.isInformational || head.status == 101 else { return (head, wire) }
        switch serialized.framing {
        case .tunnel:
            current.response = .tunnel
            stream.outboundEnded()
        case .closeDelimited:
            current.response = .body(persistent: false)
        case .none, .contentLength, .chunked:
            current.response = .body(persistent: current.requestKeepAlive && !serialized.fields.requestsClose
                                                 && !bodyWithheld)
        }
        return (head, wire)
    }

    /// Whether a response may carry `Connection: close`: a final response
    /// that opens no tunnel (not a 1xx, not a 2xx to CONNECT).
    static func mayAnnounceClose(_ head: HTTPResponseHead, answering request: HTTPRequestHead) -> Bool {
        !head.isInformational && !(request.method == "CONNECT" && (200..<300).contains(head.status))
    }

    /// Whether a response translated from HTTP/2 should go out chunked so
    /// that trailers can follow: it declares `Trailer`, or the client said
    /// `TE: trailers`; the client speaks HTTP/1.1 and the response may have a
    /// body. Only chunked framing carries trailers, so its `Content-Length`
    /// (framing only, RFC 9112 §6.1) then gives way.
    static func expectsTrailers(_ head: HTTPResponseHead, answering request: HTTPRequestHead) -> Bool {
        guard request.version == .http1_1, request.method != "HEAD", head.status >= 200,
              head.status != 204, head.status != 304, !(request.method == "CONNECT" && head.status < 300) else {
            return false
        }
        if head.fields.contains("trailer") { return true }
        return request.fields.values("te").contains { value in
            value.split(separator: ",").contains { member in
                let coding = member.split(separator: ";").first.map { String($0.filter { $0 != " " && $0 != "\t" }) }
                return HTTPField.lowercaseASCII(coding ?? "") == "trailers"
            }
        }
    }

    override func sendEnd(trailers: HTTPFields?, on stream: HTTPStream) throws(TransportError) -> HTTPFields? {
        let current = try current(stream)
        guard case .body(let persistent) = current.response else {
            throw .invalidState("response end before the response head")
        }
        let sent = try writeEnd(trailers: trailers)
        current.response = .done(persistent: persistent)
        stream.outboundEnded()
        completeIfDone()
        return sent
    }

    override func inboundWanted(_ stream: HTTPStream) {
        guard let current = exchange, current.stream === stream else { return }
        current.stream.answerContinueIfOwed(automatic: connection.configuration.automaticContinue)
        schedulePump()
    }
}
