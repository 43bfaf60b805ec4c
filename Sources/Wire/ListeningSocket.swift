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

    /// Takes over `descriptor`, a socket bound and listening already that
    /// this process inherited (`intact proxy --listen-fd 3`: the scenario
    /// runner reserves each port once and hands the socket to the child that
    /// serves it). Makes it non-blocking and close-on-exec. Throws
    /// `.notListening(descriptor:reason:)` when it is not open, not a socket,
    /// not TCP, not IPv4/IPv6 or not listening; the descriptor is then left
    /// as it was (this value never owned it).
    public init(inheriting descriptor: Int32) throws(WireError) {
        func refuse(_ reason: String) -> WireError { .notListening(descriptor: descriptor, reason: reason) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw refuse(errno == EBADF ? "it is not open" : "fstat failed: \(WireError.errnoName(errno))")
        }
        guard status.st_mode & S_IFMT == S_IFSOCK else {
            let kind: String
            switch status.st_mode & S_IFMT {
            case S_IFREG: kind = "a regular file"
            case S_IFDIR: kind = "a directory"
            case S_IFCHR: kind = "a character device (a terminal?)"
            case S_IFIFO: kind = "a pipe"
            default: kind = "not a socket"
            }
            throw refuse("it is \(kind)")
        }
        func integerOption(_ name: Int32) -> Int32? {
            var value: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            return getsockopt(descriptor, SOL_SOCKET, name, &value, &length) == 0 ? value : nil
        }
        guard integerOption(SO_TYPE) == Int32(SOCK_STREAM.rawValue) else { throw refuse("it is not a stream socket") }
        let address: SocketAddress
        do {
            address = try Socket.localAddress(descriptor)
        } catch {
            throw refuse("it is not an IPv4 or IPv6 socket (\(error))")
        }
        guard integerOption(SO_ACCEPTCONN) == 1 else {
            throw refuse("it is bound to \(address) but not listening (listen(2) was not called)")
        }
        let flags = fcntl(descriptor, F_GETFL)
        guard flags >= 0, fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) == 0 else {
            throw WireError.system(call: "fcntl(F_SETFL)", errno: errno)
        }
        guard fcntl(descriptor, F_SETFD, FD_CLOEXEC) == 0 else {
            throw WireError.system(call: "fcntl(F_SETFD)", errno: errno)
        }
        localAddress = address
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
