import Glibc
import Synchronization

/// A TCP socket bound and listening, not yet accepting: a port reserved for
/// a server that starts later. Connections that arrive meanwhile wait in the
/// backlog. Hand it to `Listener(adopting:…)` (the proxy: `ProxyServer.start(on:)`),
/// which takes the descriptor over; a socket never adopted is closed when
/// this value goes away, or by `close()`.
///
/// Lets a caller that must know a port before its server starts (the demo
/// names the proxy's origin to the mock server) keep the port instead of
/// releasing it and hoping to bind it again.
public final class ListeningSocket: Sendable {
    /// The bound address; carries the real port when bound to port 0.
    public let localAddress: SocketAddress
    /// The descriptor until a `Listener` takes it (or it is closed).
    private let descriptor: Mutex<Int32?>

    /// Binds `address` (with `SO_REUSEADDR`) and listens. Throws
    /// `.addressInUse(address)` when the address is taken,
    /// `.addressNotAvailable(address)` when it is not local, `.system` else.
    public init(bindingTo address: SocketAddress, backlog: Int32 = 1024) throws(WireError) {
        let descriptor = try Socket.makeTCP(family: address.cFamily)
        do throws(WireError) {
            try Socket.setOption(descriptor, level: SOL_SOCKET, name: SO_REUSEADDR, value: 1,
                                 call: "setsockopt(SO_REUSEADDR)")
            guard address.withSockAddr({ bind(descriptor, $0, $1) }) == 0 else {
                throw WireError.fromErrno(errno, call: "bind", address: address)
            }
            guard listen(descriptor, backlog) == 0 else {
                throw WireError.system(call: "listen", errno: errno)
            }
            localAddress = try Socket.localAddress(descriptor)
        } catch {
            Socket.close(descriptor)
            throw error
        }
        self.descriptor = Mutex(descriptor)
    }

    /// The descriptor, once: the caller now owns it. Nil when taken or closed before.
    func take() -> Int32? {
        descriptor.withLock { owned in
            defer { owned = nil }
            return owned
        }
    }

    /// Releases the port (when no `Listener` took it). Idempotent.
    public func close() {
        if let fd = take() { Socket.close(fd) }
    }

    deinit {
        close()
    }
}
