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
        case running(Listener, ProxyRuntime)
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
            let requested: SocketAddress
            if let socket {
                requested = socket.localAddress
            } else {
                guard let address = SocketAddress(ip: configuration.listenHost, port: UInt16(clamping: configuration.listenPort)),
                      (0...65535).contains(configuration.listenPort) else {
                    throw ProxyStartError.badListenAddress("\(configuration.listenHost):\(configuration.listenPort)")
                }
                requested = address
            }
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
            let group = EventLoopGroup(loopCount: max(1, configuration.loopCount), label: "intact.proxy")
            let runtime = try ProxyRuntime(configuration: configuration, contexts: contexts, loops: group.loops,
                                           requested: requested)
            let listener: Listener
            do throws(WireError) {
                let accept: @Sendable (Connection) -> Void = { connection in runtime.accept(connection) }
                if let socket {
                    listener = try Listener(adopting: socket, on: group.loops[0], connectionLoops: group, onAccept: accept)
                } else {
                    listener = try Listener(bindingTo: requested, on: group.loops[0], connectionLoops: group, onAccept: accept)
                }
            } catch {
                runtime.abandon()
                throw ProxyStartError.listen(error)
            }
            runtime.bound(to: listener.localAddress)
            state = .running(listener, runtime)
            return listener.localAddress
        }
    }

    /// Stops accepting, lets in-flight exchanges finish for up to
    /// `drainTimeout` (idle keep-alive connections close at once, HTTP/2
    /// clients get GOAWAY), cuts what is left (recorded as broken), flushes
    /// and closes the recording, then calls `completion` on a private queue.
    /// Callable from any thread; a second call completes at once.
    public func stop(drainTimeout: Duration, _ completion: @escaping @Sendable (ProxyStopOutcome) -> Void) {
        let running: (Listener, ProxyRuntime)? = state.withLock { state in
            guard case .running(let listener, let runtime) = state else {
                if case .idle = state { state = .stopped }
                return nil
            }
            state = .stopping
            return (listener, runtime)
        }
        guard let (listener, runtime) = running else {
            DispatchQueue.global().async { completion(ProxyStopOutcome(abandonedExchanges: 0, recordingError: nil)) }
            return
        }
        listener.close {
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
    case listen(WireError)
    case tls(TLSError)
    case recording(RecordingWriteError)
    /// The throwaway CA an untrusted-certificate fault needs could not be made.
    case untrustedAuthority(String)

    public var description: String {
        switch self {
        case .alreadyStarted: return "the proxy was already started"
        case .badListenAddress(let text): return "cannot listen on \(text): not an IP address and port"
        case .listen(let error): return "cannot listen: \(error)"
        case .tls(let error): return "cannot set up TLS: \(error)"
        case .recording(let error): return "\(error)"
        case .untrustedAuthority(let reason): return "cannot make the throwaway CA for untrusted certificates: \(reason)"
        }
    }
}
