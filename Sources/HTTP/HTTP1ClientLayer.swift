/// The client side of one HTTP/1.1 connection, without I/O: one request at a
/// time, whether the connection can carry another, interim responses, a
/// 101 that switches protocols, and how an exchange fails when the server
/// closes. Built on `HTTP1Parser` and `HTTP1Serializer`; a driver
/// (`HTTP1ClientDriver` in Transport) feeds it the connection's events and
/// carries out what it returns.
///
/// Events in: bytes received (`receive`), the server's end of input
/// (`readEnded`), the connection closing (`channelClosed`); from the owner,
/// the request (`sendRequestHead`, `sendBody`, `sendEnd`),
/// `stopAfterExchange`, `detachForTunnel` and `drop`. What to do comes back
/// as return values: bytes to write, one `Step` at a time from
/// `next(consumerWants:)`, or an `HTTP1ConnectionCommand`. Nothing is
/// queued: each call returns one small value.
///
/// Invariants:
/// - At most one exchange. A new request may go out only in `.open` with no
///   exchange (`canOpenExchange`); the exchange ends when its request and
///   its response are both complete, and the connection is then reusable
///   (`.completed(.reusable)`) only if the response allowed it, no request
///   or owner asked to close, and the server did not finish sending.
/// - Between exchanges the layer keeps reading, to notice the server closing
///   (bytes then are an unsolicited response, an error).
/// - Response parts come out of `next` only while the consumer wants them,
///   except a message's end once its body was all returned.
/// - Retry safety: an exchange that fails because the server closed before
///   any byte of its response, on a connection that carried an exchange
///   before, fails with `.responseOnReusedConnection`.
/// - A 101 the request did not ask for as a tunnel (`.upgraded`): the
///   response ends, reading stops (bytes past the 101 stay in the parser)
///   until the owner takes the connection with `detachForTunnel`. A 101 to
///   an extended CONNECT sent as `Upgrade` (`.tunnelling`): the bytes after
///   it are the exchange's, both ways; its end this way is a half-close.
///
/// A value type; use it from one queue at a time.
public struct HTTP1ClientLayer: Sendable {
    /// Where the connection is.
    public enum Phase: Hashable, Sendable {
        /// Requests may be sent (one at a time).
        case open
        /// The current exchange is the last one (either side said close, or the owner did).
        case lastExchange
        /// The server answered 101: the connection carries another protocol,
        /// which this layer does not speak. Reading pauses until the owner
        /// detaches the connection.
        case upgraded
        /// The server answered 101 to a request translated from an HTTP/2
        /// extended CONNECT (RFC 8441): the bytes after the 101 are the
        /// exchange's, both ways. The connection closes when both ways ended.
        case tunnelling
        case closed
    }

    /// The request in flight.
    public struct Exchange: Hashable, Sendable {
        /// The exchange's number on the connection: 1, 2, …
        public let streamID: Int
        /// The request is an HTTP/2 extended CONNECT sent as an HTTP/1.1
        /// `Upgrade`: a 101 makes the exchange a tunnel (`Phase.tunnelling`).
        public let tunnelAsked: Bool
        /// The final response allows another exchange after it; nil until it arrived.
        public internal(set) var responseKeepAlive: Bool?
        /// A response head (interim or final) arrived.
        public internal(set) var responseStarted = false
        /// Our request is complete.
        public internal(set) var requestEnded = false
        /// The response's end was returned by `next`.
        public internal(set) var responseEnded = false

        /// How the exchange fails when the connection ends before its
        /// response head: on a reused connection with no byte of response,
        /// the request was most likely never processed.
        public var unansweredStage: HTTP1UnfinishedMessage {
            streamID > 1 && !responseStarted ? .responseOnReusedConnection : .response
        }
    }

    /// What the driver does next, from `next(consumerWants:)`. After any step
    /// but `.idle` the driver carries it out and calls `next` again.
    public enum Step: Hashable, Sendable {
        /// Nothing more to do until another event; reading as said.
        case idle(HTTP1Reading)
        /// Deliver an interim (1xx other than 101) response head.
        case interimResponse(HTTP1ParsedResponseHead)
        /// Deliver the final response head.
        case response(HTTP1ParsedResponseHead)
        /// After a 101 that the request did not ask for as a tunnel: deliver
        /// the response's end; the exchange is over and the connection waits
        /// for `detachForTunnel`.
        case upgraded
        /// Deliver response body bytes (in a tunnel, the server's bytes).
        case responseBody([UInt8])
        /// Deliver the response's end.
        case responseEnd(trailers: HTTPFields?)
        /// The exchange is over: see `Completion`.
        case completed(Completion)
        /// Close the connection; the exchange in progress, if this is not
        /// nil, fails with it first.
        case close(failing: HTTP1ExchangeFailure?)
    }

    /// What follows once both messages of an exchange may be complete.
    public enum Completion: Hashable, Sendable {
        /// One of them is not complete yet.
        case pending
        /// The connection may carry another request: tell the owner.
        case reusable
        /// The connection ends: close it.
        case close
    }

    /// A request head as written.
    public struct SentHead: Sendable {
        /// The head as it went out: HTTP/1.1 version, `Host` added from the
        /// authority when missing, an extended CONNECT turned into `Upgrade`,
        /// fields as serialized.
        public let head: HTTPRequestHead
        /// The bytes to write.
        public let serialized: HTTP1SerializedHead
        /// The exchange's number on the connection.
        public let streamID: Int
        /// The head ended the request (its framing allows no body).
        public let requestEnded: Bool
    }

    /// The end of a request as written.
    public struct SentEnd: Sendable {
        /// The bytes to write (possibly none).
        public let bytes: [UInt8]
        /// The trailers that went out (nil when none: only chunked carries them).
        public let trailers: HTTPFields?
        /// In a tunnel: shut our sending side down instead of writing.
        public let halfClose: Bool
        /// What follows, once the request is marked ended.
        public let completion: Completion
    }

    /// Work the next `next` does before reading on: the step before it was
    /// delivered and may have changed the exchange.
    private enum Followup: Hashable, Sendable {
        case none
        /// A response's end was delivered: see whether the exchange is over.
        case completeExchange
        /// A 101 not asked as a tunnel was delivered: the exchange ends there.
        case upgrade
    }

    public private(set) var phase = Phase.open
    /// The exchange in progress, from its request head until both messages
    /// are complete (or the connection fails, is detached or dropped).
    public private(set) var exchange: Exchange?
    /// The server finished sending.
    public private(set) var peerEnded = false
    /// The parse error that made the connection fail, if one did.
    public private(set) var failure: HTTP1ParseError?
    private var parser: HTTP1Parser
    private var serializer = HTTP1Serializer()
    private var nextStreamID = 1
    private var followup = Followup.none

    public init(limits: HTTP1ParserLimits = .standard) {
        parser = HTTP1Parser(parsing: .response, limits: limits)
    }

    /// Whether a request may go out now.
    public var canOpenExchange: Bool {
        phase == .open && exchange == nil
    }

    // MARK: Connection events

    /// Bytes received; ignored once closed. Run `next` afterwards.
    public mutating func receive(_ bytes: [UInt8]) {
        guard phase != .closed else { return }
        parser.feed(bytes)
    }

    /// The server finished sending; run `next` afterwards.
    public mutating func readEnded() {
        peerEnded = true
        guard phase != .closed else { return }
        parser.finish()
    }

    /// The connection closed; returns how the exchange in progress, if any,
    /// was unfinished (it fails, with `failure` when there is one).
    public mutating func channelClosed() -> HTTP1UnfinishedMessage? {
        phase = .closed
        guard let current = exchange else { return nil }
        exchange = nil
        return current.unansweredStage
    }

    /// The owner asks to close: after the exchange in progress, or at once
    /// when there is none (returns true: close the connection).
    public mutating func stopAfterExchange() -> Bool {
        guard phase != .closed else { return false }
        guard exchange == nil else {
            phase = .lastExchange
            return false
        }
        phase = .closed
        return true
    }

    /// The connection is being reset: forget the exchange and stop.
    public mutating func drop() {
        exchange = nil
        phase = .closed
    }

    /// The next thing to do. `consumerWants`: the owner of the exchange in
    /// progress takes response parts now (ignored when there is none).
    public mutating func next(consumerWants: Bool) -> Step {
        switch followup {
        case .none:
            break
        case .completeExchange:
            followup = .none
            let completion = completeIfDone()
            if completion != .pending { return .completed(completion) }
        case .upgrade:
            followup = .none
            exchange = nil
            phase = .upgraded
            return .upgraded
        }
        while isParsing {
            if waitsForConsumer(consumerWants), !parser.endsMessageNext { return .idle(.pause) }
            let event: HTTP1Event?
            do {
                event = try parser.next()
            } catch {
                return fail(error)
            }
            guard let event else {
                return peerEnded ? peerFinishedSending() : .idle(.resume)
            }
            guard exchange != nil else { continue }
            switch event {
            case .responseHead(let parsed) where parsed.isInterim:
                exchange?.responseStarted = true
                return .interimResponse(parsed)
            case .responseHead(let parsed):
                exchange?.responseStarted = true
                exchange?.responseKeepAlive = parsed.keepAlive
                if parsed.framing == .tunnel {
                    // The stream carries the tunnel's bytes from here on; set before the owner
                    // hears of the 101, which may reset the stream at once. Any other 101 ends
                    // the exchange once delivered.
                    if exchange?.tunnelAsked == true && parsed.head.status == .switchingProtocols {
                        phase = .tunnelling
                    } else {
                        followup = .upgrade
                    }
                }
                return .response(parsed)
            case .body(let bytes):
                return .responseBody(bytes)
            case .end(let trailers):
                exchange?.responseEnded = true
                followup = .completeExchange
                return .responseEnd(trailers: trailers)
            case .tunnel(let bytes):
                if phase == .tunnelling, !bytes.isEmpty { return .responseBody(bytes) }
            case .requestHead:
                continue
            }
        }
        return .idle(.unchanged)
    }

    // MARK: The request, from the owner

    /// Serializes a request head and starts its exchange; write the returned
    /// bytes. An extended CONNECT (`:protocol`) goes out as the HTTP/1.1
    /// `Upgrade` handshake (RFC 8441 §5) with `webSocketKey`, which is
    /// evaluated only then.
    public mutating func sendRequestHead(_ head: HTTPRequestHead, framing: HTTP1Framing?,
                                         webSocketKey: @autoclosure () -> String) throws(HTTP1LayerError) -> SentHead {
        guard canOpenExchange else { throw exchange == nil ? .connectionClosing : .connectionBusy }
        var head = head
        var framing = framing
        let tunnelAsked = head.isExtendedConnect
        if tunnelAsked {
            head = ExtendedConnect.http1Upgrade(head, key: webSocketKey())
            framing = HTTP1Framing.none
        }
        if head.version == .http2 { head.version = .http1_1 }
        if !head.fields.contains(.host), let authority = head.authority { head.fields.append("Host", authority) }
        let serialized: HTTP1SerializedHead
        do {
            serialized = try serializer.writeRequestHead(head, framing: framing)
        } catch {
            throw .serialize(error)
        }
        parser.expectResponse(to: head.method)
        head.fields = serialized.fields
        let streamID = nextStreamID
        nextStreamID += 1
        var current = Exchange(streamID: streamID, tunnelAsked: tunnelAsked)
        if head.version != .http1_1 || serialized.fields.requestsClose || tunnelAsked { phase = .lastExchange }
        if !serialized.framing.allowsBody {
            _ = try? serializer.writeEnd()
            // A tunnel's request stays open: its body is the bytes after a 101.
            current.requestEnded = !tunnelAsked
        }
        exchange = current
        return SentHead(head: head, serialized: serialized, streamID: streamID, requestEnded: current.requestEnded)
    }

    /// Frames body bytes of the request in progress (in a tunnel, passes them
    /// on unframed); write what comes back.
    public mutating func sendBody(_ bytes: [UInt8]) throws(HTTP1LayerError) -> [UInt8] {
        guard exchange != nil else { throw .exchangeOver }
        if phase == .tunnelling { return bytes }
        do {
            return try serializer.writeBody(bytes)
        } catch {
            throw .serialize(error)
        }
    }

    /// Ends the request in progress (trailers only when chunked; in a tunnel,
    /// a half-close) and says what follows.
    public mutating func sendEnd(trailers: HTTPFields?) throws(HTTP1LayerError) -> SentEnd {
        guard exchange != nil, phase != .closed else { throw .exchangeOver }
        if phase == .tunnelling {
            // The tunnel's end this way is a half-close; a tunnel has no trailers.
            exchange?.requestEnded = true
            return SentEnd(bytes: [], trailers: nil, halfClose: true, completion: completeIfDone())
        }
        let end: (bytes: [UInt8], trailers: HTTPFields?)
        do {
            end = try serializer.writeEnd(offering: trailers)
        } catch {
            throw .serialize(error)
        }
        exchange?.requestEnded = true
        return SentEnd(bytes: end.bytes, trailers: end.trailers, halfClose: false, completion: completeIfDone())
    }

    /// Hands the connection over after a 101; returns the bytes received past
    /// it and whether the server's end of input was read too.
    public mutating func detachForTunnel() throws(HTTP1LayerError) -> (leftover: [UInt8], peerEnded: Bool) {
        guard phase == .upgraded else { throw .noSwitchingProtocols }
        var leftover: [UInt8] = []
        while case .tunnel(let bytes)? = try? parser.next() { leftover += bytes }
        phase = .closed
        return (leftover, peerEnded)
    }

    // MARK: Internals

    /// Whether `next` reads on: not once closed, and in a tunnel only until the server's end.
    private var isParsing: Bool {
        switch phase {
        case .tunnelling: return exchange.map { !$0.responseEnded } ?? false
        case .closed: return false
        case .open, .lastExchange, .upgraded: return true
        }
    }

    /// After a 101, until detached, always; else while the response ended
    /// (until the exchange completes) or its consumer does not want more.
    private func waitsForConsumer(_ consumerWants: Bool) -> Bool {
        if phase == .upgraded { return true }
        guard let current = exchange else { return false }
        return current.responseEnded || !consumerWants
    }

    /// The server finished sending and every byte before it was parsed.
    private mutating func peerFinishedSending() -> Step {
        guard let current = exchange else {
            phase = .closed
            return .close(failing: nil)
        }
        if phase == .tunnelling {
            // In a tunnel, the server's end of input ends the exchange's inbound side.
            guard !current.responseEnded else { return .idle(.unchanged) }
            exchange?.responseEnded = true
            followup = .completeExchange
            return .responseEnd(trailers: nil)
        }
        guard current.responseKeepAlive == nil else { return .idle(.unchanged) }
        // Before any final response head: none will come (an intermediary that closes
        // without answering). Waiting would last until a timeout.
        exchange = nil
        phase = .closed
        return .close(failing: .peerClosed(during: current.unansweredStage))
    }

    /// A parse error: the exchange fails and the connection closes.
    private mutating func fail(_ error: HTTP1ParseError) -> Step {
        let current = exchange
        exchange = nil
        phase = .closed
        if case .truncated = error {
            return .close(failing: current.map { _ in .peerClosed(during: .response) })
        }
        failure = error
        return .close(failing: current.map { _ in .malformed(error) })
    }

    /// Once the request and its response are both complete: reuse or close.
    private mutating func completeIfDone() -> Completion {
        guard let current = exchange, current.responseEnded, current.requestEnded else { return .pending }
        exchange = nil
        guard phase == .open, current.responseKeepAlive == true, !peerEnded else {
            phase = .closed
            return .close
        }
        return .reusable
    }
}
