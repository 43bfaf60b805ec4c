import Dispatch
import Evidence
import Synchronization
import TLS
import Wire

/// The intercepting proxy as a library: `start()` binds and serves,
/// `stop(drainTimeout:)` drains and flushes. `intact proxy` runs one; the
/// demo runs one in-process next to the mock server and the client.
///
/// Connections are spread over `configuration.loopCount` event loops; each
/// client connection and the upstream connections its exchanges use live on
/// one loop (upstream connections are pooled per loop and shared by every
/// client connection there).
///
/// `Sendable`: the mutable state is behind a mutex; everything loop-side
/// lives in `ProxyRuntime`.
public final class ProxyServer: Sendable {
    public let configuration: ProxyConfiguration

    private enum State {
        case idle
        case running([Listener], ProxyRuntime)
        case stopping
        case stopped
    }

    private let state = Mutex(State.idle)

    public init(configuration: ProxyConfiguration) {
        self.configuration = configuration
    }

    /// The recording this server writes, if any.
    public var recordingPath: String? { configuration.recording?.path }

    /// Creates the recording (header line first), the TLS contexts, the
    /// event loops, and binds the listener; returns the address it is bound
    /// to (with the real port when `listenPort` is 0). Blocks on disk I/O:
    /// call it from a thread that is not an event loop. Callable once.
    ///
    /// Throws `ProxyStartError` naming what could not be set up.
    public func start() throws -> SocketAddress {
        try start(listeningOn: nil)
    }

    /// As `start()`, serving on `socket`, bound and listening already (the
    /// demo reserves the proxy's port before the server behind it starts, and
    /// never releases it); `listenHost` and `listenPort` are not used. The
    /// server takes the socket over, also when it fails to start.
    public func start(on socket: ListeningSocket) throws -> SocketAddress {
        try start(listeningOn: socket)
    }

    private func start(listeningOn socket: ListeningSocket?) throws -> SocketAddress {
        defer { socket?.close() }  // a no-op once the listener adopted it
        return try state.withLock { state in
            guard case .idle = state else { throw ProxyStartError.alreadyStarted }
            let addresses: [SocketAddress]
            if let socket { addresses = [socket.localAddress] } else { addresses = try listenAddresses() }
            let requested = addresses[0]
            let group = EventLoopGroup(loopCount: max(1, configuration.loopCount), label: "intact.proxy",
                                       waiting: configuration.loopWaiting)
            let runtime = try makeRuntime(loops: group.loops, requested: requested)
            var listeners: [Listener] = []
            do throws(WireError) {
                let accept = acceptor(runtime)
                if let socket {
                    listeners.append(try Listener(adopting: socket, on: group.loops[0], connectionLoops: group,
                                                  onAccept: accept))
                }
                // Every address of a name gets the port the first one got (an ephemeral one for port 0).
                var port = requested.port
                for address in addresses where socket == nil {
                    let listener = try Listener(bindingTo: address.withPort(port), on: group.loops[0],
                                                connectionLoops: group, onAccept: accept)
                    port = listener.localAddress.port
                    listeners.append(listener)
                }
            } catch {
                listeners.forEach { $0.close() }
                runtime.abandon()
                throw ProxyStartError.listen(error)
            }
            runtime.bound(to: listeners.map(\.localAddress))
            state = .running(listeners, runtime)
            boundAddresses.withLock { $0 = listeners.map(\.localAddress) }
            return listeners[0].localAddress
        }
    }

    /// As `start()`, on an embedded loop's in-memory network (for tests:
    /// the proxy runs whole, stepped by hand, with no socket): one loop,
    /// `network.loop`, whatever `loopCount` says; the proxy listens on
    /// `listenHost:listenPort` (an IP literal) of `network`, and its
    /// upstream connections dial into `network`. Call it on the loop.
    public func start(on network: EmbeddedNetwork) throws -> SocketAddress {
        network.loop.preconditionOnLoop()
        return try state.withLock { state in
            guard case .idle = state else { throw ProxyStartError.alreadyStarted }
            let text = "\(configuration.listenHost):\(configuration.listenPort)"
            guard (0...65535).contains(configuration.listenPort),
                  let address = SocketAddress(ip: configuration.listenHost, port: UInt16(configuration.listenPort)) else {
                throw ProxyStartError.badListenAddress(text)
            }
            let runtime = try makeRuntime(loops: [network.loop], requested: address)
            network.listen(on: address, acceptor(runtime))
            runtime.bound(to: [address])
            state = .running([], runtime)
            boundAddresses.withLock { $0 = [address] }
            return address
        }
    }

    /// The TLS contexts and the runtime on `loops`. Blocks on disk I/O (the recording's header).
    private func makeRuntime(loops: [EventLoop], requested: SocketAddress) throws(ProxyStartError) -> ProxyRuntime {
        var untrusted: CertificateAuthority?
        if configuration.addons.contains(where: \.mayPresentUntrustedCertificates) {
            do {
                untrusted = try TLSContexts.throwawayAuthority()
            } catch {
                throw ProxyStartError.untrustedAuthority("\(error)")
            }
        }
        let contexts: TLSContexts
        do throws(TLSError) {
            contexts = try TLSContexts(authority: configuration.authority, keyLog: configuration.keyLog,
                                       verification: configuration.upstreamVerification,
                                       clientIdentity: configuration.upstreamClientIdentity,
                                       untrustedAuthority: untrusted)
        } catch {
            throw ProxyStartError.tls(error)
        }
        return try ProxyRuntime(configuration: configuration, contexts: contexts, loops: loops, requested: requested)
    }

    /// What a listener does with a client connection: refuses an address the
    /// allow-list does not admit, hands the rest to `runtime`.
    private func acceptor(_ runtime: ProxyRuntime) -> @Sendable (Connection) -> Void {
        let allowed = configuration.allowedClients
        let refusedLog = configuration.refusedClientLog
        return { connection in
            guard allowed.admits(connection.remoteAddress) else {
                refusedLog?(connection.remoteAddress)
                return connection.abort()
            }
            runtime.accept(connection)
        }
    }

    /// Every address the proxy listens on (empty before `start`).
    public var listeningAddresses: [SocketAddress] { boundAddresses.withLock { $0 } }

    private let boundAddresses = Mutex<[SocketAddress]>([])

    /// The addresses `listenHost` names: itself when it is an IP literal,
    /// else every address it resolves to. Blocks on DNS.
    private func listenAddresses() throws(ProxyStartError) -> [SocketAddress] {
        let text = "\(configuration.listenHost):\(configuration.listenPort)"
        guard (0...65535).contains(configuration.listenPort),
              let endpoint = HostPort(host: configuration.listenHost, port: UInt16(configuration.listenPort)) else {
            throw ProxyStartError.badListenAddress(text)
        }
        switch Resolver.resolveBlocking(endpoint.host, port: endpoint.port) {
        case .success(let addresses): return addresses
        case .failure(let error): throw ProxyStartError.unresolvableListenHost(endpoint.description, error)
        }
    }

    /// Stops accepting, lets in-flight exchanges finish for up to
    /// `drainTimeout` (idle keep-alive connections close at once, HTTP/2
    /// clients get GOAWAY), cuts what is left (recorded as broken), flushes
    /// and closes the recording, then calls `completion` on a private queue.
    /// Callable from any thread; a second call completes at once.
    public func stop(drainTimeout: Duration, _ completion: @escaping @Sendable (ProxyStopOutcome) -> Void) {
        let running: ([Listener], ProxyRuntime)? = state.withLock { state in
            guard case .running(let listeners, let runtime) = state else {
                if case .idle = state { state = .stopped }
                return nil
            }
            state = .stopping
            return (listeners, runtime)
        }
        guard let (listeners, runtime) = running else {
            DispatchQueue.global().async { completion(ProxyStopOutcome(abandonedExchanges: 0, recordingError: nil)) }
            return
        }
        let closed = DispatchGroup()
        for listener in listeners {
            closed.enter()
            listener.close { closed.leave() }
        }
        closed.notify(queue: DispatchQueue.global()) {
            runtime.drain(timeout: drainTimeout) { outcome in
                self.state.withLock { $0 = .stopped }
                completion(outcome)
            }
        }
    }

    /// `stop`, waiting for it. Blocks — never call on an event loop.
    public func stopAndWait(drainTimeout: Duration) -> ProxyStopOutcome {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex(ProxyStopOutcome(abandonedExchanges: 0, recordingError: nil))
        stop(drainTimeout: drainTimeout) { outcome in
            result.withLock { $0 = outcome }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 }
    }
}

/// How a stop went.
public struct ProxyStopOutcome: Sendable {
    /// Exchanges still running at the drain deadline, cut and recorded as broken.
    public var abandonedExchanges: Int
    /// The recording's first write problem, if any (records may be lost).
    public var recordingError: RecordingWriteError?
}

/// Why a proxy could not start, naming the part that failed.
public enum ProxyStartError: Error, CustomStringConvertible {
    case alreadyStarted
    case badListenAddress(String)
    /// The host of the listen address does not resolve.
    case unresolvableListenHost(String, WireError)
    case listen(WireError)
    case tls(TLSError)
    case recording(RecordingWriteError)
    /// The throwaway CA an untrusted-certificate fault needs could not be made.
    case untrustedAuthority(String)

    public var description: String {
        switch self {
        case .alreadyStarted: return "the proxy was already started"
        case .badListenAddress(let text): return "cannot listen on \(text): not an IP address and port"
        case .unresolvableListenHost(let text, let error): return "cannot listen on \(text): \(error)"
        case .listen(let error): return "cannot listen: \(error)"
        case .tls(let error): return "cannot set up TLS: \(error)"
        case .recording(let error): return "\(error)"
        case .untrustedAuthority(let reason): return "cannot make the throwaway CA for untrusted certificates: \(reason)"
        }
    }
}
