/// The in-memory network of an embedded loop (`EventLoop.embedded()`): the
/// listeners a server registers, the clients a test connects, and the dials
/// the loop's code makes (`Connection.connect`), which wait for the test to
/// accept, refuse or time out. So a whole proxy, its client connections and
/// its upstream connections run in one test with no socket, in the order
/// the test chooses.
///
/// `@unchecked Sendable`: touched only on its loop's thread.
public final class EmbeddedNetwork: @unchecked Sendable {
    public let loop: EventLoop
    private var listeners: [SocketAddress: (Connection) -> Void] = [:]
    private var waitingDials: [EmbeddedDial] = []
    /// The port the next client connection or dial gets for its own end.
    private var nextPort: UInt16 = 40_000
    /// The `receiveWindow` of both ends of each socket pair dialled from
    /// now on (a dial to a listener of the network): how many bytes each
    /// side's buffers hold, so a reader that stops holds its writer back
    /// as the kernel's would. Nil: no limit.
    public var socketPairWindow: Int?

    /// Makes `loop`'s network: from now on `Connection.connect` on `loop`
    /// dials here. `loop` must be embedded; one network per loop.
    public init(loop: EventLoop) {
        precondition(loop.embedded != nil, "an embedded network needs an embedded loop")
        precondition(loop.network == nil, "the loop has its network already")
        self.loop = loop
        loop.network = self
    }

    /// Hands every connection a client makes to `address` to `onAccept`
    /// (unstarted, on the loop's next run), as `Listener` does.
    public func listen(on address: SocketAddress, _ onAccept: @escaping (Connection) -> Void) {
        loop.preconditionOnLoop()
        listeners[address] = onAccept
    }

    /// Stops accepting at `address`.
    public func stopListening(on address: SocketAddress) {
        loop.preconditionOnLoop()
        listeners[address] = nil
    }

    /// A client at `from` (a loopback address of its own unless given)
    /// connects to `address`; returns the client's end. Throws
    /// `.connectionRefused(address)` when nothing listens there.
    public func connect(to address: SocketAddress, from: SocketAddress? = nil) throws(WireError) -> EmbeddedPeer {
        loop.preconditionOnLoop()
        guard let onAccept = listeners[address] else { throw .connectionRefused(address) }
        let client = from ?? .loopbackIPv4(port: takePort())
        let peer = EmbeddedPeer(loop: loop, address: address)
        hand(Connection(peer: peer, loop: loop, localAddress: address, remoteAddress: client), to: onAccept)
        return peer
    }

    /// Gives `onAccept` the connection on the loop's next run.
    private func hand(_ connection: Connection, to onAccept: @escaping (Connection) -> Void) {
        // Only the loop's thread runs `run()`, so the closure never crosses threads.
        let accept = LoopConfined((onAccept, connection))
        loop.executeAfterOthers { accept.value.0(accept.value.1) }
    }

    /// Dials the code under test made and the test has not answered, oldest first.
    public var dials: [EmbeddedDial] { waitingDials }

    /// Takes the oldest waiting dial (nil when none waits).
    public func takeDial() -> EmbeddedDial? {
        loop.preconditionOnLoop()
        return waitingDials.isEmpty ? nil : waitingDials.removeFirst()
    }

    /// `Connection.connect` on the loop: connects at once to a server that
    /// listens at the address (`listen(on:_:)`: the two connections' bytes
    /// cross in memory); else waits for the test's answer, or fails with
    /// `.timedOut` once `timeout` passed on the loop's clock.
    func dial(host: String, port: UInt16, timeout: Duration,
              _ completion: @escaping @Sendable (Result<Connection, WireError>) -> Void) {
        let remote = SocketAddress(ip: host, port: port) ?? .loopbackIPv4(port: port)
        if let onAccept = listeners[remote] {
            // A server of the network listens there: a socket pair in memory, at once.
            let client = EmbeddedPeer(loop: loop, address: remote)
            let server = EmbeddedPeer(loop: loop, address: remote)
            client.link(to: server)
            client.receiveWindow = socketPairWindow
            server.receiveWindow = socketPairWindow
            let local = SocketAddress.loopbackIPv4(port: takePort())
            hand(Connection(peer: server, loop: loop, localAddress: remote, remoteAddress: local), to: onAccept)
            let connection = Connection(peer: client, loop: loop, localAddress: local, remoteAddress: remote)
            return loop.executeAfterOthers { completion(.success(connection)) }
        }
        let dial = EmbeddedDial(network: self, host: host, port: port, remote: remote, completion: completion)
        waitingDials.append(dial)
        dial.timer = loop.schedule(after: timeout) { [weak self, weak dial] in
            guard let dial else { return }
            self?.forget(dial)
            dial.complete(.failure(.timedOut))
        }
    }

    fileprivate func forget(_ dial: EmbeddedDial) {
        waitingDials.removeAll { $0 === dial }
    }

    fileprivate func takePort() -> UInt16 {
        defer { nextPort = nextPort == .max ? 40_000 : nextPort + 1 }
        return nextPort
    }
}

/// One `Connection.connect` waiting on an `EmbeddedNetwork` for the test to
/// answer it: `accept()` connects it to a peer the test holds, `refuse()`
/// or `fail(_:)` fails it; left alone, it times out on the loop's clock.
/// The dialler's completion runs on the loop's next run, never inside these calls.
///
/// `@unchecked Sendable`: touched only on its loop's thread.
public final class EmbeddedDial: @unchecked Sendable, CustomStringConvertible {
    /// What was dialled: a host name or IP literal, as the caller gave it.
    public let host: String
    public let port: UInt16
    /// The address the connection's remote end gets: the host when it is
    /// an IP literal, else loopback with the port.
    public let remote: SocketAddress
    private weak var network: EmbeddedNetwork?
    private var completion: (@Sendable (Result<Connection, WireError>) -> Void)?
    fileprivate var timer: LoopTimer?

    fileprivate init(network: EmbeddedNetwork, host: String, port: UInt16, remote: SocketAddress,
                     completion: @escaping @Sendable (Result<Connection, WireError>) -> Void) {
        self.network = network
        self.host = host
        self.port = port
        self.remote = remote
        self.completion = completion
    }

    public var description: String { "EmbeddedDial(\(host):\(port))" }

    /// Whether the dial still waits for an answer (not answered, not timed out).
    public var isWaiting: Bool { completion != nil }

    /// Connects: returns the server's end, the test's to read and write.
    public func accept() -> EmbeddedPeer {
        guard let network else { preconditionFailure("the embedded network is gone") }
        network.loop.preconditionOnLoop()
        precondition(isWaiting, "\(self) was answered or timed out already")
        let local = SocketAddress.loopbackIPv4(port: network.takePort())
        let peer = EmbeddedPeer(loop: network.loop, address: remote)
        let connection = Connection(peer: peer, loop: network.loop, localAddress: local, remoteAddress: remote)
        network.forget(self)
        complete(.success(connection))
        return peer
    }

    /// Refuses, as a closed port does: `.connectionRefused`.
    public func refuse() {
        fail(.connectionRefused(remote))
    }

    /// Fails the dial with `error`.
    public func fail(_ error: WireError) {
        network?.forget(self)
        complete(.failure(error))
    }

    fileprivate func complete(_ result: Result<Connection, WireError>) {
        guard let completion else { return }
        self.completion = nil
        timer?.cancel()
        timer = nil
        network?.loop.executeAfterOthers { completion(result) }
    }
}

/// A value handed from the loop's thread to work it queues for itself.
/// `@unchecked Sendable`: an embedded loop runs its work only on the thread
/// that made it, the one that wraps the value.
struct LoopConfined<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
