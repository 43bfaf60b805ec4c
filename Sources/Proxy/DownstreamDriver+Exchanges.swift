import Evidence
import HTTP
import Transport
import Wire

/// The two streams of one exchange: the client's request stream and, once
/// opened, the upstream stream from the loop's pool. Loop-confined.
final class ExchangeStreams {
    /// How far the upstream stream is.
    enum Upstream {
        case none
        /// Asked of the pool (this ticket); `abandoned` when the exchange let
        /// go meanwhile and the pool had already answered for it.
        case opening(HTTPClientPool.Ticket?, abandoned: Bool)
        case open(HTTPClientStream)
        case closed
    }

    let client: HTTPServerStream
    /// The loop's pool the upstream stream comes from.
    let pool: HTTPClientPool
    var upstream = Upstream.none
    /// The pacing timer of each message, while one runs.
    var timers: [ExchangeTimer: LoopTimer] = [:]

    init(client: HTTPServerStream, pool: HTTPClientPool) {
        self.client = client
        self.pool = pool
    }

    /// Stops the timers that still run: the exchange is over.
    func cancelTimers() {
        for timer in timers.values { timer.cancel() }
        timers.removeAll()
    }

    /// Lets go of the upstream stream: resets an open one; withdraws one
    /// still waiting in the pool, so no head goes upstream and the
    /// connection dialled for it joins the pool idle (one the pool answered
    /// for meanwhile is reset as soon as it opens).
    func abandon() {
        switch upstream {
        case .open(let stream):
            stream.reset()
            upstream = .closed
        case .opening(let ticket, _):
            if let ticket, pool.withdraw(ticket) {
                upstream = .closed
            } else {
                upstream = .opening(ticket, abandoned: true)
            }
        case .none, .closed:
            break
        }
    }
}

/// Each exchange's streams: client stream events in, upstream opened from the
/// pool, the flow's commands carried out on both.
extension DownstreamDriver {
    /// A request arrived on the HTTP connection: number it, listen to its
    /// stream, and hand its head to the layer.
    func accept(_ stream: HTTPServerStream) {
        let exchange = ExchangeID(connection: id, sequence: nextSequence)
        nextSequence += 1
        exchanges[exchange] = ExchangeStreams(client: stream, pool: loopState.pool)
        deadline.exchangeStarted(exchange, at: loop.now)
        checkDeadline()
        stream.setHandler { [self] event in clientEvent(event, exchange) }
        feed(.requestHead(exchange, stream.request, wire: stream.requestWire,
                          streamID: stream.version == .http2 ? stream.streamID : nil,
                          bodyFraming: stream.requestBodyFraming, expectsContinue: stream.expectsContinue))
    }

    private func clientEvent(_ event: HTTPStreamEvent, _ exchange: ExchangeID) {
        deadline.progress(exchange, at: loop.now)
        switch event {
        case .body(let bytes): feed(.exchange(exchange, .requestBody(bytes)))
        case .end(let trailers): feed(.exchange(exchange, .requestEnd(trailers: trailers)))
        case .writable: feed(.exchange(exchange, .clientWritable))
        case .failed(let error): feed(.exchange(exchange, .clientGone(.transport(error, at: .downstreamRequest))))
        case .interimResponse, .response: break  // server streams receive requests only
        }
    }

    fileprivate func upstreamEvent(_ event: HTTPStreamEvent, _ exchange: ExchangeID, target: UpstreamTarget) {
        deadline.progress(exchange, at: loop.now)
        switch event {
        case .interimResponse(let head, let wire), .response(let head, let wire):
            feed(.exchange(exchange, .responseHead(head, wire: wire)))
        case .body(let bytes): feed(.exchange(exchange, .responseBody(bytes)))
        case .end(let trailers): feed(.exchange(exchange, .responseEnd(trailers: trailers)))
        case .writable: feed(.exchange(exchange, .upstreamWritable))
        case .failed(let error):
            exchanges[exchange]?.upstream = .closed
            feed(.exchange(exchange, .upstreamFailed(.transport(error, at: .upstream(target)))))
        }
    }

    /// Carries out one exchange command (`ExchangeActions`) and returns its
    /// outcome to the flow that issued it. Never reaches the layer: it is
    /// being mutated while this runs.
    @discardableResult
    func perform(_ command: ExchangeCommand, for exchange: ExchangeID) -> CommandOutcome {
        guard let streams = exchanges[exchange] else { return .done }
        switch command {
        case let .openUpstream(target, head, framing):
            openUpstream(target, head: head, framing: framing, for: exchange, streams)
        case .sendRequestBody(let bytes):
            guard case .open(let stream) = streams.upstream else { return .done }
            do {
                try stream.sendBody(bytes)
            } catch {
                return upstreamFailed(streams, error, at: .upstreamRequestBody)
            }
            return stream.isWritable ? .done : .full
        case .endRequest(let trailers):
            guard case .open(let stream) = streams.upstream else { return .done }
            do {
                try stream.sendEnd(trailers: trailers)
            } catch {
                return upstreamFailed(streams, error, at: .upstreamRequestEnd)
            }
        case .sendResponse(let part):
            return sendResponse(part, on: streams.client)
        case .sendContinueIfOwed:
            // The record holds the 100 as the engine wrote it.
            guard let wire = streams.client.sendContinueIfOwed(), let head = streams.client.lastSentHead else {
                return .done
            }
            return .headSent(head, wire: wire)
        case .pauseRequestBody:
            streams.client.pauseInbound()
        case .resumeRequestBody:
            streams.client.resumeInbound()
        case .pauseResponseBody:
            if case .open(let stream) = streams.upstream { stream.pauseInbound() }
        case .resumeResponseBody:
            if case .open(let stream) = streams.upstream { stream.resumeInbound() }
        case .resetClientStream:
            streams.client.reset(code: .internalError)
        case .abandonUpstream:
            streams.abandon()
        case let .startTimer(timer, delay):
            streams.timers[timer] = loop.schedule(after: delay) { [weak self] in
                self?.timerFired(timer, exchange)
            }
        case .closeClientConnection:
            channel.close()
        case .relayUpgraded:
            return relayUpgraded(exchange, streams)
        case .finished(let record):
            streams.cancelTimers()
            // The table keeps its storage (a few words per entry): a keep-alive
            // connection does not make a new one per request.
            exchanges[exchange] = nil
            deadline.exchangeFinished(exchange, at: loop.now, receivedBytes: channel.receivedByteCount)
            checkDeadline()
            runtime.sink.record(record, on: loopState)
        }
        return .done
    }

    /// A pacing timer ran out; the exchange may be over meanwhile (its timers were cancelled then).
    private func timerFired(_ timer: ExchangeTimer, _ exchange: ExchangeID) {
        guard let streams = exchanges[exchange] else { return }
        streams.timers[timer] = nil
        feed(.exchange(exchange, .timerFired(timer)))
    }

    /// Sends a response part to the client: a head comes back with the form
    /// the engine wrote, the end with the trailers that went out.
    private func sendResponse(_ part: HTTPResponsePart, on stream: HTTPServerStream) -> CommandOutcome {
        switch part {
        case .head(let head):
            do {
                let wire = try stream.sendHead(head)
                // The record holds the head as the engine wrote it (version, reason, framing fields).
                return .headSent(stream.lastSentHead ?? head, wire: wire)
            } catch {
                return .failed(.transport(error, at: .downstreamResponseHead))
            }
        case .body(let bytes):
            do {
                try stream.sendBody(bytes)
            } catch {
                return .failed(.transport(error, at: .downstreamResponseBody))
            }
            return stream.isWritable ? .done : .full
        case .end(let trailers):
            do {
                return .endSent(trailers: try stream.sendEnd(trailers: trailers))
            } catch {
                return .failed(.transport(error, at: .downstreamResponseEnd))
            }
        }
    }

    /// An upstream send failed: lets go of the stream; the flow hears it as the send's outcome.
    private func upstreamFailed(_ streams: ExchangeStreams, _ error: TransportError, at what: ProxyError.Place) -> CommandOutcome {
        streams.abandon()
        return .failed(.transport(error, at: what))
    }

    /// Asks the loop's pool for a stream to `target` carrying `head`.
    private func openUpstream(_ target: UpstreamTarget, head: HTTPRequestHead, framing: HTTP1Framing,
                              for exchange: ExchangeID, _ streams: ExchangeStreams) {
        streams.upstream = .opening(nil, abandoned: false)
        let endpoint = HTTPEndpoint(host: target.host, port: UInt16(target.port),
                                    tls: target.scheme == .https ? runtime.upstreamTLS : nil,
                                    proxy: runtime.configuration.upstreamProxy?.address(for: target.host))
        // Both closures capture only `listener`, which is then their whole
        // context: one allocation per exchange instead of a weak box and a
        // context for each.
        let listener = UpstreamListener(driver: self, exchange: exchange, target: target)
        let ticket = streams.pool.openStream(
            to: endpoint, head, framing: framing,
            handler: { [listener] event in listener.event(event) },
            completion: { [listener] result in listener.opened(result) })
        // The completion never runs inside `openStream`: the stream is still opening here.
        if case .opening(nil, let abandoned) = streams.upstream {
            streams.upstream = .opening(ticket, abandoned: abandoned)
        }
    }

    fileprivate func upstreamOpened(_ result: Result<HTTPClientStream, TransportError>, _ exchange: ExchangeID,
                                target: UpstreamTarget) {
        guard let streams = exchanges[exchange], case .opening(_, let abandoned) = streams.upstream else {
            if case .success(let stream) = result { stream.reset() }
            return
        }
        switch result {
        case .failure(let error):
            streams.upstream = .closed
            feed(.exchange(exchange, .upstreamFailed(.transport(error, at: .upstream(target)))))
        case .success(let stream):
            guard !abandoned else {
                stream.reset()
                streams.upstream = .closed
                return
            }
            let connection = stream.connection
            if let peer = connection?.channel.remoteAddress,
               runtime.currentLoopGuard.refuses(peer: peer) {
                stream.reset()
                streams.upstream = .closed
                feed(.exchange(exchange, .upstreamFailed(ProxyError(
                    .protocolError, at: .upstream(target),
                    "\(target.authority) resolves to \(peer), this proxy's own listen address; refused to avoid a loop",
                    status: .proxyLoopDetected))))
                return
            }
            streams.upstream = .open(stream)
            var sent = stream.request
            if sent.version != stream.version { sent.version = stream.version }  // else it shares the stream's storage
            let upstreamID = ConnectionID(.upstream, connection?.channel.id ?? 0)
            feed(.exchange(exchange, .upstreamOpened(
                connection: upstreamID, tls: upstreamTLS(upstreamID, connection?.channel),
                streamID: stream.version == .http2 ? stream.streamID : nil, sent: sent, wire: stream.requestWire)))
        }
    }

    /// The upstream connection's TLS session as records show it: made once
    /// for the connection this client's exchanges last used (a pooled
    /// connection serves one exchange after another), not per exchange.
    private func upstreamTLS(_ upstream: ConnectionID, _ channel: ByteChannel?) -> TLSDetails? {
        if let last = lastUpstreamTLS, last.connection == upstream { return last.details }
        let details = channel?.tlsInfo.map { TLSDetails($0) }
        lastUpstreamTLS = (upstream, details)
        return details
    }

    /// After a 101 on both legs: takes the client's channel from its HTTP/1.1
    /// connection and the upstream one from its pooled connection (which
    /// leaves the pool), and relays the two byte streams, counted and
    /// digested each way, until both sides closed. The connection serves
    /// nothing else afterwards. `.failed` when the connections could not be
    /// taken; the client's connection is closed then (a failed detach ends
    /// it, reported through `feed` once the flow's step is over).
    private func relayUpgraded(_ exchange: ExchangeID, _ streams: ExchangeStreams) -> CommandOutcome {
        guard let server = httpConnection, case .open(let upstreamStream) = streams.upstream,
              let upstreamConnection = upstreamStream.connection else {
            streams.abandon()
            close()
            return .failed(ProxyError(.internal, at: .upgrade, "the connections that switched protocols were no longer there",
                                      status: .proxyInternalError))
        }
        streams.upstream = .closed
        let upstreamChannel = upstreamConnection.channel
        let relay = TunnelRelay(client: channel, server: upstreamChannel,
                                counting: runtime.layerSettings.value.recording.digests) { [self] error, traffic in
            let problem = error.map { ProxyError.transport($0, at: .upgradedConnection) }
            feed(.exchange(exchange, .upgradeRelayEnded(downstream: traffic?.downstream, upstream: traffic?.upstream,
                                                        error: problem)))
            feed(.connectionClosed(nil))
            finish()
        }
        let clientLeftover: [UInt8]
        let serverLeftover: [UInt8]
        do {
            clientLeftover = try server.detachForTunnel(handler: relay.clientEvents)
            serverLeftover = try upstreamConnection.detachForTunnel(handler: relay.serverEvents)
        } catch {
            upstreamChannel.abort()
            channel.abort()
            // The flow ends with this outcome; the connection's end waits for its step to be over.
            feed(.connectionClosed(nil))
            finish()
            return .failed(.transport(error, at: .upgrade))
        }
        owner.probe?.close()
        owner = .relay(relay)
        relay.start(clientStarted: true, serverStarted: true)
        relay.relayEarlier(clientLeftover, fromClient: true)
        relay.relayEarlier(serverLeftover, fromClient: false)
        return .done
    }
}

/// Takes one exchange's upstream stream events (from the pool) to the driver,
/// which it does not keep alive: a driver that finished is gone, and a stream
/// that opens after it must not keep its pooled connection busy.
private final class UpstreamListener {
    weak var driver: DownstreamDriver?
    let exchange: ExchangeID
    let target: UpstreamTarget

    init(driver: DownstreamDriver, exchange: ExchangeID, target: UpstreamTarget) {
        self.driver = driver
        self.exchange = exchange
        self.target = target
    }

    func event(_ event: HTTPStreamEvent) {
        driver?.upstreamEvent(event, exchange, target: target)
    }

    /// A stream nobody is left to drive (the client connection ended while it
    /// opened) is reset rather than left waiting for a body.
    func opened(_ result: Result<HTTPClientStream, TransportError>) {
        guard let driver else {
            if case .success(let stream) = result { stream.reset() }
            return
        }
        driver.upstreamOpened(result, exchange, target: target)
    }
}
