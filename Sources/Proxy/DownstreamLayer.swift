import Evidence
import HTTP
import TLS

/// Everything a `DownstreamLayer` needs to decide, shared by every connection of a proxy.
public struct ProxyLayerSettings: Sendable {
    public var mode: ProxyMode
    /// Hosts tunnelled without interception (`--passthrough`), lowercased;
    /// `*.example.com` matches every name under example.com.
    public var passthroughHosts: [String]
    /// Refuses targets that are the proxy itself.
    public var loopGuard: LoopGuard
    /// Add-ons whose hooks every exchange runs through, in order.
    public var addons: [any ProxyAddon]
    public var recording: RecordingSettings
    /// Answers forward-mode requests addressed to the proxy itself (`LocalSite`); nil: none are.
    public var localSite: (any LocalSite)?

    public init(mode: ProxyMode, passthroughHosts: [String] = [], loopGuard: LoopGuard,
                addons: [any ProxyAddon] = [], recording: RecordingSettings, localSite: (any LocalSite)? = nil) {
        self.localSite = localSite
        self.mode = mode
        self.passthroughHosts = passthroughHosts.map(HTTPField.lowercaseASCII)
        self.loopGuard = loopGuard
        self.addons = addons
        self.recording = recording
    }

    /// True when `host` is to be tunnelled untouched.
    func isPassthrough(_ host: String) -> Bool {
        let host = HTTPField.lowercaseASCII(host)
        return passthroughHosts.contains { pattern in
            pattern.hasPrefix("*.") ? host.hasSuffix(pattern.dropFirst()) : host == pattern
        }
    }
}

/// One client connection through the proxy, as a sans-io state machine: the
/// mode layer (forward: CONNECT or absolute-form; reverse: everything to the
/// upstream), the TLS layer (peek, then intercept with a minted leaf or
/// tunnel untouched), and the HTTP layer (each request becomes an
/// `ExchangeFlow`, several at once on HTTP/2). Events in, commands out.
///
/// A value owned by the connection's driver and used on its loop only.
public struct DownstreamLayer {
    /// A CONNECT request being answered.
    struct PendingConnect {
        let id: ExchangeID
        let head: HTTPRequestHead
        let wire: HeadDigest.WireForm
        let target: UpstreamTarget
        /// The request's end arrived (a refusal's flow needs it to finish).
        var ended = false
    }

    /// Where the connection is.
    enum Phase {
        /// Forward mode, plain HTTP/1.1: absolute-form requests and CONNECT.
        case plain
        /// CONNECT received; its target is being probed before the answer.
        case probing(PendingConnect)
        /// Waiting for the client's first bytes: after a CONNECT, or on a reverse listener (nil).
        case peeking(PendingConnect?)
        /// TLS handshake with the client, every request going to `route` after
        /// it; `connect` is the CONNECT that opened it (nil in reverse mode).
        case handshaking(route: UpstreamTarget, hello: ClientHelloSummary, connect: PendingConnect?)
        /// HTTP inside the intercepted TLS; every request goes to `route`.
        case intercepting(route: UpstreamTarget, tls: TLSConnectionInfo?)
        /// Bytes relayed untouched to the CONNECT target.
        case tunnelling(PendingConnect, hello: ClientHelloSummary?)
        /// The connection is gone or going.
        case closed
    }

    public let id: ConnectionID
    let settings: ProxyLayerSettings
    /// The local IP the client connected to: the certificate name when a
    /// reverse-mode client sends no SNI (it reached us by address).
    let localIP: String
    /// The client's address, named in records of connections that carried no request.
    var peer: String?
    var phase: Phase
    var flows: [ExchangeID: ExchangeFlow] = [:]
    /// The highest exchange sequence seen, so a connection-level record gets a fresh one.
    var lastSequence = 0
    /// What the add-ons decided when the connection was accepted.
    let directives: ConnectionDirectives
    /// The connection's faults once they took effect (the proxy's TLS
    /// handshake began with its changes), written into every later record.
    var appliedConnectionFaults: [ExchangeRecord.AppliedFault] = []

    /// Asks every add-on about the new connection (`ProxyAddon.connectionAccepted`).
    public init(id: ConnectionID, localIP: String, settings: ProxyLayerSettings) {
        self.id = id
        self.localIP = localIP
        self.settings = settings
        directives = settings.addons.reduce(ConnectionDirectives()) { $0.merged(with: $1.connectionAccepted(id)) }
        switch settings.mode {
        case .forward: phase = .plain
        case .reverse: phase = .peeking(nil)
        }
    }

    /// Exchanges still in progress.
    public var activeExchanges: [ExchangeID] { flows.keys.sorted { $0.sequence < $1.sequence } }

    /// True when exchanges are in progress and every one of them is stalled by a hook.
    public var hasOnlyStalledExchanges: Bool { !flows.isEmpty && flows.values.allSatisfy(\.isStalled) }

    /// Hands `event` to `flow` where it lies; returns its commands and whether it finished.
    private static func handle(_ event: ExchangeEvent, in flow: inout ExchangeFlow) -> ([ExchangeCommand], Bool) {
        let commands = flow.handle(event)
        return (commands, flow.isFinished)
    }

    /// Forgets a finished flow. The storage goes with the last one: it holds
    /// whole flows (a few KiB each), which an idle keep-alive connection
    /// would otherwise keep for as long as it stays open.
    private mutating func removeFlow(at index: Dictionary<ExchangeID, ExchangeFlow>.Index) {
        flows.remove(at: index)
        if flows.isEmpty { flows = [:] }
    }

    /// The commands for a connection just accepted.
    public func start() -> [DownstreamCommand] {
        switch settings.mode {
        case .forward: return [.servePlainHTTP]
        case .reverse: return [.peekClientHello]
        }
    }

    /// Handles one event; returns the commands to carry out, in order.
    public mutating func handle(_ event: DownstreamEvent) -> [DownstreamCommand] {
        switch event {
        case let .requestHead(exchange, head, wire, streamID, framing):
            lastSequence = max(lastSequence, exchange.sequence)
            return requestHead(exchange, head, wire: wire, streamID: streamID, framing: framing)
        case let .exchange(exchange, event):
            return handle(event, of: exchange).map { .exchange(exchange, $0) }
        case let .malformedRequest(error, answer, wire):
            return malformedRequest(error, answer: answer, wire: wire)
        case .connectTargetReached:
            guard case .probing(let connect) = phase else { return [] }
            phase = .peeking(connect)
            return [.acceptConnect(connect.id, HTTPResponseHead(status: 200, reason: "Connection established")),
                    .peekClientHello]
        case .connectTargetFailed(let problem):
            guard case .probing(let connect) = phase else { return [] }
            phase = .plain
            var commands = refuse(connect.id, connect.head, wire: connect.wire, target: connect.target, status: 502,
                                  problem, streamID: nil)
            if connect.ended { commands += handle(.exchange(connect.id, .requestEnd(trailers: nil))) }
            // A client whose CONNECT failed has nothing more to say on this connection.
            return commands + [.close]
        case .clientHello(let hello):
            return clientHello(hello)
        case .tlsEstablished(let info):
            guard case .handshaking(let route, _, _) = phase else { return [] }
            phase = .intercepting(route: route, tls: info)
            return []
        case .tlsFailed(let problem):
            let hello: ClientHelloSummary?
            let connect: PendingConnect?
            switch phase {
            case .handshaking(_, let seen, let pending): (hello, connect) = (seen, pending)
            case .peeking(let pending): (hello, connect) = (nil, pending)
            case .plain, .probing, .intercepting, .tunnelling, .closed: return [.close]
            }
            phase = .closed
            return [.record(annotated(connectionRecord(connect: connect, hello: hello, error: problem))), .close]
        case let .tunnelClosed(upstream, problem):
            guard case .tunnelling(let connect, let hello) = phase else { return [] }
            phase = .closed
            return [.record(tunnelRecord(connect, hello: hello, upstream: upstream, error: problem))]
        case .connectionClosed(let problem):
            return connectionClosed(problem)
        }
    }

    /// Handles one event of an exchange; returns that exchange's commands, in
    /// order, its record annotated like `handle(_:)`'s. The driver's path for
    /// the events of exchanges in progress (most events): no array is built
    /// to wrap each command in a `DownstreamCommand`.
    public mutating func handle(_ event: ExchangeEvent, of exchange: ExchangeID) -> [ExchangeCommand] {
        guard let index = flows.index(forKey: exchange) else {
            if case .probing(var connect) = phase, connect.id == exchange, case .requestEnd = event {
                connect.ended = true
                phase = .probing(connect)
            }
            return []
        }
        // Mutated in place in the dictionary's storage: reading the flow
        // out and back copied it and its recorders on every event.
        let (commands, finished) = DownstreamLayer.handle(event, in: &flows.values[index])
        guard finished else { return commands }
        removeFlow(at: index)
        guard !appliedConnectionFaults.isEmpty else { return commands }
        return commands.map { command in
            guard case .finished(let record) = command else { return command }
            return .finished(annotated(record))
        }
    }

    // MARK: Requests

    private mutating func requestHead(_ exchange: ExchangeID, _ head: HTTPRequestHead, wire: HeadDigest.WireForm,
                                      streamID: Int?, framing: HTTP1Framing) -> [DownstreamCommand] {
        let route: UpstreamTarget
        let tls: TLSConnectionInfo?
        switch phase {
        case .plain:
            if head.method == "CONNECT" { return connect(exchange, head, wire: wire) }
            if let site = settings.localSite, LocalSiteAddress.isAddressed(head, loopGuard: settings.loopGuard) {
                return answerLocally(exchange, head, wire: wire, framing: framing, site: site)
            }
            guard head.targetForm == .absolute, let scheme = head.scheme.flatMap(UpstreamTarget.Scheme.init),
                  let target = head.authority.flatMap({ UpstreamTarget(authority: $0, scheme: scheme) }) else {
                return refuse(exchange, head, wire: wire, streamID: streamID, status: 400, .protocolError,
                              "a forward proxy needs an absolute-form target (http://host/path) or CONNECT, got \"\(head.target)\"")
            }
            route = target
            tls = nil
        case .intercepting(let target, let info):
            guard head.method != "CONNECT" || head.isExtendedConnect else {
                return refuse(exchange, head, wire: wire, streamID: streamID, status: 501, .protocolError,
                              "CONNECT inside an intercepted connection is not supported")
            }
            route = target
            tls = info
        case .probing, .peeking, .handshaking, .tunnelling, .closed:
            // The driver reads no requests in these phases; a head here is a driver bug, refused rather than trusted.
            return refuse(exchange, head, wire: wire, streamID: streamID, status: 500, .internal,
                          "a request arrived while the connection was not serving HTTP")
        }
        if settings.loopGuard.refuses(route) {
            return refuse(exchange, head, wire: wire, target: route, status: 502, loopError(route), streamID: streamID)
        }
        let client = ExchangeFlow.ClientStream(connection: id, streamID: streamID, tls: tls, bodyFraming: framing)
        let context = ExchangeHookContext(id: exchange, request: head, target: route, tap: settings.recording.tap)
        let hooks = settings.addons.compactMap { $0.hook(for: context) }
        var flow = ExchangeFlow(id: exchange, target: route, client: client, hooks: hooks,
                                settings: settings.recording)
        let commands = flow.start(head, wire: wire)
        if !flow.isFinished { flows[exchange] = flow }
        return wrap(commands, of: exchange)
    }

    /// A request for the proxy's own pages: its flow has the site's hook
    /// only and no target, so it is answered and recorded, never forwarded.
    private mutating func answerLocally(_ exchange: ExchangeID, _ head: HTTPRequestHead, wire: HeadDigest.WireForm,
                                        framing: HTTP1Framing, site: any LocalSite) -> [DownstreamCommand] {
        let client = ExchangeFlow.ClientStream(connection: id, streamID: nil, tls: nil, bodyFraming: framing)
        var flow = ExchangeFlow(id: exchange, target: nil, client: client, hooks: [LocalSiteHook(site: site)],
                                settings: settings.recording)
        let commands = flow.start(head, wire: wire)
        if !flow.isFinished { flows[exchange] = flow }
        return wrap(commands, of: exchange)
    }

    /// A CONNECT on the plain connection: probe the target before answering.
    private mutating func connect(_ exchange: ExchangeID, _ head: HTTPRequestHead,
                                  wire: HeadDigest.WireForm) -> [DownstreamCommand] {
        guard let target = head.authority.flatMap({ UpstreamTarget(authority: $0, scheme: .https) }) else {
            return refuse(exchange, head, wire: wire, streamID: nil, status: 400, .protocolError,
                          "CONNECT target \"\(head.authority ?? "")\" is not host:port")
        }
        if settings.loopGuard.refuses(target) {
            return refuse(exchange, head, wire: wire, target: target, status: 502, loopError(target), streamID: nil)
                + [.close]
        }
        phase = .probing(PendingConnect(id: exchange, head: head, wire: wire, target: target))
        return [.probeConnectTarget(exchange, target)]
    }

    /// The client's first bytes are a ClientHello: intercept or tunnel.
    private mutating func clientHello(_ hello: ClientHelloSummary) -> [DownstreamCommand] {
        guard case .peeking(let connect) = phase else { return [] }
        guard let connect else {
            // Reverse mode: present a leaf for the name the client asked for, or the address it
            // reached when it sent none; for an SNI that is not a host name, the address or host
            // inside it (an IP, `host:port`), else the configured upstream's name.
            guard case .reverse(let upstream) = settings.mode else { return [.close] }
            phase = .handshaking(route: upstream, hello: hello, connect: nil)
            let name = hello.serverNameSent == nil ? localIP : hello.serverName ?? hello.serverNameAddress ?? upstream.host
            return [interceptTLS(certificateName: name)]
        }
        // Forward mode: the name the client asked for when it is a host name, else the CONNECT's host.
        let name = hello.serverName ?? connect.target.host
        if settings.isPassthrough(name) || settings.isPassthrough(connect.target.host) {
            phase = .tunnelling(connect, hello: hello)
            return [.openTunnel(connect.target)]
        }
        phase = .handshaking(route: connect.target, hello: hello, connect: connect)
        return [interceptTLS(certificateName: name)]
    }

    /// The handshake with the client, with the add-ons' TLS changes; from
    /// now on the connection's faults are in effect and recorded.
    private mutating func interceptTLS(certificateName: String) -> DownstreamCommand {
        appliedConnectionFaults = directives.faults
        return .startTLS(certificateName: certificateName, changes: directives.tls)
    }

    /// An exchange's commands as the connection's, its record carrying the connection's faults.
    private func wrap(_ commands: [ExchangeCommand], of exchange: ExchangeID) -> [DownstreamCommand] {
        commands.map { command in
            guard case .finished(let record) = command else { return .exchange(exchange, command) }
            return .exchange(exchange, .finished(annotated(record)))
        }
    }

    /// The record with the connection's faults in effect ahead of its own.
    func annotated(_ record: ExchangeRecord) -> ExchangeRecord {
        guard !appliedConnectionFaults.isEmpty else { return record }
        var record = record
        record.faults = appliedConnectionFaults + record.faults
        return record
    }

    private func loopError(_ target: UpstreamTarget) -> ProxyError {
        ProxyError(.protocolError, at: "downstream request",
                   "the target \(target.authority) is this proxy's own listen address "
                   + "\(settings.loopGuard.listenIP):\(settings.loopGuard.port); refused to avoid a loop",
                   status: .proxyLoopDetected)
    }

    /// Refuses a request the proxy cannot route (no target), recording why.
    private mutating func refuse(_ exchange: ExchangeID, _ head: HTTPRequestHead, wire: HeadDigest.WireForm,
                                 streamID: Int?, status: Int, _ kind: ExchangeRecord.Failure.Kind,
                                 _ reason: String) -> [DownstreamCommand] {
        let problem = ProxyError(kind, at: "downstream request", reason,
                                 status: kind == .internal ? .proxyInternalError : .httpRequestError)
        return refuse(exchange, head, wire: wire, target: nil, status: status, problem, streamID: streamID)
    }

    /// Answers a request without asking upstream, through an `ExchangeFlow` so it is recorded like any other.
    private mutating func refuse(_ exchange: ExchangeID, _ head: HTTPRequestHead, wire: HeadDigest.WireForm,
                                 target: UpstreamTarget?, status: Int, _ problem: ProxyError,
                                 streamID: Int?) -> [DownstreamCommand] {
        let client = ExchangeFlow.ClientStream(connection: id, streamID: streamID, tls: currentTLS)
        var flow = ExchangeFlow(id: exchange, target: target, client: client, hooks: [], settings: settings.recording)
        let commands = flow.refuse(head, wire: wire, status: status, error: problem)
        if !flow.isFinished { flows[exchange] = flow }
        return wrap(commands, of: exchange)
    }

    /// The client's TLS session, once intercepted.
    var currentTLS: TLSConnectionInfo? {
        if case .intercepting(_, let tls) = phase { return tls }
        return nil
    }

    // MARK: Connection end

    private mutating func malformedRequest(_ error: HTTP1ParseError, answer: HTTPResponseHead?,
                                           wire: HeadDigest.WireForm?) -> [DownstreamCommand] {
        let problem = ProxyError(.protocolError, at: "downstream request", error.reason, status: .httpRequestError)
        lastSequence += 1
        let exchange = ExchangeID(connection: id, sequence: lastSequence)
        let record = annotated(malformedRecord(exchange, error: error,
                                               answer: answer.flatMap { head in wire.map { (head, $0) } },
                                               problem: problem))
        return [.record(record), .close]
    }

    private mutating func connectionClosed(_ problem: ProxyError?) -> [DownstreamCommand] {
        let idle: ExchangeRecord?
        if case .intercepting(_, let tls) = phase, lastSequence == 0, flows.isEmpty {
            idle = annotated(handshakeOnlyRecord(tls: tls, error: problem))
        } else {
            idle = nil
        }
        phase = .closed
        if let idle { return [.record(idle)] }
        let gone = problem ?? ProxyError(.closedEarly, at: "downstream", "the client closed the connection",
                                         status: .connectionTerminated)
        var commands: [DownstreamCommand] = []
        for exchange in activeExchanges {
            commands += handle(.exchange(exchange, .clientGone(gone)))
        }
        return commands
    }
}
