import Glibc

/// An IPv4 or IPv6 address with a TCP port: a numeric endpoint, never a name.
///
/// Text forms are `"127.0.0.1:8080"` and `"[::1]:8080"` (`description` writes
/// them and `init?(_:)` reads them back). Host names such as `"localhost"` are
/// deliberately not accepted here: turning a name into addresses is the
/// `Resolver`'s job, which may block and so runs off the loop.
public struct SocketAddress: Hashable, Sendable, CustomStringConvertible, LosslessStringConvertible {
    /// The address family.
    public enum Family: Hashable, Sendable {
        case ipv4
        case ipv6
    }

    /// The address family; decides how many `addressBytes` there are.
    public let family: Family
    /// The address in network byte order: 4 bytes for IPv4, 16 for IPv6.
    public let addressBytes: [UInt8]
    /// The TCP port, in host byte order.
    public let port: UInt16
    /// The IPv6 scope (interface index) of a link-local address; 0 otherwise.
    public let scopeID: UInt32

    /// Parses `"a.b.c.d:port"` or `"[ipv6]:port"`.
    ///
    /// Returns nil for anything else, including host names, a missing or
    /// out-of-range port, and an IPv6 address without brackets (its colons
    /// would make the port ambiguous).
    public init?(_ description: String) {
        let host: Substring
        let portText: Substring
        if description.hasPrefix("[") {
            guard let close = description.firstIndex(of: "]") else { return nil }
            host = description[description.index(after: description.startIndex)..<close]
            let rest = description[description.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            portText = rest.dropFirst()
            guard host.contains(":") else { return nil }
        } else {
            let parts = description.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2 else { return nil }
            host = parts[0]
            portText = parts[1]
        }
        guard let port = SocketAddress.parsePort(portText) else { return nil }
        self.init(ip: String(host), port: port)
    }

    /// Makes an address from a numeric IP literal (`"127.0.0.1"`, `"::1"`,
    /// no brackets) and a port. Returns nil when `ip` is not a literal.
    public init?(ip: String, port: UInt16) {
        if ip.contains(":") {
            var raw = in6_addr()
            guard inet_pton(AF_INET6, ip, &raw) == 1 else { return nil }
            self.init(family: .ipv6, addressBytes: withUnsafeBytes(of: raw) { Array($0) }, port: port, scopeID: 0)
        } else {
            var raw = in_addr()
            guard inet_pton(AF_INET, ip, &raw) == 1 else { return nil }
            self.init(family: .ipv4, addressBytes: withUnsafeBytes(of: raw) { Array($0) }, port: port, scopeID: 0)
        }
    }

    private init(family: Family, addressBytes: [UInt8], port: UInt16, scopeID: UInt32) {
        self.family = family
        self.addressBytes = addressBytes
        self.port = port
        self.scopeID = scopeID
    }

    /// An address from its family and bytes (4 or 16, network order), port 0.
    static func from(family: Family, bytes: [UInt8]) -> SocketAddress {
        SocketAddress(family: family, addressBytes: bytes, port: 0, scopeID: 0)
    }

    /// `127.0.0.1:port`.
    public static func loopbackIPv4(port: UInt16) -> SocketAddress {
        SocketAddress(family: .ipv4, addressBytes: [127, 0, 0, 1], port: port, scopeID: 0)
    }

    /// `[::1]:port`.
    public static func loopbackIPv6(port: UInt16) -> SocketAddress {
        SocketAddress(family: .ipv6, addressBytes: [UInt8](repeating: 0, count: 15) + [1], port: port, scopeID: 0)
    }

    /// The same address with another port.
    public func withPort(_ port: UInt16) -> SocketAddress {
        SocketAddress(family: family, addressBytes: addressBytes, port: port, scopeID: scopeID)
    }

    /// True for 127.0.0.0/8, `::1`, and IPv4-mapped loopback (`::ffff:127.x.y.z`).
    public var isLoopback: Bool {
        switch family {
        case .ipv4:
            return addressBytes[0] == 127
        case .ipv6:
            if addressBytes == SocketAddress.loopbackIPv6(port: 0).addressBytes { return true }
            return addressBytes[0..<10].allSatisfy { $0 == 0 }
                && addressBytes[10] == 0xff && addressBytes[11] == 0xff && addressBytes[12] == 127
        }
    }

    /// The IP in its numeric text form, without brackets or port (`"::1"`).
    public var ip: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = self.family == .ipv4 ? AF_INET : AF_INET6
        let ok = addressBytes.withUnsafeBytes { raw in
            inet_ntop(family, raw.baseAddress, &buffer, socklen_t(buffer.count)) != nil
        }
        // inet_ntop fails only for a bad family or a short buffer, neither possible here.
        precondition(ok, "inet_ntop failed for a well-formed address")
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return scopeID == 0 ? text : "\(text)%\(scopeID)"
    }

    /// `"127.0.0.1:8080"` or `"[::1]:8080"`.
    public var description: String {
        switch family {
        case .ipv4: return "\(ip):\(port)"
        case .ipv6: return "[\(ip)]:\(port)"
        }
    }

    private static func parsePort(_ text: Substring) -> UInt16? {
        guard !text.isEmpty, text.count <= 5, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return UInt16(text)
    }
}

// MARK: - Conversion to and from C socket addresses

extension SocketAddress {
    /// Reads a `sockaddr_in` or `sockaddr_in6`; nil for any other family.
    init?(_ pointer: UnsafePointer<sockaddr>) {
        switch Int32(pointer.pointee.sa_family) {
        case AF_INET:
            let sin = UnsafeRawPointer(pointer).loadUnaligned(as: sockaddr_in.self)
            self.init(family: .ipv4, addressBytes: withUnsafeBytes(of: sin.sin_addr) { Array($0) },
                      port: UInt16(bigEndian: sin.sin_port), scopeID: 0)
        case AF_INET6:
            let sin6 = UnsafeRawPointer(pointer).loadUnaligned(as: sockaddr_in6.self)
            self.init(family: .ipv6, addressBytes: withUnsafeBytes(of: sin6.sin6_addr) { Array($0) },
                      port: UInt16(bigEndian: sin6.sin6_port), scopeID: sin6.sin6_scope_id)
        default:
            return nil
        }
    }

    /// The C family constant (`AF_INET`/`AF_INET6`) for `socket(2)`.
    var cFamily: Int32 { family == .ipv4 ? AF_INET : AF_INET6 }

    /// Calls `body` with this address as a `sockaddr` and its length, for
    /// `bind(2)` and `connect(2)`.
    func withSockAddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        switch family {
        case .ipv4:
            var sin = sockaddr_in()
            sin.sin_family = sa_family_t(AF_INET)
            sin.sin_port = port.bigEndian
            withUnsafeMutableBytes(of: &sin.sin_addr) { $0.copyBytes(from: addressBytes) }
            return withUnsafePointer(to: &sin) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        case .ipv6:
            var sin6 = sockaddr_in6()
            sin6.sin6_family = sa_family_t(AF_INET6)
            sin6.sin6_port = port.bigEndian
            sin6.sin6_scope_id = scopeID
            withUnsafeMutableBytes(of: &sin6.sin6_addr) { $0.copyBytes(from: addressBytes) }
            return withUnsafePointer(to: &sin6) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        }
    }

    /// Runs a `getsockname`/`getpeername`-shaped call and reads its result.
    static func read(
        _ call: String, from fd: Int32,
        _ function: (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32
    ) throws(WireError) -> SocketAddress {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { function(fd, $0, &length) }
        }
        guard result == 0 else { throw WireError.system(call: call, errno: errno) }
        let address = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress($0) }
        }
        guard let address else { throw WireError.system(call: call, errno: EAFNOSUPPORT) }
        return address
    }
}
