/// The server side of one HTTP/1.1 connection, without I/O: which request is
/// served, whether the connection carries another one, when it closes, and
/// how a malformed request is refused. Built on `HTTP1Parser` and
/// `HTTP1Serializer`; a driver (`HTTP1ServerDriver` in Transport) feeds it
/// the connection's events and carries out what it returns.
///
/// Events in: bytes received (`receive`), the peer's end of input
/// (`readEnded`), the linger timer (`lingerTimerFired`), the connection
/// closing (`channelClosed`); from the owner of the exchange, the response
/// (`sendResponseHead`, `sendBody`, `sendEnd`), `stopAfterExchange`,
/// `detachForTunnel`, `refuse` and `drop`.
/// What to do comes back as return values: bytes to write, one `Step` at a
/// time from `next(consumerWants:)` (deliver a request part upward, pause or
/// resume reading, a connection command), or an `HTTP1ConnectionCommand`.
/// Nothing is queued: each call returns one small value and allocates
/// nothing beyond what the parser and serializer do.
///
/// Invariants:
/// - One exchange at a time. Pipelined requests wait, unparsed, in the
///   parser's buffer; the next request head comes out of `next` only once the
///   current request and its response are both complete, so responses go out
///   in order.
/// - While an exchange is in progress, `next` returns request parts only
///   while the consumer wants them (`consumerWants`), except the message's
///   end once its body was all returned, and body bytes after a complete
///   response (they are discarded). Otherwise it says `.idle(.pause)`.
/// - Keep-alive follows the request (`Connection`, version), the response
///   (`Connection: close`, close-delimited body), the owner
///   (`stopAfterExchange`) and the peer (its end of input). A final response
///   after which the connection closes carries `Connection: close`.
/// - When no request follows, the sending side shuts down and the layer
///   lingers (`.shutdownAndLinger`): it discards what the client still sends
///   until its end of input or the linger timer, then closes.
/// - After the first parse error nothing more is parsed: the request is
///   answered with its status (or, when a response is under way, the
///   connection is reset) and the connection closes.
/// - `phase` only moves forward: serving → lingering → closed, or serving →
///   detached (after a tunnel-opening response) or closed.
///
/// A value type; use it from one queue at a time.
public struct HTTP1ServerLayer: Sendable {
    /// Where the connection is.
    public enum Phase: Hashable, Sendable {
        case serving
        /// Our side is shut down after the last response; what the client
        /// still sends is discarded until its end of input or the linger timer.
        case lingering
        /// The connection went back to its owner for a tunnel.
        case detached
        case closed
    }

    /// Where the response of the current exchange is.
    public enum ResponseProgress: Hashable, Sendable {
        case awaitingHead
        /// The final head went out; `persistent` says whether the connection
        /// may carry another exchange after this one.
        case body(persistent: Bool)
        case done(persistent: Bool)
        /// A tunnel-opening head went out; the owner detaches the connection.
        case tunnel
    }

    /// The request being served.
    public struct Exchange: Hashable, Sendable {
        /// The exchange's number on the connection: 1, 2, …
        public let streamID: Int
        /// The request allows another one after it.
        public let requestKeepAlive: Bool
        /// The request's end was returned by `next`.
        public internal(set) var requestEnded = false
        public internal(set) var response = ResponseProgress.awaitingHead

        var isAwaitingHead: Bool { response == .awaitingHead }

        var isDone: Bool {
            if case .done = response { return true }
            return false
        }
    }

    /// What the driver does next, from `next(consumerWants:)`. After any step
    /// but `.idle` the driver carries it out and calls `next` again.
    public enum Step: Hashable, Sendable {
        /// Nothing more to do until another event; reading as said.
        case idle(HTTP1Reading)
        /// A request arrived: deliver it upward as exchange `streamID`.
        case requestHead(HTTP1ParsedRequestHead, streamID: Int)
        /// Deliver request body bytes (never empty).
        case requestBody([UInt8])
        /// Deliver the request's end.
        case requestEnd(trailers: HTTPFields?)
        /// Carry out this connection command.
        case connection(HTTP1ConnectionCommand)
        /// The request was malformed or cut short: carry out the refusal.
        case refused(Refusal)
    }

    /// How a malformed or truncated request is refused. The driver, in order:
    /// fails the exchange in progress with `exchangeFailure` (when not nil),
    /// writes the answer's bytes (when there is one), reports the error
    /// upward when `reported`, then carries out `then`.
    public struct Refusal: Hashable, Sendable {
        public let error: HTTP1ParseError
        public let exchangeFailure: HTTP1ExchangeFailure?
        public let answer: Answer?
        /// Whether the owner hears of the malformed request (a request cut
        /// short by the peer's end of input is a closed connection, not a
        /// malformed request).
        public let reported: Bool
        public let then: HTTP1ConnectionCommand
    }

    /// The error answer to a malformed request: `<status> <reason>` as a text
    /// body with `Connection: close`.
    public struct Answer: Hashable, Sendable {
        /// The head as sent (fields as serialized).
        public let head: HTTPResponseHead
        public let serialized: HTTP1SerializedHead
        public let body: [UInt8]

        /// Head and body, written in one piece.
        public var bytes: [UInt8] { serialized.bytes + body }
    }

    /// A response head as written.
    public struct SentHead: Sendable {
        /// The head as it went out: version and reason of the status line,
        /// fields as serialized (with `Connection: close` and any framing
        /// field added).
        public let head: HTTPResponseHead
        /// The bytes to write, and the framing the body must use.
        public let serialized: HTTP1SerializedHead
        /// The head opened a tunnel (2xx to CONNECT, 101): the response
        /// message is over; the owner detaches the connection.
        public let opensTunnel: Bool
    }

    /// What follows the end of the response.
    public enum Completion: Hashable, Sendable {
        /// The request is still arriving (its rest is read and discarded when
        /// nobody wants it); the next request follows its end.
        case awaitingRequestEnd
        /// The exchange is over and the connection carries the next request:
        /// run `next` again.
        case nextRequest
        /// The exchange is over and no request follows: carry this out.
        case finish(HTTP1ConnectionCommand)
        /// The connection ends while the request is unfinished: the exchange
        /// fails with `.cancelled`, then carry this out.
        case cancelRequest(then: HTTP1ConnectionCommand)
    }

    /// The end of a response as written.
    public struct SentEnd: Sendable {
        /// The bytes to write (possibly none).
        public let bytes: [UInt8]
        /// The trailers that went out (nil when none: only chunked carries them).
        public let trailers: HTTPFields?
        /// What follows, once the bytes are written and the response marked ended.
        public let completion: Completion
    }

    public private(set) var phase = Phase.serving
    /// The exchange in progress, from its request head until both messages
    /// are complete (or the connection is refused, detached or dropped).
    public private(set) var exchange: Exchange?
    /// The peer finished sending.
    public private(set) var peerEnded = false
    /// The owner asked to close: no request after the current one.
    public private(set) var stopsAfterExchange = false
    private var parser: HTTP1Parser
    private var serializer = HTTP1Serializer()
    private var nextStreamID = 1
    /// A request's end was returned: the next `next` first checks whether
    /// that completed the exchange.
    private var completionDue = false

    public init(limits: HTTP1ParserLimits = .standard) {
        parser = HTTP1Parser(parsing: .request, limits: limits)
    }

    // MARK: Connection events

    /// Bytes received; ignored unless serving (a lingering connection
    /// discards them). Run `next` afterwards.
    public mutating func receive(_ bytes: [UInt8]) {
        guard case .serving = phase else { return }
        parser.feed(bytes)
    }

    /// The peer finished sending. While serving, run `next` afterwards (it
    /// ends what the bytes before the end allow); while lingering, close.
    public mutating func readEnded() -> HTTP1ConnectionCommand {
        peerEnded = true
        switch phase {
        case .serving:
            parser.finish()
            return .none
        case .lingering:
            phase = .closed
            return .close
        case .detached, .closed:
            return .none
        }
    }

    /// The linger timer armed by `.shutdownAndLinger` fired.
    public mutating func lingerTimerFired() -> HTTP1ConnectionCommand {
        guard case .lingering = phase else { return .none }
        phase = .closed
        return .close
    }

    /// The connection closed; returns the message that was unfinished when
    /// an exchange was in progress (it fails).
    public mutating func channelClosed() -> HTTP1UnfinishedMessage? {
        phase = .closed
        guard let current = exchange else { return nil }
        exchange = nil
        return current.requestEnded ? .response : .request
    }

    /// The owner asks to close: no request after the current exchange (at
    /// once when there is none).
    public mutating func stopAfterExchange() -> HTTP1ConnectionCommand {
        stopsAfterExchange = true
        return exchange == nil ? finish() : .none
    }

    /// The connection is being reset: forget the exchange and stop.
    public mutating func drop() {
        exchange = nil
        phase = .closed
    }

    /// Whether `next` can only return `.idle(.resume)`: serving, between
    /// exchanges, the peer still sending, nothing received left unparsed. A
    /// driver may then run `next` inside its owner's call (no event can come
    /// of it) instead of on a later loop turn.
    public var awaitsRequest: Bool {
        guard case .serving = phase, exchange == nil, !completionDue, !peerEnded else { return false }
        return parser.awaitsMessage
    }

    /// The next thing to do. `consumerWants`: the owner of the exchange in
    /// progress takes request parts now (ignored when there is none).
    public mutating func next(consumerWants: Bool) -> Step {
        if completionDue {
            completionDue = false
            if let command = completeAfterRequestEnd() { return .connection(command) }
        }
        while case .serving = phase {
            if let current = exchange, current.requestEnded || !(consumerWants || current.isDone),
               !parser.endsMessageNext {
                return .idle(.pause)
            }
            let event: HTTP1Event?
            do {
                event = try parser.next()
            } catch {
                return .refused(refuse(error))
            }
            guard let event else {
                if !peerEnded { return .idle(.resume) }
                // The peer finished sending between exchanges.
                guard exchange == nil else { return .idle(.unchanged) }
                phase = .closed
                return .connection(.close)
            }
            switch event {
            case .requestHead(let parsed):
                let streamID = nextStreamID
                nextStreamID += 1
                exchange = Exchange(streamID: streamID, requestKeepAlive: parsed.keepAlive)
                return .requestHead(parsed, streamID: streamID)
            case .body(let bytes):
                // After a complete response, a body nobody reads is discarded.
                guard let current = exchange, consumerWants || !current.isDone else { continue }
                return .requestBody(bytes)
            case .end(let trailers):
                guard exchange != nil else { continue }
                exchange?.requestEnded = true
                completionDue = true
                return .requestEnd(trailers: trailers)
            case .responseHead, .tunnel:
                // A request parser yields no response heads, and tunnels only after `detachForTunnel`.
                continue
            }
        }
        return .idle(.unchanged)
    }

    /// Refuses the request: a malformed one is answered with its status when
    /// no response is under way (else the connection is reset); one cut
    /// short by the peer's end of input closes the connection. Called by
    /// `next` on a parse error, and by the owner for a request head that did
    /// not come in time (`.headTimeout`).
    public mutating func refuse(_ error: HTTP1ParseError) -> Refusal {
        let current = exchange
        exchange = nil
        if case .truncated = error {
            phase = .closed
            return Refusal(error: error, exchangeFailure: current.map { _ in .peerClosed(during: .request) },
                           answer: nil, reported: false, then: .close)
        }
        let failure = current.map { _ in HTTP1ExchangeFailure.malformed(error) }
        if let current, !current.isAwaitingHead {
            phase = .closed
            return Refusal(error: error, exchangeFailure: failure, answer: nil, reported: true, then: .abort)
        }
        let body = Array("\(error.status) \(error.reason)\n".utf8)
        var head = HTTPResponseHead(status: error.status)
        head.fields.append("Content-Type", "text/plain; charset=utf-8")
        head.fields.append("Connection", "close")
        serializer = HTTP1Serializer()
        // A fixed status, ASCII fields and a fresh serializer: this cannot fail.
        var answer: Answer?
        if let serialized = try? serializer.writeResponseHead(head, framing: .contentLength(body.count)) {
            head.fields = serialized.fields
            answer = Answer(head: head, serialized: serialized, body: body)
        }
        return Refusal(error: error, exchangeFailure: failure, answer: answer, reported: answer != nil, then: finish())
    }

    // MARK: The response, from the owner of the exchange

    /// Serializes a response head (interim 1xx or final) for the exchange in
    /// progress. `request` is the request it answers; `continueOwed`: the
    /// client still waits for a 100 (Continue). A head translated from
    /// HTTP/2 goes out as HTTP/1.1, chunked when trailers may follow. A
    /// final head after which the connection closes gets `Connection: close`.
    /// Write the returned bytes.
    public mutating func sendResponseHead(_ head: HTTPResponseHead, framing: HTTP1Framing?, answering request: HTTPRequestHead,
                                          continueOwed: Bool) throws(HTTP1LayerError) -> SentHead {
        guard case .serving = phase, let current = exchange else { throw .exchangeOver }
        guard current.isAwaitingHead else { throw .finalHeadAlreadySent }
        let translated = head.version == .http2
        var head = head.carriedByHTTP1()
        var framing = framing
        if framing == nil, translated, Self.expectsTrailers(head, answering: request) {
            head.fields.remove(.contentLength)
            framing = .chunked
        }
        // A final answer before the 100 the client waits for: it will not send the body, so
        // the connection cannot carry another request (RFC 9110 §10.1.1).
        let bodyWithheld = continueOwed && !current.requestEnded
        let closesAfter = !current.requestKeepAlive || stopsAfterExchange || peerEnded || bodyWithheld
        if closesAfter, Self.mayAnnounceClose(head, answering: request), !head.fields.requestsClose {
            // The connection closes after this response: say so (RFC 9112 §9.6), or a client
            // that asked to close but reads no `close` sends its next request into the closing
            // connection and sees it fail.
            head.fields.append("Connection", "close")
        }
        let serialized: HTTP1SerializedHead
        do {
            serialized = try serializer.writeResponseHead(head, framing: framing, requestMethod: request.method,
                                                          requestVersion: request.version)
        } catch {
            throw .serialize(error)
        }
        head.fields = serialized.fields
        guard !head.status.isInterim else {
            return SentHead(head: head, serialized: serialized, opensTunnel: false)
        }
        switch serialized.framing {
        case .tunnel:
            exchange?.response = .tunnel
        case .closeDelimited:
            exchange?.response = .body(persistent: false)
        case .none, .contentLength, .chunked:
            exchange?.response = .body(persistent: current.requestKeepAlive && !serialized.fields.requestsClose
                                                    && !bodyWithheld)
        }
        return SentHead(head: head, serialized: serialized, opensTunnel: serialized.framing == .tunnel)
    }

    /// Frames body bytes of the response in progress; write what comes back.
    public mutating func sendBody(_ bytes: [UInt8]) throws(HTTP1LayerError) -> [UInt8] {
        guard exchange != nil else { throw .exchangeOver }
        do {
            return try serializer.writeBody(bytes)
        } catch {
            throw .serialize(error)
        }
    }

    /// Ends the response in progress (trailers only when chunked) and says
    /// what follows.
    public mutating func sendEnd(trailers: HTTPFields?) throws(HTTP1LayerError) -> SentEnd {
        guard case .serving = phase, let current = exchange else { throw .exchangeOver }
        guard case .body(let persistent) = current.response else { throw .responseEndBeforeHead }
        let end: (bytes: [UInt8], trailers: HTTPFields?)
        do {
            end = try serializer.writeEnd(offering: trailers)
        } catch {
            throw .serialize(error)
        }
        exchange?.response = .done(persistent: persistent)
        return SentEnd(bytes: end.bytes, trailers: end.trailers, completion: completeAfterResponseEnd())
    }

    /// Hands the connection over after a tunnel-opening response; returns the
    /// bytes received past the request. Nothing more is parsed.
    public mutating func detachForTunnel() throws(HTTP1LayerError) -> [UInt8] {
        guard let current = exchange, current.response == .tunnel else { throw .noTunnelResponse }
        // The request's end may not have been parsed yet if the owner answered at once.
        while !parser.isAwaitingTunnelDecision {
            guard case .some = try? parser.next() else { throw .tunnelNotRequested }
        }
        parser.acceptTunnel()
        var leftover: [UInt8] = []
        if case .tunnel(let bytes)? = try? parser.next() { leftover = bytes }
        exchange = nil
        phase = .detached
        return leftover
    }

    // MARK: Completion

    /// After the request's end was delivered: with the response complete,
    /// the exchange is over; returns the command when no request follows.
    private mutating func completeAfterRequestEnd() -> HTTP1ConnectionCommand? {
        guard let current = exchange, case .done(let persistent) = current.response else { return nil }
        exchange = nil
        guard keepsAlive(persistent) else { return finish() }
        // After a refused CONNECT or Upgrade, parsing goes on with the next request.
        parser.refuseTunnel()
        return nil
    }

    /// After the response's end: on a persistent connection the next request
    /// follows the rest of this one (read, or discarded when nobody reads
    /// it); otherwise the connection ends at once, failing an unfinished request.
    private mutating func completeAfterResponseEnd() -> Completion {
        guard let current = exchange, case .done(let persistent) = current.response else { return .awaitingRequestEnd }
        let keepAlive = keepsAlive(persistent)
        if !current.requestEnded {
            if keepAlive { return .awaitingRequestEnd }
            exchange = nil
            return .cancelRequest(then: finish())
        }
        exchange = nil
        guard keepAlive else { return .finish(finish()) }
        parser.refuseTunnel()
        return .nextRequest
    }

    private func keepsAlive(_ persistent: Bool) -> Bool {
        persistent && !stopsAfterExchange && !peerEnded
    }

    /// No more requests: shut our side down, then close once the client's
    /// end of input arrives or the linger timer fires.
    private mutating func finish() -> HTTP1ConnectionCommand {
        guard case .serving = phase else { return .none }
        if peerEnded {
            phase = .closed
            return .shutdownAndClose
        }
        phase = .lingering
        return .shutdownAndLinger
    }

    // MARK: Response head rules

    /// Whether a response may carry `Connection: close`: a final response
    /// that opens no tunnel (not a 1xx, not a 2xx to CONNECT).
    static func mayAnnounceClose(_ head: HTTPResponseHead, answering request: HTTPRequestHead) -> Bool {
        !head.isInformational && !(request.method == .connect && head.status.isSuccessful)
    }

    /// Whether a response translated from HTTP/2 should go out chunked so
    /// that trailers can follow: it declares `Trailer`, or the client said
    /// `TE: trailers`; the client speaks HTTP/1.1 and the response may have a
    /// body. Only chunked framing carries trailers, so its `Content-Length`
    /// (framing only, RFC 9112 §6.1) then gives way.
    static func expectsTrailers(_ head: HTTPResponseHead, answering request: HTTPRequestHead) -> Bool {
        guard request.version == .http1_1, request.method != .head, !head.status.forbidsBody,
              !(request.method == .connect && head.status.isSuccessful) else {
            return false
        }
        if head.fields.contains(.trailer) { return true }
        return request.fields.values(.te).contains { value in
            value.split(separator: ",").contains { member in
                let coding = member.split(separator: ";").first.map { String($0.filter { $0 != " " && $0 != "\t" }) }
                return HTTPField.lowercaseASCII(coding ?? "") == "trailers"
            }
        }
    }
}
