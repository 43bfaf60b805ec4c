import Dispatch
import Glibc

/// A listening TCP socket that accepts connections and hands each one,
/// unstarted, to `onAccept` on the loop it is bound to.
///
/// Accepting runs on `loop` from a read source, up to 64 connections per
/// wake-up, until the socket would block. Accepted connections are spread
/// over `connectionLoops` (round-robin), or stay on `loop` when there is none.
/// When the process runs out of descriptors (`EMFILE`/`ENFILE`) the listener
/// pauses accepting for 100 ms instead of spinning on the still-readable socket.
/// It accepts until `close(_:)`.
///
/// `@unchecked Sendable`: `loop`, `localAddress`, the descriptor and the
/// accept closure are immutable; `state` is touched only on `loop`.
public final class Listener: @unchecked Sendable {
    /// The loop that accepts.
    public let loop: EventLoop
    /// The bound address; carries the real port when bound to port 0.
    public let localAddress: SocketAddress
    private let descriptor: Int32
    private let connectionLoops: EventLoopGroup?
    private let onAccept: @Sendable (Connection) -> Void
    private var state: State

    private enum State {
        /// Made; the accept source is not yet running.
        case starting(SourceGate)
        /// Accepting.
        case listening(SourceGate)
        /// Out of descriptors: source suspended until the timer resumes it.
        case backingOff(SourceGate, LoopTimer)
        /// Source cancelled (and kept until its cancel handler ran); the
        /// completions run once that handler closed the socket.
        case closing(SourceGate, [@Sendable () -> Void])
        case closed
    }

    /// Most connections accepted per wake-up before yielding the loop.
    private static let acceptBudgetPerEvent = 64

    /// Binds `address` (with `SO_REUSEADDR`), listens, and starts accepting
    /// on `loop`. Throws `.addressInUse(address)` when the address is taken,
    /// `.addressNotAvailable(address)` when it is not local, `.system` else.
    /// `onAccept` runs on each connection's loop; it should `start` or `close` it.
    public convenience init(
        bindingTo address: SocketAddress, on loop: EventLoop, connectionLoops: EventLoopGroup? = nil,
        backlog: Int32 = 1024, onAccept: @escaping @Sendable (Connection) -> Void
    ) throws(WireError) {
        try self.init(adopting: ListeningSocket(bindingTo: address, backlog: backlog), on: loop,
                      connectionLoops: connectionLoops, onAccept: onAccept)
    }

    /// Starts accepting on `loop` on a socket bound and listening already
    /// (connections waiting in its backlog are accepted first). Takes the
    /// descriptor over: the listener closes it. Throws `.system(call: "adopt",
    /// errno: EBADF)` when the socket was closed or adopted before.
    public init(
        adopting socket: ListeningSocket, on loop: EventLoop, connectionLoops: EventLoopGroup? = nil,
        onAccept: @escaping @Sendable (Connection) -> Void
    ) throws(WireError) {
        guard let descriptor = socket.take() else { throw WireError.system(call: "adopt", errno: EBADF) }
        self.localAddress = socket.localAddress
        self.descriptor = descriptor
        self.loop = loop
        self.connectionLoops = connectionLoops
        self.onAccept = onAccept

        let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: loop.queue)
        self.state = .starting(SourceGate(source))
        // The handlers hold the listener until the source is cancelled.
        source.setEventHandler { self.loop.runTurn { self.acceptable() } }
        source.setCancelHandler { self.loop.runTurn { self.sourceCancelled() } }
        loop.execute { self.startAccepting() }
    }

    /// Stops accepting and closes the socket; `completion`, if any, runs on
    /// `loop` once the descriptor is closed. Connections already accepted are
    /// not affected. Callable from any thread; idempotent.
    public func close(_ completion: (@Sendable () -> Void)? = nil) {
        loop.execute {
            let completions = completion.map { [$0] } ?? []
            switch self.state {
            case .starting(let gate), .listening(let gate):
                self.state = .closing(gate, completions)
                gate.cancel()
            case .backingOff(let gate, let timer):
                timer.cancel()
                self.state = .closing(gate, completions)
                gate.cancel()
            case .closing(let gate, let waiting):
                self.state = .closing(gate, waiting + completions)
            case .closed:
                completion?()
            }
        }
    }

    private func startAccepting() {
        guard case .starting(let gate) = state else { return }
        state = .listening(gate)
        gate.resume()
    }

    /// The source's handler: accepts until the socket would block or the
    /// per-event budget is spent. Runs on `loop`.
    private func acceptable() {
        guard case .listening(let gate) = state else { return }
        for _ in 0..<Listener.acceptBudgetPerEvent {
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(descriptor, $0, &length) }
            }
            guard fd >= 0 else {
                switch errno {
                case EAGAIN, EWOULDBLOCK:
                    return
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    backOff(gate)
                    return
                default:
                    // ECONNABORTED, EINTR, EPROTO…: that one connection is lost, go on.
                    continue
                }
            }
            let remote = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress($0) }
            }
            guard let remote else {
                Socket.close(fd)
                continue
            }
            let connectionLoop = connectionLoops?.next() ?? loop
            do {
                try Socket.prepareAccepted(fd)
                let connection = try Connection(descriptor: fd, loop: connectionLoop, remoteAddress: remote)
                let onAccept = self.onAccept
                connectionLoop.execute { onAccept(connection) }
            } catch {
                // The peer left before we could set it up (fcntl/getsockname/setsockopt failed).
                Socket.close(fd)
            }
        }
    }

    private func backOff(_ gate: SourceGate) {
        gate.suspend()
        let timer = loop.schedule(after: .milliseconds(100)) {
            guard case .backingOff(let gate, _) = self.state else { return }
            self.state = .listening(gate)
            gate.resume()
        }
        state = .backingOff(gate, timer)
    }

    private func sourceCancelled() {
        Socket.close(descriptor)
        let waiting: [@Sendable () -> Void]
        if case .closing(_, let completions) = state { waiting = completions } else { waiting = [] }
        state = .closed
        waiting.forEach { $0() }
    }
}
