import Evidence
import HTTP
import TLS
import Transport
import Wire

/// Runs one client connection's `DownstreamLayer` on Transport: it turns
/// channel, HTTP connection and stream events into layer events and carries
/// out the layer's commands as the layer issues them (`DownstreamActions`:
/// peek, TLS, CONNECT, tunnels, and each exchange's streams; see
/// `DownstreamDriver+Exchanges.swift`), handing each command's outcome back
/// as its result. Where the connection is lives in the layer alone; the
/// driver keeps only who holds the channel (`owner`).
///
/// Loop-confined: made by `ProxyRuntime.accept` on the connection's loop;
/// every method runs there. It lives in its `LoopState` until the
/// connection is finished. `@unchecked Sendable` only so that completions
/// Wire runs on this same loop (`Connection.connect`) may capture it.
final class DownstreamDriver: @unchecked Sendable, DownstreamActions {
    /// Which I/O object takes the client channel's events, with what a
    /// CONNECT left for the next owner. Where the connection *is* (peeking,
    /// handshaking, serving, tunnelling, closed) is the layer's `phase`
    /// alone; this says only who holds the channel.
    ///
    /// Invariants: a CONNECT's probe (the TCP connection to its target) is
    /// held from the probe's answer until the client's TLS is intercepted
    /// (it closes) or a passthrough relay takes it, by the HTTP connection
    /// that serves the CONNECT and then by the channel; the bytes read past
    /// the CONNECT are held by the channel until its ClientHello peek takes
    /// them. A relay and a finished driver hold neither; `finished` is last.
    enum ChannelOwner {
        /// The channel's own events reach the driver (`channelEvent`): before
        /// anything started, while it peeks at a ClientHello (reverse mode,
        /// or after a CONNECT's 200 handed it back), and while a passthrough
        /// tunnel through an upstream proxy is being opened. `probe`: the
        /// CONNECT's probe; `leftover`: bytes the client sent after its
        /// CONNECT, read before the tunnel began.
        case channel(probe: Connection?, leftover: [UInt8])
        /// An HTTP connection has it: handshaking while the layer's phase is
        /// `.handshaking`, serving otherwise (plain, probing a CONNECT target,
        /// intercepting). Its events are stale once another owner took over.
        /// `probe`: the probe of the CONNECT it serves, once answered.
        case http(HTTPServerConnection, probe: Connection?)
        /// A relay (passthrough tunnel or upgraded connection) has it, until both sides closed.
        case relay(TunnelRelay)
        /// The driver has finished (`finish`); nothing more happens.
        case finished

        /// The channel before anything started: no probe, nothing left over.
        static var unstarted: ChannelOwner { .channel(probe: nil, leftover: []) }

        /// The CONNECT's probe, if this owner holds one.
        var probe: Connection? {
            switch self {
            case .channel(let probe, _), .http(_, let probe): return probe
            case .relay, .finished: return nil
            }
        }
    }

    let id: ConnectionID
    let runtime: ProxyRuntime
    let loopState: LoopState
    let channel: ByteChannel
    var layer: DownstreamLayer
    var owner = ChannelOwner.unstarted
    /// The streams of each exchange in progress. Its storage outlives its
    /// entries (a key and a reference each), so requests on a keep-alive
    /// connection reuse it.
    var exchanges = ExchangeTable<ExchangeStreams>()
    var nextSequence = 1
    /// The TLS session of the upstream connection the last exchange opened
    /// on, as records show it (see `upstreamTLS`); nil before any.
    var lastUpstreamTLS: (connection: ConnectionID, details: TLSDetails?)?
    /// Whether the layer is handling an event (see `feed`).
    ///
    /// Invariant: transport callbacks wait only while the layer handles an
    /// event (it is being mutated, so nothing may reach it); idle, none waits.
    enum Feeding {
        case idle
        /// Handling an event and carrying out its commands; `waiting`: the
        /// callbacks that arrived meanwhile, in order, handled right after it.
        case handling(waiting: [DownstreamEvent])
    }

    var feeding = Feeding.idle
    /// The head, idle and body timeouts (sans-io), and the one timer that
    /// asks it, with when it fires (nil when none is armed).
    var deadline: ConnectionDeadline
    var deadlineTimer: (timer: LoopTimer, due: ContinuousClock.Instant)?

    var loop: EventLoop { loopState.loop }

    /// The HTTP connection that holds the channel; nil when another owner
    /// does. Read without asking the layer (it may be mid-step): by exchanges'
    /// commands, which exist only once it serves, and by the head timeout,
    /// which it answers (408 on HTTP/1.1) or, still handshaking, closes on.
    var httpConnection: HTTPServerConnection? {
        guard case .http(let server, _) = owner else { return nil }
        return server
    }

    /// Wraps the accepted connection; the channel speaks plaintext (forward
    /// mode, or a reverse `--listen-plain` listener) or TLS that waits for
    /// the proxy to choose a certificate (reverse).
    init(connection: Connection, runtime: ProxyRuntime, loopState: LoopState) {
        self.runtime = runtime
        self.loopState = loopState
        let security: ChannelSecurity
        switch runtime.configuration.mode {
        case .forward: security = .plaintext
        case .reverse where runtime.configuration.listenPlain: security = .plaintext
        case .reverse: security = .tlsServer(DownstreamDriver.peekSetup(runtime))
        }
        channel = ByteChannel(connection: connection, security: security)
        id = ConnectionID(.downstream, channel.id)
        layer = DownstreamLayer(id: id, localIP: connection.localAddress.ip, shared: runtime.layerSettings)
        deadline = ConnectionDeadline(timeouts: runtime.configuration.clientTimeouts, now: connection.loop.now, receivedBytes: 0)
        layer.peer = connection.remoteAddress.description
    }

    /// A TLS server setup that stops at the ClientHello, so the layer picks
    /// the certificate (or a passthrough) before the handshake goes on.
    static func peekSetup(_ runtime: ProxyRuntime) -> TLSServerSetup {
        TLSServerSetup(context: runtime.contexts.placeholder, clientHelloPolicy: .ask,
                       handshakeTimeout: runtime.configuration.connectTimeout)
    }

    /// Starts serving. Called only on the loop, once.
    func start() {
        loop.preconditionOnLoop()
        feeding = .handling(waiting: [])
        layer.start(self)
        drainReentrantEvents()
        feeding = .idle
        checkDeadline()
    }

    // MARK: Layer

    /// Feeds one event to the layer, which carries out its commands through
    /// `perform` as it issues them and acts on their outcomes in the same step.
    ///
    /// Re-entrancy: a command can make the transport call back at once,
    /// before the command returns (a reset `HTTP1ClientDriver` fails its
    /// streams before it marks itself closed; a close or an abort can report
    /// the connection closed; a failed takeover for an upgrade relay ends the
    /// connection). The layer is being mutated then, and Swift's exclusivity
    /// forbids reaching it, so such an event waits in `feeding` and is
    /// handled right after the current one, in arrival order. That is the
    /// only thing that waits: no command's outcome is ever an event, and on
    /// the usual path nothing is queued.
    func feed(_ event: DownstreamEvent) {
        if case .handling(var waiting) = feeding {
            feeding = .handling(waiting: []) // lets go of the list, so the append is in place
            waiting.append(event)
            feeding = .handling(waiting: waiting)
            return
        }
        feeding = .handling(waiting: [])
        handle(event)
        drainReentrantEvents()
        feeding = .idle
    }

    /// Hands the callbacks that re-entered while the layer was busy to it, in order.
    private func drainReentrantEvents() {
        while case .handling(var waiting) = feeding, !waiting.isEmpty {
            let next = waiting.removeFirst()
            feeding = .handling(waiting: waiting)
            handle(next)
        }
    }

    /// Hands one event to the layer (which sends an exchange's event straight to its flow).
    private func handle(_ event: DownstreamEvent) {
        layer.handle(event, self)
    }

    /// Carries out one of the layer's commands (`DownstreamActions`). Never
    /// reaches the layer: it is being mutated while this runs.
    @discardableResult
    func perform(_ command: DownstreamCommand) -> CommandOutcome {
        switch command {
        case .exchange(let exchange, let command):
            return perform(command, for: exchange)
        case .servePlainHTTP:
            let server = HTTPServerConnection(channel: channel, configuration: runtime.serverConfiguration)
            owner = .http(server, probe: nil)
            server.start { [self] event in serverEvent(event, from: server) }
        case .probeConnectTarget(_, let target):
            probeConnectTarget(target)
        case let .acceptConnect(exchange, head):
            return acceptConnect(exchange, head)
        case .peekClientHello:
            peekClientHello()
        case let .startTLS(name, changes):
            startTLS(certificateName: name, changes: changes)
        case .openTunnel(let target):
            openTunnel(to: target)
        case .record(let record):
            runtime.sink.record(record, on: loopState)
        case .close:
            close()
        }
        return .done
    }

    // MARK: HTTP connection

    func serverEvent(_ event: HTTPServerConnectionEvent, from server: HTTPServerConnection) {
        switch event {
        case .ready(let version):
            // Plain HTTP serves at once; TLS after the handshake. Either way the timeouts start here.
            deadline.connectionReady(at: loop.now, http2: version == .http2)
            checkDeadline()
            // The layer takes it while it handshakes (a plain connection has no TLS to report).
            guard case .http(let current, _) = owner, current === server, let info = channel.tlsInfo else { return }
            feed(.tlsEstablished(info))
        case .stream(let stream):
            accept(stream)
        case .malformedRequest(let error, let answer, let wire):
            feed(.malformedRequest(error, answer: answer, wire: wire))
        case .refusedStream(let streamID, let request, let reason):
            let exchange = ExchangeID(connection: id, sequence: nextSequence)
            nextSequence += 1
            feed(.refusedStream(exchange, streamID: streamID, request: request, reason: reason))
        case .closed(let error):
            // A connection that handed the channel on (to a CONNECT's tunnel) closes unheard.
            guard case .http(let current, _) = owner, current === server else { return }
            feed(.clientConnectionEnded(error))
            finish()
        }
    }

    // MARK: TLS and tunnels

    private func peekClientHello() {
        let handler: (ChannelEvent) -> Void = { [self] event in channelEvent(event) }
        switch runtime.configuration.mode {
        case .reverse:
            owner = .unstarted
            channel.start(handler)
        case .forward:
            var leftover: [UInt8] = []
            if case .channel(_, let read) = owner { leftover = read }
            owner = .channel(probe: owner.probe, leftover: [])
            channel.setHandler(handler)
            channel.startTLS(.tlsServer(DownstreamDriver.peekSetup(runtime)),
                             leftover: leftover)
        }
    }

    /// The channel's own events while it peeks (before an HTTP connection takes it).
    private func channelEvent(_ event: ChannelEvent) {
        switch event {
        case .clientHello(let hello):
            feed(.clientHello(hello))
        case .closed(let error):
            guard case .channel = owner else { return }
            feed(.tlsFailed(.transport(error ?? .peerClosed(during: .tlsHandshake), at: .downstreamTLSHandshake)))
            finish()
        case .established, .received, .readEOF, .writable:
            break
        }
    }

    private func startTLS(certificateName name: String, changes: DownstreamTLSChanges) {
        let context: TLSContext
        do {
            context = try runtime.contexts.server(for: name, changes: changes)
        } catch {
            channel.abort()
            return
        }
        owner.probe?.close()
        let server = HTTPServerConnection(channel: channel, configuration: runtime.serverConfiguration)
        owner = .http(server, probe: nil)
        server.adopt { [self] event in serverEvent(event, from: server) }
        channel.continueHandshake(with: context)
    }

    /// Resolves and connects to the CONNECT target; the answer goes to the layer.
    /// Through an upstream proxy nothing is probed: the CONNECT is accepted at
    /// once and the upstream proxy is asked when a connection is needed (an
    /// exchange's, or a passthrough tunnel's), so an upstream proxy that
    /// intercepts too sees no connection it would record as abandoned.
    private func probeConnectTarget(_ target: UpstreamTarget) {
        if runtime.configuration.upstreamProxy?.address(for: target.host) != nil {
            // On a later loop turn, as a probe's answer comes: the HTTP connection
            // that delivered the CONNECT must be out of its call before the channel is taken back.
            return loop.execute { [self] in
                guard case .probing = layer.phase else { return }
                feed(.connectTargetReached)
            }
        }
        let loopGuard = runtime.currentLoopGuard
        Connection.connect(host: target.host, port: UInt16(target.port), on: loop,
                           timeout: runtime.configuration.connectTimeout) { [self] result in
            switch result {
            case .success(let connection):
                let peer = connection.remoteAddress
                if loopGuard.refuses(peerIP: peer.ip, port: Int(peer.port)) {
                    connection.close()
                    feed(.connectTargetFailed(ProxyError(
                        .protocolError, at: .downstreamConnect,
                        "\(target.authority) resolves to \(peer), this proxy's own listen address; refused to avoid a loop",
                        status: .proxyLoopDetected)))
                    return
                }
                guard case .probing = layer.phase, case .http(let server, .none) = owner else {
                    connection.close()
                    return
                }
                owner = .http(server, probe: connection)
                feed(.connectTargetReached)
            case .failure(let error):
                feed(.connectTargetFailed(.connect(error, to: target, at: .upstreamConnectForCONNECT)))
            }
        }
    }

    /// Answers the CONNECT and takes the channel back from the HTTP
    /// connection; `.failed` when that could not be done (the layer closes).
    private func acceptConnect(_ exchange: ExchangeID, _ head: HTTPResponseHead) -> CommandOutcome {
        guard case .http(let server, let probe) = owner, let stream = exchanges.removeValue(forKey: exchange)?.client else {
            return .done
        }
        do {
            try stream.sendHead(head)
            let leftover = try server.detachForTunnel { [self] event in channelEvent(event) }
            owner = .channel(probe: probe, leftover: leftover)
            return .done
        } catch {
            return .failed(.transport(error, at: .downstreamConnect))
        }
    }

    /// Relays the client's bytes to the probed target untouched.
    private func openTunnel(to target: UpstreamTarget) {
        let probe = owner.probe
        if probe == nil, let proxy = runtime.configuration.upstreamProxy?.address(for: target.host) {
            return openTunnel(to: target, via: proxy)
        }
        guard let probe else { return close() }
        owner = .unstarted // the relay takes the probe, and the channel next
        relay(to: ByteChannel(connection: probe, security: .plaintext), serverStarted: false, leftover: [], target: target)
    }

    /// A passthrough tunnel through the upstream proxy: CONNECT there first.
    private func openTunnel(to target: UpstreamTarget, via proxy: HTTPProxyAddress) {
        UpstreamTunnel.open(to: target, via: proxy, on: loop, timeout: runtime.configuration.connectTimeout) { [self] result in
            guard case .channel = owner else {
                if case .success(let tunnel) = result { tunnel.channel.close() }
                return
            }
            switch result {
            case .success(let tunnel):
                relay(to: tunnel.channel, serverStarted: true, leftover: tunnel.leftover, target: target)
            case .failure(let problem):
                feed(.tunnelClosed(upstream: ConnectionID(.upstream, 0), error: problem))
                channel.abort()
                finish()
            }
        }
    }

    private func relay(to upstream: ByteChannel, serverStarted: Bool, leftover: [UInt8], target: UpstreamTarget) {
        let relay = TunnelRelay(client: channel, server: upstream,
                                counting: runtime.layerSettings.value.recording.digests) { [self] error, traffic in
            feed(.tunnelClosed(upstream: ConnectionID(.upstream, upstream.id),
                               error: error.map { .transport($0, at: .passthroughTunnel(to: target.authority)) },
                               relayed: traffic.map { ($0.downstream, $0.upstream) }))
            finish()
        }
        owner = .relay(relay)
        relay.start(clientStarted: true, serverStarted: serverStarted)
        if !leftover.isEmpty { channel.write(leftover) }
        channel.passThrough()
    }

    // MARK: Ending

    /// Closes gracefully: an HTTP connection after its exchanges, a tunnel at once.
    func close() {
        switch owner {
        case .http(let server, _): server.close()
        case .channel, .relay: channel.close()
        case .finished: break
        }
    }

    /// The proxy is stopping: finish what is in progress, take nothing new,
    /// then close (HTTP/1.1 after the exchange in progress, HTTP/2 with GOAWAY
    /// once its streams are done; both wait for the client's FIN, so the last
    /// response is not lost to a reset).
    func drain() {
        loop.preconditionOnLoop()
        close()
        // A stalled exchange never ends by itself, and over HTTP/1.1 the
        // proxy reads nothing while it owes an answer, so a client that gave
        // up goes unnoticed: there is nothing to wait for.
        if layer.hasOnlyStalledExchanges { _ = terminate() }
    }

    /// The proxy stops now: records every exchange still open as broken,
    /// cuts the connection, and returns how many there were.
    func terminate() -> Int {
        loop.preconditionOnLoop()
        let open = layer.activeExchanges.count
        feed(.connectionClosed(ProxyError(.internal, at: .proxy, "the proxy stopped before the exchange finished",
                                          status: .proxyInternalError)))
        for streams in exchanges.values {
            streams.abandon()
            streams.cancelTimers()
        }
        exchanges.removeAll()
        abort()
        finish()
        return open
    }

    /// Cuts the client connection at once, whoever holds it.
    func abort() {
        switch owner {
        case .http(let server, _): server.abort()
        case .channel, .relay: channel.abort()
        case .finished: break
        }
    }

    /// Leaves the loop's bookkeeping, once. No upstream stream outlives its
    /// client connection: any still held is let go (an open HTTP/1.1 one
    /// closes its connection rather than go back to the pool mid-message).
    func finish() {
        if case .finished = owner { return }
        let probe = owner.probe
        owner = .finished
        cancelDeadlineTimer()
        for streams in exchanges.values {
            streams.abandon()
            streams.cancelTimers()
        }
        probe?.close()
        runtime.finished(self, on: loopState)
    }
}
