import HTTP
import Wire

/// HTTP/1.1 on the server side of a channel: parses requests, writes
/// responses, one exchange at a time (see `HTTPServerConnection`).
///
/// Reading follows demand: the parser is asked for the next event only while
/// the current stream wants its body (or no exchange is open), and the
/// channel reads only when the parser needs more bytes. So a paused consumer
/// stops the socket, and pipelined requests wait in the parser's buffer
/// (at most one read's worth) until their turn.
///
/// `@unchecked Sendable`: touched only on the channel's loop (it is captured
/// by loop closures that run there).
final class HTTP1ServerEngine: HTTPConnectionEngine, HTTPServerStreamDriver, @unchecked Sendable {
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
    }

    private unowned let connection: HTTPServerConnection
    private let channel: ByteChannel
    private var parser: HTTP1Parser
    private var serializer = HTTP1Serializer()
    private var phase = Phase.serving
    private var exchange: Exchange?
    private var nextStreamID = 1
    private var pumpScheduled = false
    /// The client finished sending.
    private var peerEnded = false
    /// The owner asked to close: no request after the current one.
    private var stopAfterExchange = false

    init(connection: HTTPServerConnection) {
        self.connection = connection
        self.channel = connection.channel
        self.parser = HTTP1Parser(parsing: .request, limits: connection.configuration.http1Limits)
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

    func channelWritable() {
        exchange?.stream.writabilityMayHaveChanged()
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

    func abort() {
        phase = .closed
        let current = exchange
        exchange = nil
        current?.stream.fail(.cancelled)
        channel.abort()
    }

    var activeStreamCount: Int { exchange == nil ? 0 : 1 }

    // MARK: Parsing

    private func schedulePump() {
        guard !pumpScheduled else { return }
        pumpScheduled = true
        channel.loop.execute { [self] in pump() }
    }

    /// Pulls parser events while someone wants them; reads when the parser needs bytes.
    private func pump() {
        pumpScheduled = false
        while case .serving = phase {
            if let current = exchange,
               current.stream.inbound == .ended || !(current.stream.wantsInbound || isDone(current)) {
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
                    // The client closed between requests.
                    phase = .closed
                    channel.close()
                }
                return
            }
            handle(event)
        }
    }

    private func handle(_ event: HTTP1Event) {
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
            // Once the response is complete, a body nobody reads is discarded.
            if current.stream.wantsInbound || !isDone(current) { current.stream.receive(.body(bytes)) }
        case .end(let trailers):
            exchange?.stream.receive(.end(trailers: trailers))
            completeIfDone()
        case .responseHead, .tunnel:
            // A request parser yields no response heads, and tunnels only after `detachForTunnel`.
            break
        }
    }

    /// A malformed request: answer it when no response is under way, report, close.
    private func parseFailed(_ error: HTTP1ParseError) {
        let current = exchange
        exchange = nil
        if case .truncated = error {
            current?.stream.fail(.peerClosed(during: .request))
            phase = .closed
            channel.close()
            return
        }
        current?.stream.fail(.http1Parse(error))
        if let current, !isAwaitingHead(current) {
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

    private func isAwaitingHead(_ exchange: Exchange) -> Bool {
        if case .awaitingHead = exchange.response { return true }
        return false
    }

    private func isDone(_ exchange: Exchange) -> Bool {
        if case .done = exchange.response { return true }
        return false
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

    private func current(_ stream: HTTPStream) throws(TransportError) -> Exchange {
        guard let current = exchange, current.stream === stream, case .serving = phase else {
            throw .invalidState("the exchange is over")
        }
        return current
    }

    func sendHead(_ head: HTTPResponseHead, framing: HTTP1Framing?,
                  on stream: HTTPServerStream) throws(TransportError) -> HeadDigest.WireForm {
        let current = try current(stream)
        guard isAwaitingHead(current) else { throw .invalidState("the final response head was already sent") }
        var head = head
        if head.version == .http2 { head.version = .http1_1 }
        let serialized: HTTP1SerializedHead
        do {
            serialized = try serializer.writeResponseHead(head, framing: framing, requestMethod: stream.request.method)
        } catch {
            throw .http1Serialize(error)
        }
        channel.write(serialized.bytes)
        let wire = HeadDigest.WireForm.http1(head: Array(serialized.rawHead))
        guard !head.isInformational || head.status == 101 else { return wire }
        // A final answer before the 100 the client waits for: it will not send the body, so
        // the connection cannot carry another request (RFC 9110 §10.1.1).
        let bodyWithheld = stream.continueOwed && stream.inbound == .open
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
        return wire
    }

    func sendBody(_ bytes: [UInt8], on stream: HTTPStream) throws(TransportError) {
        let current = try current(stream)
        guard case .body = current.response else { throw .invalidState("response body before the response head") }
        do {
            channel.write(try serializer.writeBody(bytes))
        } catch {
            throw .http1Serialize(error)
        }
    }

    func sendEnd(trailers: HTTPFields?, on stream: HTTPStream) throws(TransportError) {
        let current = try current(stream)
        guard case .body(let persistent) = current.response else {
            throw .invalidState("response end before the response head")
        }
        do {
            let bytes = try serializer.writeEnd(trailers: trailers)
            if !bytes.isEmpty { channel.write(bytes) }
        } catch {
            throw .http1Serialize(error)
        }
        current.response = .done(persistent: persistent)
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
        guard let current = exchange, current.stream === stream else { return }
        current.stream.answerContinueIfOwed(automatic: connection.configuration.automaticContinue)
        schedulePump()
    }

    func consumed(_ stream: HTTPStream, bytes: Int) {}
}
