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
        deadline.exchangeStarted(exchange, at: .now)
        checkDeadline()
        stream.setHandler { [self] event in clientEvent(event, exchange) }
        feed(.requestHead(exchange, stream.request, wire: stream.requestWire,
                          streamID: stream.version == .http2 ? stream.streamID : nil,
                          bodyFraming: stream.requestBodyFraming))
    }

    private func clientEvent(_ event: HTTPStreamEvent, _ exchange: ExchangeID) {
        deadline.progress(exchange, at: .now)
        switch event {
        case .body(let bytes): feed(.exchange(exchange, .requestBody(bytes)))
        case .end(let trailers): feed(.exchange(exchange, .requestEnd(trailers: trailers)))
        case .writable: feed(.exchange(exchange, .clientWritable(true)))
        case .failed(let error): feed(.exchange(exchange, .clientGone(.transport(error, at: "downstream request"))))
        case .interimResponse, .response: break  // server streams receive requests only
        }
    }

    private func upstreamEvent(_ event: HTTPStreamEvent, _ exchange: ExchangeID, target: UpstreamTarget) {
        deadline.progress(exchange, at: .now)
        switch event {
        case .interimResponse(let head, let wire), .response(let head, let wire):
            feed(.exchange(exchange, .responseHead(head, wire: wire)))
        case .body(let bytes): feed(.exchange(exchange, .responseBody(bytes)))
        case .end(let trailers): feed(.exchange(exchange, .responseEnd(trailers: trailers)))
        case .writable: feed(.exchange(exchange, .upstreamWritable(true)))
        case .failed(let error):
            exchanges[exchange]?.upstream = .closed
            feed(.exchange(exchange, .upstreamFailed(.transport(error, at: "upstream \(target)"))))
        }
    }

    /// Carries out one exchange command.
    func perform(_ command: ExchangeCommand, for exchange: ExchangeID) {
        guard let streams = exchanges[exchange] else { return }
        switch command {
        case let .openUpstream(target, head, framing):
            openUpstream(target, head: head, framing: framing, for: exchange, streams)
        case .sendRequestBody(let bytes):
            guard case .open(let stream) = streams.upstream else { return }
            attempt(exchange, "upstream request body") { () throws(TransportError) in try stream.sendBody(bytes) }
            if case .open = streams.upstream, !stream.isWritable { feed(.exchange(exchange, .upstreamWritable(false))) }
        case .endRequest(let trailers):
            guard case .open(let stream) = streams.upstream else { return }
            attempt(exchange, "upstream request end") { () throws(TransportError) in try stream.sendEnd(trailers: trailers) }
        case .sendResponse(let part):
            sendResponse(part, on: streams.client, for: exchange)
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
            relayUpgraded(exchange, streams)
        case .finished(let record):
            streams.cancelTimers()
            exchanges[exchange] = nil
            deadline.exchangeFinished(exchange, at: .now, receivedBytes: channel.receivedByteCount)
            checkDeadline()
            runtime.sink.record(record, on: loopState)
        }
    }

    /// A pacing timer ran out; the exchange may be over meanwhile (its timers were cancelled then).
    private func timerFired(_ timer: ExchangeTimer, _ exchange: ExchangeID) {
        guard let streams = exchanges[exchange] else { return }
        streams.timers[timer] = nil
        feed(.exchange(exchange, .timerFired(timer)))
    }

    /// Sends a response part to the client; a head's wire form goes back to the flow.
    private func sendResponse(_ part: HTTPResponsePart, on stream: HTTPServerStream, for exchange: ExchangeID) {
        switch part {
        case .head(let head):
            do {
                let wire = try stream.sendHead(head)
                // The record holds the head as the engine wrote it (version, reason, framing fields).
                feed(.exchange(exchange, .responseHeadSent(stream.lastSentHead ?? head, wire: wire)))
            } catch {
                feed(.exchange(exchange, .clientGone(.transport(error, at: "downstream response head"))))
            }
        case .body(let bytes):
            do {
                try stream.sendBody(bytes)
                if !stream.isWritable { feed(.exchange(exchange, .clientWritable(false))) }
            } catch {
                feed(.exchange(exchange, .clientGone(.transport(error, at: "downstream response body"))))
            }
        case .end(let trailers):
            do {
                let sent = try stream.sendEnd(trailers: trailers)
                feed(.exchange(exchange, .responseEndSent(trailers: sent)))
            } catch {
                feed(.exchange(exchange, .clientGone(.transport(error, at: "downstream response end"))))
            }
        }
    }

    /// Runs an upstream call; a failure fails the upstream side of the exchange.
    private func attempt(_ exchange: ExchangeID, _ what: String, _ call: () throws(TransportError) -> Void) {
        do {
            try call()
        } catch {
            exchanges[exchange]?.abandon()
            feed(.exchange(exchange, .upstreamFailed(.transport(error, at: what))))
        }
    }

    /// Asks the loop's pool for a stream to `target` carrying `head`.
    private func openUpstream(_ target: UpstreamTarget, head: HTTPRequestHead, framing: HTTP1Framing,
                              for exchange: ExchangeID, _ streams: ExchangeStreams) {
        streams.upstream = .opening(nil, abandoned: false)
        let endpoint = HTTPEndpoint(host: target.host, port: UInt16(target.port),
                                    tls: target.scheme == .https ? runtime.upstreamTLS : nil,
                                    proxy: runtime.configuration.upstreamProxy?.address(for: target.host))
        let ticket = streams.pool.openStream(
            to: endpoint, head, framing: framing,
            handler: { [weak self] event in self?.upstreamEvent(event, exchange, target: target) },
            completion: { [weak self] result in
                // A stream nobody is left to drive (the client connection ended while it
                // opened) must not keep its pooled connection busy waiting for the body.
                guard let self else {
                    if case .success(let stream) = result { stream.reset() }
                    return
                }
                upstreamOpened(result, exchange, target: target)
            })
        // The completion never runs inside `openStream`: the stream is still opening here.
        if case .opening(nil, let abandoned) = streams.upstream {
            streams.upstream = .opening(ticket, abandoned: abandoned)
        }
    }

    private func upstreamOpened(_ result: Result<HTTPClientStream, TransportError>, _ exchange: ExchangeID,
                                target: UpstreamTarget) {
        guard let streams = exchanges[exchange], case .opening(_, let abandoned) = streams.upstream else {
            if case .success(let stream) = result { stream.reset() }
            return
        }
        switch result {
        case .failure(let error):
            streams.upstream = .closed
            feed(.exchange(exchange, .upstreamFailed(.transport(error, at: "upstream \(target)"))))
        case .success(let stream):
            guard !abandoned else {
                stream.reset()
                streams.upstream = .closed
                return
            }
            let connection = stream.connection
            if let peer = connection?.channel.remoteAddress,
               runtime.currentLoopGuard.refuses(peerIP: peer.ip, port: Int(peer.port)) {
                stream.reset()
                streams.upstream = .closed
                feed(.exchange(exchange, .upstreamFailed(ProxyError(
                    .protocolError, at: "upstream \(target)",
                    "\(target.authority) resolves to \(peer), this proxy's own listen address; refused to avoid a loop",
                    status: .proxyLoopDetected))))
                return
            }
            streams.upstream = .open(stream)
            var sent = stream.request
            sent.version = stream.version
            feed(.exchange(exchange, .upstreamOpened(
                connection: ConnectionID(.upstream, connection?.channel.id ?? 0), tls: connection?.channel.tlsInfo,
                streamID: stream.version == .http2 ? stream.streamID : nil, sent: sent, wire: stream.requestWire)))
            // An HTTP/2 origin answers no `Expect: 100-continue` (the body flows under flow
            // control): the client waiting for a 100 gets the proxy's own, and the record shows it.
            if stream.version == .http2, let exchangeStreams = exchanges[exchange],
               let wire = exchangeStreams.client.sendContinueIfOwed(), let head = exchangeStreams.client.lastSentHead {
                feed(.exchange(exchange, .responseHeadSent(head, wire: wire)))
            }
        }
    }

    /// After a 101 on both legs: takes the client's channel from its HTTP/1.1
    /// connection and the upstream one from its pooled connection (which
    /// leaves the pool), and relays the two byte streams, counted and
    /// digested each way, until both sides closed. The connection serves
    /// nothing else afterwards.
    private func relayUpgraded(_ exchange: ExchangeID, _ streams: ExchangeStreams) {
        guard let server = servingConnection, case .open(let upstreamStream) = streams.upstream,
              let upstreamConnection = upstreamStream.connection else {
            streams.abandon()
            feed(.exchange(exchange, .upgradeRelayEnded(downstream: nil, upstream: nil, error: ProxyError(
                .internal, at: "upgrade", "the connections that switched protocols were no longer there",
                status: .proxyInternalError))))
            return close()
        }
        streams.upstream = .closed
        let upstreamChannel = upstreamConnection.channel
        let relay = TunnelRelay(client: channel, server: upstreamChannel,
                                counting: layer.settings.recording.digests) { [self] error, traffic in
            let problem = error.map { ProxyError.transport($0, at: "upgraded connection") }
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
            feed(.exchange(exchange, .upgradeRelayEnded(downstream: nil, upstream: nil,
                                                        error: .transport(error, at: "upgrade"))))
            feed(.connectionClosed(nil))
            return finish()
        }
        owner = .relay(relay)
        relay.start(clientStarted: true, serverStarted: true)
        relay.relayEarlier(clientLeftover, fromClient: true)
        relay.relayEarlier(serverLeftover, fromClient: false)
    }
}
