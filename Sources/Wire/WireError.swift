import Glibc

/// Every failure `Wire` reports, as a value that says what went wrong.
///
/// The common socket failures have their own cases so callers can match on
/// meaning (`.connectionRefused`) rather than on numbers; anything else is
/// `.system(call:errno:)`, which keeps the failing call and the `errno` and
/// renders both the symbolic name and the C library's text in `description`.
public enum WireError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// Nothing listens at the address (`ECONNREFUSED`).
    case connectionRefused(SocketAddress)
    /// The peer reset the connection (`ECONNRESET`), for example by aborting it.
    case connectionReset
    /// A write after the connection was already shut down or reset (`EPIPE`).
    case brokenPipe
    /// An operation did not finish in time: a connect past its timeout, or `ETIMEDOUT`.
    case timedOut
    /// No route to the address (`ENETUNREACH`, `EHOSTUNREACH`).
    case unreachable(SocketAddress)
    /// Another socket is already bound to the address (`EADDRINUSE`).
    case addressInUse(SocketAddress)
    /// The address is not one of this host's (`EADDRNOTAVAIL`).
    case addressNotAvailable(SocketAddress)
    /// A host name that is not syntactically a DNS name; no lookup was made.
    case invalidHostName(String)
    /// The name does not exist (`EAI_NONAME`, or a reserved `.invalid` name per RFC 6761).
    case nameNotFound(String)
    /// `getaddrinfo` failed for another reason; `code` is its `EAI_*` value.
    case resolutionFailed(host: String, code: Int32, message: String)
    /// An inherited descriptor that is not a TCP socket listening on an
    /// address (`ListeningSocket(inheriting:)`); `reason` says what it is instead.
    case notListening(descriptor: Int32, reason: String)
    /// Any other failed system call, with the `errno` it set.
    case system(call: String, errno: Int32)

    public var description: String {
        switch self {
        case .connectionRefused(let address):
            return "connection refused by \(address) (ECONNREFUSED)"
        case .connectionReset:
            return "connection reset by peer (ECONNRESET)"
        case .brokenPipe:
            return "write on a connection that is shut down (EPIPE)"
        case .timedOut:
            return "timed out (ETIMEDOUT)"
        case .unreachable(let address):
            return "no route to \(address) (ENETUNREACH/EHOSTUNREACH)"
        case .addressInUse(let address):
            return "address \(address) is already in use (EADDRINUSE)"
        case .addressNotAvailable(let address):
            return "address \(address) is not available on this host (EADDRNOTAVAIL)"
        case .invalidHostName(let host):
            return "'\(host)' is not a valid host name"
        case .nameNotFound(let host):
            return "host name '\(host)' not found"
        case .resolutionFailed(let host, let code, let message):
            return "resolving '\(host)' failed: \(message) (EAI code \(code))"
        case .notListening(let descriptor, let reason):
            return "descriptor \(descriptor) is not a listening TCP socket: \(reason)"
        case .system(let call, let code):
            return "\(call) failed: \(WireError.errnoName(code)) (\(WireError.errnoText(code)))"
        }
    }

    /// The symbolic name of an `errno` value (`"ECONNRESET"`), or `"errno N"`
    /// for one not in the table of socket-related codes.
    public static func errnoName(_ code: Int32) -> String {
        switch code {
        case EPERM: return "EPERM"
        case ENOENT: return "ENOENT"
        case EINTR: return "EINTR"
        case EIO: return "EIO"
        case EBADF: return "EBADF"
        case EAGAIN: return "EAGAIN"
        case ENOMEM: return "ENOMEM"
        case EACCES: return "EACCES"
        case EFAULT: return "EFAULT"
        case EINVAL: return "EINVAL"
        case ENFILE: return "ENFILE"
        case EMFILE: return "EMFILE"
        case ENOSPC: return "ENOSPC"
        case EPIPE: return "EPIPE"
        case ENOTSOCK: return "ENOTSOCK"
        case EPROTONOSUPPORT: return "EPROTONOSUPPORT"
        case EOPNOTSUPP: return "EOPNOTSUPP"
        case EAFNOSUPPORT: return "EAFNOSUPPORT"
        case EADDRINUSE: return "EADDRINUSE"
        case EADDRNOTAVAIL: return "EADDRNOTAVAIL"
        case ENETDOWN: return "ENETDOWN"
        case ENETUNREACH: return "ENETUNREACH"
        case ECONNABORTED: return "ECONNABORTED"
        case ECONNRESET: return "ECONNRESET"
        case ENOBUFS: return "ENOBUFS"
        case EISCONN: return "EISCONN"
        case ENOTCONN: return "ENOTCONN"
        case ETIMEDOUT: return "ETIMEDOUT"
        case ECONNREFUSED: return "ECONNREFUSED"
        case EHOSTUNREACH: return "EHOSTUNREACH"
        case EALREADY: return "EALREADY"
        case EINPROGRESS: return "EINPROGRESS"
        default: return "errno \(code)"
        }
    }

    /// The C library's text for an `errno` value (`strerror`).
    public static func errnoText(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "unknown error" }
        return String(cString: text)
    }

    /// Maps the `errno` left by `call` to the most specific case.
    ///
    /// `address` is the address the call was about (the connect target, the
    /// bind address); cases that name an address fall back to `.system` when
    /// there is none.
    static func fromErrno(_ code: Int32, call: String, address: SocketAddress? = nil) -> WireError {
        switch (code, address) {
        case (ECONNREFUSED, let address?): return .connectionRefused(address)
        case (ENETUNREACH, let address?), (EHOSTUNREACH, let address?): return .unreachable(address)
        case (EADDRINUSE, let address?): return .addressInUse(address)
        case (EADDRNOTAVAIL, let address?): return .addressNotAvailable(address)
        case (ECONNRESET, _): return .connectionReset
        case (EPIPE, _): return .brokenPipe
        case (ETIMEDOUT, _): return .timedOut
        default: return .system(call: call, errno: code)
        }
    }
}
