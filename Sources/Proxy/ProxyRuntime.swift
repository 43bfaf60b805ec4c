import Dispatch
import Evidence
import Glibc
import Synchronization
import Transport
import Wire

/// What every connection of a running proxy shares: the configuration, the
/// TLS contexts, the recording, connection numbering, and one `LoopState`
/// per event loop (its client connections and its upstream pool).
///
/// `Sendable`: immutable after `init` except `loopGuard` and the layers'
/// settings made with it (each behind a mutex)
/// and the live-connection counter (atomic); each `LoopState` is touched
/// only on its loop.
final class ProxyRuntime: Sendable {
    let configuration: ProxyConfiguration
    let contexts: TLSContexts
    let sink: RecordingSink
    /// How every client connection's HTTP is served: the proxy relays the
    /// origin's own `100 Continue` instead of sending one itself.
    let serverConfiguration: HTTPServerConnection.Configuration
    /// The TLS settings of every upstream endpoint (one context, so pooled
    /// connections are shared by all client connections of a loop).
    let upstreamTLS: HTTPClientTLS
    /// Every add-on, in the configured order (the proxy knows none of them
    /// by name; `intact proxy` puts the auth-step labeller first).
    let addons: [any ProxyAddon]
    private let loopGuard: Mutex<LoopGuard>
    /// What every client connection's layer points at; made again with the loop guard.
    private let sharedLayerSettings: Mutex<SharedLayerSettings>
    private let loopStates: [ObjectIdentifier: LoopState]
    private let loops: [EventLoop]
    /// Client connections not yet finished, across loops.
    let liveConnections = Atomic<Int>(0)
    /// Connections per client address, across loops (`--max-client-connections`).
    private let clientConnections: Mutex<ClientConnectionLimit>

    /// Creates the recording (header first). Blocks on disk I/O.
    init(configuration: ProxyConfiguration, contexts: TLSContexts, loops: [EventLoop],
         requested: SocketAddress) throws(ProxyStartError) {
        self.configuration = configuration
        self.contexts = contexts
        self.loops = loops
        var writer: RecordingWriter?
        if let recording = configuration.recording {
            let header = RecordingHeader(toolVersion: configuration.toolVersion, tap: configuration.tap,
                                         mode: ProxyRuntime.modeName(configuration.mode),
                                         options: configuration.recordedOptions,
                                         redaction: recording.redaction, origin: configuration.recordedOrigin)
            do {
                writer = try RecordingWriter(path: recording.path, header: header, replacing: recording.replacing,
                                             queueLimit: recording.queueLimit)
            } catch let error as RecordingWriteError {
                throw .recording(error)
            } catch {
                throw .recording(RecordingWriteError(kind: .cannotOpen, path: recording.path, reason: "\(error)"))
            }
        }
        sink = RecordingSink(writer: writer, log: configuration.exchangeLog)
        addons = configuration.addons
        let initialGuard = LoopGuard(listenIP: requested.ip, port: Int(requested.port))
        loopGuard = Mutex(initialGuard)
        sharedLayerSettings = Mutex(ProxyRuntime.layerSettings(configuration, addons: addons, loopGuard: initialGuard))
        clientConnections = Mutex(ClientConnectionLimit(limit: configuration.maxClientConnections))
        var server = HTTPServerConnection.Configuration()
        server.automaticContinue = false
        // HTTP/2 clients may open WebSockets with an extended CONNECT (RFC 8441): ExchangeFlow carries them.
        server.http2.enableConnectProtocol = true
        serverConfiguration = server
        upstreamTLS = HTTPClientTLS(context: contexts.upstream, handshakeTimeout: configuration.connectTimeout)
        var pool = HTTPClientPool.Configuration()
        pool.maxConnectionsPerEndpoint = configuration.maxUpstreamConnectionsPerTarget
        pool.connectTimeout = configuration.connectTimeout
        var states: [ObjectIdentifier: LoopState] = [:]
        for loop in loops {
            states[ObjectIdentifier(loop)] = LoopState(loop: loop, pool: pool)
        }
        loopStates = states
    }

    /// `forward` or `reverse`, as the recording header names the mode.
    static func modeName(_ mode: ProxyMode) -> String {
        switch mode {
        case .forward: return "forward"
        case .reverse: return "reverse"
        }
    }

    /// The listener could not be bound: close the recording and remove it (it holds only its header).
    func abandon() {
        guard let writer = sink.writer else { return }
        _ = writer.closeAndWait()
        unlink(writer.path)
    }

    /// The listeners are bound here (one port): loops are refused against these
    /// addresses (and, for a wildcard, against every local interface's).
    func bound(to addresses: [SocketAddress]) {
        guard let first = addresses.first else { return }
        let guardAgainst = LoopGuard(listenIP: first.ip, port: Int(first.port),
                                     otherListenIPs: addresses.dropFirst().map(\.ip),
                                     localAddresses: LocalInterfaces.addresses())
        loopGuard.withLock { $0 = guardAgainst }
        let settings = ProxyRuntime.layerSettings(configuration, addons: addons, loopGuard: guardAgainst)
        sharedLayerSettings.withLock { $0 = settings }
    }

    /// The settings every new client connection's layer points at.
    var layerSettings: SharedLayerSettings { sharedLayerSettings.withLock { $0 } }

    /// Settings for the layers, made from the configuration and `loopGuard`.
    private static func layerSettings(_ configuration: ProxyConfiguration, addons: [any ProxyAddon],
                                      loopGuard: LoopGuard) -> SharedLayerSettings {
        let redaction = configuration.recording?.redaction ?? RedactionPolicy()
        let recording = RecordingSettings(tap: configuration.tap, redaction: redaction,
                                          bodyStoreLimit: configuration.recording?.bodyStoreLimit ?? 0,
                                          takesDigests: configuration.takesDigests)
        return SharedLayerSettings(ProxyLayerSettings(mode: configuration.mode, passthroughHosts: configuration.passthroughHosts,
                                                      interceptHosts: configuration.interceptHosts,
                                                      loopGuard: loopGuard, addons: addons, recording: recording,
                                                      localSite: configuration.localSite,
                                                      listenPlain: configuration.listenPlain))
    }

    var currentLoopGuard: LoopGuard { loopGuard.withLock { $0 } }

    /// The state of the loop a connection lives on.
    func state(of loop: EventLoop) -> LoopState {
        guard let state = loopStates[ObjectIdentifier(loop)] else {
            preconditionFailure("event loop \(loop.label) does not belong to this proxy")
        }
        return state
    }

    /// A client connected; runs on the connection's loop.
    func accept(_ connection: Connection) {
        let state = state(of: connection.loop)
        guard !state.isDraining else { return connection.close() }
        let client = connection.remoteAddress
        guard clientConnections.withLock({ $0.admit(client) }) else {
            connection.close()
            configuration.diagnosticLog?("refused a connection from \(client.ip): it holds "
                                         + "\(configuration.maxClientConnections) already (--max-client-connections)")
            return
        }
        liveConnections.wrappingAdd(1, ordering: .relaxed)
        let driver = DownstreamDriver(connection: connection, runtime: self, loopState: state)
        state.add(driver)
        driver.start()
    }

    /// A client connection finished; called on its loop once.
    func finished(_ driver: DownstreamDriver, on state: LoopState) {
        state.remove(driver)
        let client = driver.channel.remoteAddress
        clientConnections.withLock { $0.release(client) }
        liveConnections.wrappingSubtract(1, ordering: .relaxed)
    }

    // MARK: Stopping

    /// Asks every connection to finish, waits until none is left or
    /// `timeout` passed, cuts the rest, closes the recording, then calls
    /// `completion` on a private queue.
    func drain(timeout: Duration, _ completion: @escaping @Sendable (ProxyStopOutcome) -> Void) {
        onEveryLoop({ $0.beginDrain() }) {
            let deadline = DispatchTime.now() + timeout.dispatchTimeInterval
            self.waitForConnections(until: deadline) {
                let abandoned = Atomic<Int>(0)
                self.onEveryLoop({ state in
                    abandoned.wrappingAdd(state.terminate(), ordering: .relaxed)
                    self.sink.handOver(from: state)
                }) {
                    let error = self.sink.writer?.closeAndWait()
                    completion(ProxyStopOutcome(abandonedExchanges: abandoned.load(ordering: .relaxed),
                                                recordingError: error))
                }
            }
        }
    }

    /// Runs `work` on every loop; then `next` on a private queue.
    private func onEveryLoop(_ work: @escaping @Sendable (LoopState) -> Void, then next: @escaping @Sendable () -> Void) {
        let group = DispatchGroup()
        for loop in loops {
            group.enter()
            let state = self.state(of: loop)
            loop.execute {
                work(state)
                group.leave()
            }
        }
        group.notify(queue: ProxyRuntime.stopQueue, execute: next)
    }

    /// Checks every 20 ms whether the connections are gone.
    private func waitForConnections(until deadline: DispatchTime, _ next: @escaping @Sendable () -> Void) {
        if liveConnections.load(ordering: .relaxed) <= 0 || DispatchTime.now() >= deadline {
            next()
            return
        }
        ProxyRuntime.stopQueue.asyncAfter(deadline: .now() + .milliseconds(20)) {
            self.waitForConnections(until: deadline, next)
        }
    }

    private static let stopQueue = DispatchQueue(label: "intact.proxy.stop")
}

extension Duration {
    /// The duration as a Dispatch interval (non-negative nanoseconds).
    var dispatchTimeInterval: DispatchTimeInterval {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return .nanoseconds(0) }
        return .nanoseconds(Int(min(seconds, 1_000_000_000) * 1_000_000_000 + attoseconds / 1_000_000_000))
    }
}
