import Dispatch
import Glibc

extension Connection {
    /// Opens a connection to `address` without blocking the loop.
    ///
    /// `completion` runs on `loop`, always later (never inside this call), with
    /// an unstarted connection bound to `loop` or the reason it failed:
    /// `.connectionRefused(address)`, `.unreachable(address)`, `.timedOut`
    /// (after `timeout`), or `.system`. Callable from any thread. On an
    /// embedded loop with an `EmbeddedNetwork`, the network answers.
    public static func connect(
        to address: SocketAddress, on loop: EventLoop, timeout: Duration = .seconds(10),
        _ completion: @escaping @Sendable (Result<Connection, WireError>) -> Void
    ) {
        loop.execute {
            if let network = loop.network {
                return network.dial(host: address.ip, port: address.port, timeout: timeout, completion)
            }
            Connector(address: address, loop: loop, completion: completion).start(timeout: timeout)
        }
    }

    /// Resolves `host` (see `Resolver`) and connects to its addresses in turn
    /// until one accepts, each attempt with `timeout`. On failure reports the
    /// first address's error, or the resolver's. `completion` runs on `loop`.
    /// Callable from any thread. On an embedded loop its `EmbeddedNetwork`
    /// takes the dial (no name is resolved).
    public static func connect(
        host: String, port: UInt16, on loop: EventLoop, timeout: Duration = .seconds(10),
        _ completion: @escaping @Sendable (Result<Connection, WireError>) -> Void
    ) {
        if loop.embedded != nil {
            // An embedded loop's network answers names itself: no resolver, no socket.
            return loop.execute {
                loop.network?.dial(host: host, port: port, timeout: timeout, completion)
                    ?? completion(.failure(.nameNotFound(host)))
            }
        }
        Resolver.resolve(host, port: port, on: loop) { result in
            switch result {
            case .success(let addresses):
                connectFirst(of: addresses[...], host: host, on: loop, timeout: timeout, firstError: nil, completion)
            case .failure(let error):
                completion(.failure(error))
            }
        }
    }

    private static func connectFirst(
        of addresses: ArraySlice<SocketAddress>, host: String, on loop: EventLoop, timeout: Duration,
        firstError: WireError?,
        _ completion: @escaping @Sendable (Result<Connection, WireError>) -> Void
    ) {
        guard let address = addresses.first else {
            // The resolver never succeeds with no addresses, so firstError is set.
            completion(.failure(firstError ?? .nameNotFound(host)))
            return
        }
        connect(to: address, on: loop, timeout: timeout) { result in
            switch result {
            case .success:
                completion(result)
            case .failure(let error):
                connectFirst(of: addresses.dropFirst(), host: host, on: loop, timeout: timeout,
                             firstError: firstError ?? error, completion)
            }
        }
    }
}

/// One non-blocking connect in flight: waits for the socket to become
/// writable (connected or failed) or for the timeout, whichever comes first.
///
/// `@unchecked Sendable`: created and used only on `loop`; captured by its
/// own source and timer handlers, which run there.
private final class Connector: @unchecked Sendable {
    private enum State {
        /// Not yet started.
        case idle
        /// `connect(2)` returned `EINPROGRESS`; waiting on the write source or the timer.
        case waiting(descriptor: Int32, gate: SourceGate, timer: LoopTimer)
        /// Outcome known; waiting for the source's cancel handler (the gate is
        /// kept so the source lives until then) to hand it on.
        case finishing(descriptor: Int32, gate: SourceGate, outcome: Result<Void, WireError>)
        /// Completion called.
        case done
    }

    private let address: SocketAddress
    private let loop: EventLoop
    private let completion: @Sendable (Result<Connection, WireError>) -> Void
    private var state = State.idle

    init(address: SocketAddress, loop: EventLoop,
         completion: @escaping @Sendable (Result<Connection, WireError>) -> Void) {
        self.address = address
        self.loop = loop
        self.completion = completion
    }

    /// Makes the socket and starts connecting. Runs on the loop.
    func start(timeout: Duration) {
        let descriptor: Int32
        do {
            descriptor = try Socket.makeTCP(family: address.cFamily)
        } catch {
            complete(.failure(error))
            return
        }
        let result = address.withSockAddr { Glibc.connect(descriptor, $0, $1) }
        if result == 0 {
            hand(descriptor, .success(()))
            return
        }
        let code = errno
        guard code == EINPROGRESS || code == EINTR else {
            hand(descriptor, .failure(WireError.fromErrno(code, call: "connect", address: address)))
            return
        }
        let source = DispatchSource.makeWriteSource(fileDescriptor: descriptor, queue: loop.queue)
        source.setEventHandler {
            let code = Socket.pendingError(descriptor)
            self.finish(code == 0 ? .success(()) : .failure(WireError.fromErrno(code, call: "connect", address: self.address)))
        }
        source.setCancelHandler { self.loop.runTurn { self.sourceCancelled() } }
        let gate = SourceGate(source)
        let timer = loop.schedule(after: timeout) { self.finish(.failure(.timedOut)) }
        state = .waiting(descriptor: descriptor, gate: gate, timer: timer)
        gate.resume()
    }

    /// Records the first outcome and cancels the source; the rest happens in
    /// its cancel handler, so the descriptor is handed on only once Dispatch
    /// is done with it.
    private func finish(_ outcome: Result<Void, WireError>) {
        guard case .waiting(let descriptor, let gate, let timer) = state else { return }
        timer.cancel()
        state = .finishing(descriptor: descriptor, gate: gate, outcome: outcome)
        gate.cancel()
    }

    private func sourceCancelled() {
        guard case .finishing(let descriptor, _, let outcome) = state else { return }
        hand(descriptor, outcome)
    }

    /// Turns the socket into a `Connection`, or closes it, and completes.
    private func hand(_ descriptor: Int32, _ outcome: Result<Void, WireError>) {
        switch outcome {
        case .success:
            do {
                complete(.success(try Connection(descriptor: descriptor, loop: loop, remoteAddress: address)))
            } catch {
                Socket.close(descriptor)
                complete(.failure(error))
            }
        case .failure(let error):
            Socket.close(descriptor)
            complete(.failure(error))
        }
    }

    private func complete(_ result: Result<Connection, WireError>) {
        state = .done
        completion(result)
    }
}
