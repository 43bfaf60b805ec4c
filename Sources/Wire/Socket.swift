import Glibc

/// Thin wrappers over the socket system calls `Wire` makes, turning `-1` and
/// `errno` into `WireError` values. Descriptors here are owned by the caller.
enum Socket {
    /// A non-blocking, close-on-exec TCP socket for `family`.
    static func makeTCP(family: Int32) throws(WireError) -> Int32 {
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let fd = socket(family, type, 0)
        guard fd >= 0 else { throw WireError.system(call: "socket", errno: errno) }
        return fd
    }

    /// Makes an accepted socket non-blocking and close-on-exec. (`accept4`,
    /// which would do this in the same call, is a GNU extension that the
    /// Glibc module does not export; accepted sockets do not inherit
    /// `O_NONBLOCK` from the listener on Linux.)
    static func prepareAccepted(_ fd: Int32) throws(WireError) {
        guard fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 else { throw WireError.system(call: "fcntl(F_SETFD)", errno: errno) }
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 else {
            throw WireError.system(call: "fcntl(F_SETFL)", errno: errno)
        }
    }

    /// Sets an integer-valued socket option.
    static func setOption(_ fd: Int32, level: Int32, name: Int32, value: Int32, call: String) throws(WireError) {
        var value = value
        guard setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw WireError.system(call: call, errno: errno)
        }
    }

    /// Turns Nagle's algorithm off: a proxy forwards what it has at once.
    static func setNoDelay(_ fd: Int32) throws(WireError) {
        try setOption(fd, level: Int32(IPPROTO_TCP), name: TCP_NODELAY, value: 1, call: "setsockopt(TCP_NODELAY)")
    }

    /// Makes the next `close(2)` send RST and drop unsent data (`SO_LINGER` 0).
    static func setLingerZero(_ fd: Int32) {
        var option = linger(l_onoff: 1, l_linger: 0)
        // A failure leaves an ordinary FIN close, which is still a close.
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
    }

    /// The pending error of a socket (`SO_ERROR`), which also clears it.
    static func pendingError(_ fd: Int32) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &value, &length) == 0 else { return errno }
        return value
    }

    /// The address the socket is bound to.
    static func localAddress(_ fd: Int32) throws(WireError) -> SocketAddress {
        try SocketAddress.read("getsockname", from: fd) { getsockname($0, $1, $2) }
    }

    /// Closes a descriptor. Not retried on `EINTR`: on Linux the descriptor is
    /// released even then, and a retry could close a reused number.
    static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }
}
