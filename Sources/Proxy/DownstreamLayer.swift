import Evidence
import HTTP
import TLS

/// Everything a `DownstreamLayer` needs to decide, shared by every connection of a proxy.
public struct ProxyLayerSettings: Sendable {
    public var mode: ProxyMode
    /// Hosts tunnelled without interception (`--passthrough`), lowercased;
    /// `*.example.com` matches every name under example.com.
    public var passthroughHosts: [String]
    /// When not empty, the only hosts intercepted (`--intercept`, the
    /// inverse of `passthroughHosts`, as mitmproxy's `allow_hosts`): every
    /// other CONNECT is tunnelled. Same patterns, lowercased.
    public var interceptHosts: [String]
    /// Refuses targets that are the proxy itself.
    public var loopGuard: LoopGuard
    /// Add-ons whose hooks every exchange runs through, in order.
    public var addons: [any ProxyAddon]
    public var recording: RecordingSettings
    /// Answers forward-mode requests addressed to the proxy itself (`LocalSite`); nil: none are.
    public var localSite: (any LocalSite)?
    /// Reverse mode: the client leg is plain HTTP (`--listen-plain`), no TLS to peek at.
    public var listenPlain: Bool

    public init(mode: ProxyMode, passthroughHosts: [String] = [], interceptHosts: [String] = [], loopGuard: LoopGuard,
                addons: [any ProxyAddon] = [], recording: RecordingSettings, localSite: (any LocalSite)? = nil,
                listenPlain: Bool = false) {
        self.localSite = localSite
        self.listenPlain = listenPlain
        self.mode = mode
        self.passthroughHosts = passthroughHosts.map(HTTPField.lowercaseASCII)
        self.interceptHosts = interceptHosts.map(HTTPField.lowercaseASCII)
        self.loopGuard = loopGuard
        self.addons = addons
        self.recording = recording
    }

    /// True when `host` is to be tunnelled untouched (`passthroughHosts`).
    func isPassthrough(_ host: String) -> Bool {
        ProxyLayerSettings.matches(HTTPField.lowercaseASCII(host), passthroughHosts)
    }

    /// True when a CONNECT to `connectHost` whose ClientHello asks for
    /// `serverName` is tunnelled: either name is a passthrough host, or
    /// `interceptHosts` is given and names neither.
    func tunnels(serverName: String, connectHost: String) -> Bool {
        if isPassthrough(serverName) || isPassthrough(connectHost) { return true }
        guard !interceptHosts.isEmpty else { return false }
        return ![serverName, connectHost].contains { ProxyLayerSettings.matches(HTTPField.lowercaseASCII($0), interceptHosts) }
    }

    /// True when a pattern names `host` (lowercased): itself, or `*.domain` for every name under domain.
    private static func matches(_ host: String, _ patterns: [String]) -> Bool {
        patterns.contains { pattern in
            pattern.hasPrefix("*.") ? host.hasSuffix(pattern.dropFirst()) : host == pattern
        }
    }
}

/// One `ProxyLayerSettings` value shared by reference: the proxy makes one
/// (again only when its listeners are bound) and every connection's layer
/// points at it, instead of holding its own ~0.25 KiB copy for as long as
/// the connection stays open. Immutable, hence `Sendable`.
public final class SharedLayerSettings: Sendable {
    public let value: ProxyLayerSettings

    public init(_ value: ProxyLayerSettings) {
        self.value = value
    }
}

/// One client connection through the proxy, as a sans-io state machine: the
/// mode layer (forward: CONNECT or absolute-form; reverse: everything to the
/// upstream), the TLS layer (peek, then intercept with a minted leaf or
/// tunnel untouched), and the HTTP layer (each request becomes an
/// `ExchangeFlow`, several at once on HTTP/2). Events in, commands out: each
/// command carried out through `DownstreamActions` as it is issued, its
/// outcome back as the call's result, so no outcome comes back as an event.
///
/// A value owned by the connection's driver, mutated in place there, and
/// used on its loop only; its flows live in `flows` and are mutated in place.
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

    /// Where the connection is. The passing phases are `indirect` (boxed
    /// while they last), so an intercepting connection, which may stay open
    /// and idle for long, holds no room inline for a pending CONNECT or a ClientHello.
    enum Phase {
        /// Forward mode, plain HTTP/1.1: absolute-form requests and CONNECT.
        case plain
        /// CONNECT received; its target is being probed before the answer.
        indirect case probing(PendingConnect)
        /// Waiting for the client's first bytes: after a CONNECT, or on a reverse listener (nil).
        indirect case peeking(PendingConnect?)
        /// TLS handshake with the client, every request going to `route` after
        /// it; `connect` is the CONNECT that opened it (nil in reverse mode).
        indirect case handshaking(route: UpstreamTarget, hello: ClientHelloSummary, connect: PendingConnect?)
        /// HTTP inside the intercepted TLS (or, on a reverse `--listen-plain`
        /// listener, plain HTTP from the start, `tls` nil); every request goes to `route`.
        /// `tls` is the client's session as every record of the connection
        /// shows it, made once when the handshake ended, not per request.
        case intercepting(route: UpstreamTarget, tls: TLSDetails?)
        /// Bytes relayed untouched to the CONNECT target.
        indirect case tunnelling(PendingConnect, hello: ClientHelloSummary?)
        /// The connection is gone or going.
        case closed
    }

    public let id: ConnectionID
    /// The proxy's settings, shared with every other connection.
    private let sharedSettings: SharedLayerSettings
    var settings: ProxyLayerSettings {
        _read { yield sharedSettings.value }
    }
    /// The local IP the client connected to: the certificate name when a
    /// reverse-mode client sends no SNI (it reached us by address).
    let localIP: String
    /// The client's address, named in records of connections that carried no request.
    var peer: String?
    var phase: Phase
    var flows = ExchangeTable<ExchangeFlow>()
    /// The highest exchange sequence seen, so a connection-level record gets a fresh one.
    var lastSequence = 0
    /// What the add-ons decided when the connection was accepted.
    let directives: ConnectionDirectives
    /// The connection's faults once they took effect (the proxy's TLS
    /// handshake began with its changes), written into every later record.
    var appliedConnectionFaults: [ExchangeRecord.RecordedFault] = []
    /// The head digests of the connection's last request and response, which
    /// every exchange's heads read and replace (`HeadDigestMemos`).
    let headMemos = HeadDigestMemos(acrossExchanges: true)

    /// Asks every add-on about the new connection (`ProxyAddon.connectionAccepted`).
    public init(id: ConnectionID, localIP: String, settings: ProxyLayerSettings) {
        self.init(id: id, localIP: localIP, shared: SharedLayerSettings(settings))
    }

    /// Asks every add-on about the new connection (`ProxyAddon.connectionAccepted`);
    /// the layer keeps a reference to `shared`, not a copy.
    public init(id: ConnectionID, localIP: String, shared: SharedLayerSettings) {
        let settings = shared.value
        self.id = id
        self.localIP = localIP
        self.sharedSettings = shared
        directives = settings.addons.reduce(ConnectionDirectives()) { $0.merged(with: $1.connectionAccepted(id)) }
        switch settings.mode {
        case .forward: phase = .plain
        case .reverse(let upstream) where settings.listenPlain: phase = .intercepting(route: upstream, tls: nil)
        case .reverse: phase = .peeking(nil)
        }
    }

    /// Exchanges still in progress.
    public var activeExchanges: [ExchangeID] { flows.keys }

    /// True when exchanges are in progress and every one of them is stalled by a hook.
    public var hasOnlyStalledExchanges: Bool { !flows.isEmpty && flows.values.allSatisfy(\.isStalled) }

    /// Forgets a finished flow. The flows' storage goes with the last one: it
    /// holds whole flows (a few KiB each), which an idle keep-alive
    /// connection would otherwise keep for as long as it stays open (the
    /// ids', a few words, stays for the next request).
    private mutating func removeFlow(at index: Int) {
        flows.remove(at: index)
        if flows.isEmpty { flows.removeAll(keepingKeyCapacity: true) }
    }

    /// Issues the commands for a connection just accepted.
    public func start(_ io: any DownstreamActions) {
        switch settings.mode {
        case .forward: io.perform(.servePlainHTTP)
        case .reverse where settings.listenPlain: io.perform(.servePlainHTTP)
        case .reverse: io.perform(.peekClientHello)
        }
    }

    /// Handles one event, issuing its commands in order through `io` (each
    /// carried out, and its outcome acted on, before the next).
    public mutating func handle(_ event: DownstreamEvent, _ io: any DownstreamActions) {
        switch event {
        case let .requestHead(exchange, head, wire, streamID, framing, expectsContinue):
            lastSequence = max(lastSequence, exchange.sequence)
            requestHead(exchange, head, wire: wire, streamID: streamID, framing: framing,
                        expectsContinue: expectsContinue, io)
        case let .exchange(exchange, event):
            handle(event, of: exchange, io)
        case let .malformedRequest(error, answer, wire):
            malformedRequest(error, answer: answer, wire: wire, io)
        case let .refusedStream(exchange, streamID, request, reason):
            lastSequence = max(lastSequence, exchange.sequence)
            let problem = ProxyError(.protocolError, at: .downstreamRequest, reason, status: .httpRequestError)
            io.perform(.record(annotated(refusedStreamRecord(exchange, streamID: streamID, request: request,
                                                             problem: problem))))
        case .connectTargetReached:
            guard case .probing(let connect) = phase else { return }
            phase = .peeking(connect)
            let accepted = HTTPResponseHead(status: 200, reason: "Connection established")
            if case .failed(let problem) = io.perform(.acceptConnect(connect.id, accepted)) {
                // The 200 could not go out: the client connection is over.
                connectionClosed(problem, io)
                io.perform(.close)
                return
            }
            io.perform(.peekClientHello)
        case .connectTargetFailed(let problem):
            guard case .probing(let connect) = phase else { return }
            phase = .plain
            refuse(connect.id, connect.head, wire: connect.wire, target: connect.target, status: 502, problem,
                   streamID: nil, io)
            if connect.ended { handle(.requestEnd(trailers: nil), of: connect.id, io) }
            // A client whose CONNECT failed has nothing more to say on this connection.
            io.perform(.close)
        case .clientHello(let hello):
            clientHello(hello, io)
        case .tlsEstablished(let info):
            guard case .handshaking(let route, _, _) = phase else { return }
            phase = .intercepting(route: route, tls: TLSDetails(info))
        case .tlsFailed(let problem):
            let hello: ClientHelloSummary?
            let connect: PendingConnect?
            switch phase {
            case .handshaking(_, let seen, let pending): (hello, connect) = (seen, pending)
            case .peeking(let pending): (hello, connect) = (nil, pending)
            case .plain, .probing, .intercepting, .tunnelling, .closed:
                io.perform(.close)
                return
            }
            phase = .closed
            io.perform(.record(annotated(connectionRecord(connect: connect, hello: hello, error: problem))))
            io.perform(.close)
        case let .tunnelClosed(upstream, problem, relayed):
            guard case .tunnelling(let connect, let hello) = phase else { return }
            phase = .closed
            io.perform(.record(tunnelRecord(connect, hello: hello, upstream: upstream, relayed: relayed, error: problem)))
        case .connectionClosed(let problem):
            connectionClosed(problem, io)
        case .clientConnectionEnded(let error):
            if case .handshaking = phase {
                let problem = error ?? .peerClosed(during: .tlsHandshake)
                return handle(.tlsFailed(.transport(problem, at: .downstreamTLSHandshake)), io)
            }
            connectionClosed(error.map { .transport($0, at: .downstreamConnection) }, io)
        }
    }

    /// Handles one event of an exchange, its flow mutated in place in
    /// `flows`: the driver's path for the events of exchanges in progress
    /// (most events). A flow that finished is forgotten and its record
    /// issued as `.finished`, annotated like every record of the connection.
    public mutating func handle(_ event: ExchangeEvent, of exchange: ExchangeID, _ io: any DownstreamActions) {
        guard let index = flows.index(forKey: exchange) else {
            if case .probing(var connect) = phase, connect.id == exchange, case .requestEnd = event {
                connect.ended = true
                phase = .probing(connect)
            }
            return
        }
        guard let record = flows.values[index].handle(event, io) else { return }
        removeFlow(at: index)
        finished(exchange, consume record, io)
    }

    /// Issues the record of a flow that finished, with the connection's faults.
    private func finished(_ exchange: ExchangeID, _ record: consuming ExchangeRecord, _ io: any DownstreamActions) {
        io.perform(.exchange(exchange, .finished(annotated(record))))
    }

    /// Starts a flow where it lives, in `flows` (a flow is a few KiB: built
    /// there, never copied in): `begin` issues its first commands. A flow
    /// that finished at once is forgotten and its record issued.
    private mutating func startFlow(_ flow: consuming ExchangeFlow, _ io: any DownstreamActions,
                                    _ begin: (inout ExchangeFlow) -> ExchangeRecord?) {
        let exchange = flow.id
        flows[exchange] = consume flow
        guard let index = flows.index(forKey: exchange), let record = begin(&flows.values[index]) else { return }
        removeFlow(at: index)
        finished(exchange, consume record, io)
    }

    // MARK: Requests

    private mutating func requestHead(_ exchange: ExchangeID, _ head: HTTPRequestHead, wire: HeadDigest.WireForm,
                                      streamID: Int?, framing: HTTP1Framing, expectsContinue: Bool,
                                      _ io: any DownstreamActions) {
        let route: UpstreamTarget
        let tls: TLSDetails?
        switch phase {
        case .plain:
            if head.method == .connect { return connect(exchange, head, wire: wire, io) }
            if let site = settings.localSite, LocalSiteAddress.isAddressed(head, loopGuard: settings.loopGuard) {
                return answerLocally(exchange, head, wire: wire, framing: framing, site: site, io)
            }
            guard head.targetForm == .absolute, let scheme = head.scheme.flatMap(UpstreamTarget.Scheme.init),
                  let target = head.authority.flatMap({ UpstreamTarget(authority: $0, scheme: scheme) }) else {
                return refuse(exchange, head, wire: wire, streamID: streamID, status: 400, .protocolError,
                              "a forward proxy needs an absolute-form target (http://host/path) or CONNECT, got \"\(head.target)\"",
                              io)
            }
            route = target
            tls = nil
        case .intercepting(let target, let info):
            guard head.method != .connect || head.isExtendedConnect else {
                return refuse(exchange, head, wire: wire, streamID: streamID, status: 501, .protocolError,
                              "CONNECT inside an intercepted connection is not supported", io)
            }
            route = target
            tls = info
        case .probing, .peeking, .handshaking, .tunnelling, .closed:
            // The driver reads no requests in these phases; a head here is a driver bug, refused rather than trusted.
            return refuse(exchange, head, wire: wire, streamID: streamID, status: 500, .internal,
                          "a request arrived while the connection was not serving HTTP", io)
        }
        if settings.loopGuard.refuses(route) {
            return refuse(exchange, head, wire: wire, target: route, status: 502, loopError(route), streamID: streamID, io)
        }
        let client = ExchangeFlow.ClientStream(connection: id, streamID: streamID, tls: tls, bodyFraming: framing,
                                               expectsContinue: expectsContinue)
        let context = ExchangeHookContext(id: exchange, request: head, target: route, tap: settings.recording.tap)
        let hooks = settings.addons.compactMap { $0.hook(for: context) }
        startFlow(ExchangeFlow(id: exchange, target: route, client: client, hooks: hooks, settings: settings.recording,
                               suppliesAuthority: settings.mode.isReverse, headMemos: headMemos), io) { $0.start(head, wire: wire, io) }
    }

    /// A request for the proxy's own pages: its flow has the site's hook
    /// only and no target, so it is answered and recorded, never forwarded.
    private mutating func answerLocally(_ exchange: ExchangeID, _ head: HTTPRequestHead, wire: HeadDigest.WireForm,
                                        framing: HTTP1Framing, site: any LocalSite, _ io: any DownstreamActions) {
        let client = ExchangeFlow.ClientStream(connection: id, streamID: nil, tls: nil, bodyFraming: framing)
        startFlow(ExchangeFlow(id: exchange, target: nil, client: client, hooks: [LocalSiteHook(site: site)],
                               settings: settings.recording, headMemos: headMemos), io) { $0.start(head, wire: wire, io) }
    }

    /// A CONNECT on the plain connection: probe the target before answering.
    private mutating func connect(_ exchange: ExchangeID, _ head: HTTPRequestHead, wire: HeadDigest.WireForm,
                                  _ io: any DownstreamActions) {
        guard let target = head.authority.flatMap({ UpstreamTarget(authority: $0, scheme: .https) }) else {
            return refuse(exchange, head, wire: wire, streamID: nil, status: 400, .protocolError,
                          "CONNECT target \"\(head.authority ?? "")\" is not host:port", io)
        }
        if settings.loopGuard.refuses(target) {
            refuse(exchange, head, wire: wire, target: target, status: 502, loopError(target), streamID: nil, io)
            io.perform(.close)
            return
        }
        phase = .probing(PendingConnect(id: exchange, head: head, wire: wire, target: target))
        io.perform(.probeConnectTarget(exchange, target))
    }

    /// The client's first bytes are a ClientHello: intercept or tunnel.
    private mutating func clientHello(_ hello: ClientHelloSummary, _ io: any DownstreamActions) {
        guard case .peeking(let connect) = phase else { return }
        guard let connect else {
            // Reverse mode: present a leaf for the name the client asked for, or the address it
            // reached when it sent none; for an SNI that is not a host name, the address or host
            // inside it (an IP, `host:port`), else the configured upstream's name.
            guard case .reverse(let upstream) = settings.mode else {
                io.perform(.close)
                return
            }
            phase = .handshaking(route: upstream, hello: hello, connect: nil)
            let name = hello.serverNameSent == nil ? localIP : hello.serverName ?? hello.serverNameAddress ?? upstream.host
            return interceptTLS(certificateName: name, io)
        }
        // Forward mode: the name the client asked for when it is a host name, else the CONNECT's host.
        let name = hello.serverName ?? connect.target.host
        if settings.tunnels(serverName: name, connectHost: connect.target.host) {
            phase = .tunnelling(connect, hello: hello)
            io.perform(.openTunnel(connect.target))
            return
        }
        phase = .handshaking(route: connect.target, hello: hello, connect: connect)
        interceptTLS(certificateName: name, io)
    }

    /// The handshake with the client, with the add-ons' TLS changes; from
    /// now on the connection's faults are in effect and recorded.
    private mutating func interceptTLS(certificateName: String, _ io: any DownstreamActions) {
        appliedConnectionFaults = directives.faults
        io.perform(.startTLS(certificateName: certificateName, changes: directives.tls))
    }

    /// The record with the connection's faults in effect ahead of its own:
    /// taken, not borrowed, so a record is moved on, not copied whole.
    func annotated(_ record: consuming ExchangeRecord) -> ExchangeRecord {
        if !appliedConnectionFaults.isEmpty { record.faults = appliedConnectionFaults + record.faults }
        return consume record
    }

    private func loopError(_ target: UpstreamTarget) -> ProxyError {
        ProxyError(.protocolError, at: .downstreamRequest,
                   "the target \(target.authority) is this proxy's own listen address "
                   + "\(settings.loopGuard.listenIP):\(settings.loopGuard.port); refused to avoid a loop",
                   status: .proxyLoopDetected)
    }

    /// Refuses a request the proxy cannot route (no target), recording why.
    private mutating func refuse(_ exchange: ExchangeID, _ head: HTTPRequestHead, wire: HeadDigest.WireForm,
                                 streamID: Int?, status: Int, _ kind: ExchangeRecord.Failure.Kind,
                                 _ reason: String, _ io: any DownstreamActions) {
        let problem = ProxyError(kind, at: .downstreamRequest, reason,
                                 status: kind == .internal ? .proxyInternalError : .httpRequestError)
        refuse(exchange, head, wire: wire, target: nil, status: status, problem, streamID: streamID, io)
    }

    /// Answers a request without asking upstream, through an `ExchangeFlow` so it is recorded like any other.
    private mutating func refuse(_ exchange: ExchangeID, _ head: HTTPRequestHead, wire: HeadDigest.WireForm,
                                 target: UpstreamTarget?, status: Int, _ problem: ProxyError,
                                 streamID: Int?, _ io: any DownstreamActions) {
        let client = ExchangeFlow.ClientStream(connection: id, streamID: streamID, tls: currentTLS)
        startFlow(ExchangeFlow(id: exchange, target: target, client: client, hooks: [], settings: settings.recording,
                               headMemos: headMemos), io) { $0.refuse(head, wire: wire, status: status, error: problem, io) }
    }

    /// The client's TLS session as records show it, once intercepted.
    var currentTLS: TLSDetails? {
        if case .intercepting(_, let tls) = phase { return tls }
        return nil
    }

    // MARK: Connection end

    private mutating func malformedRequest(_ error: HTTP1ParseError, answer: HTTPResponseHead?,
                                           wire: HeadDigest.WireForm?, _ io: any DownstreamActions) {
        let problem = ProxyError(.protocolError, at: .downstreamRequest, error.reason, status: .httpRequestError)
        lastSequence += 1
        let exchange = ExchangeID(connection: id, sequence: lastSequence)
        let record: ExchangeRecord
        if let received = error.unreadableRequestLine {
            // No request at all (an HTTP/0.9 `GET /`, bytes that are no request line): a connection event.
            record = annotated(unreadableRequestRecord(exchange, received: received, answered: answer?.status.code,
                                                       problem: problem))
        } else {
            record = annotated(malformedRecord(exchange, error: error,
                                               answer: answer.flatMap { head in wire.map { (head, $0) } },
                                               problem: problem))
        }
        io.perform(.record(record))
        io.perform(.close)
    }

    private mutating func connectionClosed(_ problem: ProxyError?, _ io: any DownstreamActions) {
        if case .intercepting(_, let tls) = phase, lastSequence == 0, flows.isEmpty {
            phase = .closed
            io.perform(.record(annotated(handshakeOnlyRecord(tls: tls, error: problem))))
            return
        }
        phase = .closed
        let gone = problem ?? ProxyError(.closedEarly, at: .downstream, "the client closed the connection",
                                         status: .connectionTerminated)
        for exchange in activeExchanges {
            handle(.clientGone(gone), of: exchange, io)
        }
    }
}
