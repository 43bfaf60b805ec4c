/// Refuses requests aimed at the proxy itself, which would otherwise loop
/// through it until descriptors run out. Compares a target with the address
/// the listener is actually bound to (so port 0 means the ephemeral port it
/// got), by name and literal; the driver also compares each upstream
/// connection's resolved peer with the listener (`refuses(peerIP:port:)`).
public struct LoopGuard: Hashable, Sendable {
    /// The bound IP address as text (`127.0.0.1`, `::`), and port.
    public let listenIP: String
    public let port: Int
    /// The other addresses bound on the same port, when the listen host was
    /// a name with several (`localhost`: 127.0.0.1 and ::1).
    public let otherListenIPs: [String]

    public init(listenIP: String, port: Int, otherListenIPs: [String] = []) {
        self.listenIP = listenIP
        self.port = port
        self.otherListenIPs = otherListenIPs
    }

    /// Every bound IP address.
    var listenIPs: [String] { [listenIP] + otherListenIPs }

    /// True when the listener accepts connections on every local address.
    var isWildcard: Bool { listenIPs.contains { $0 == "0.0.0.0" || $0 == "::" } }

    /// True when a connection to `target` would reach this proxy.
    public func refuses(_ target: UpstreamTarget) -> Bool {
        guard target.port == port else { return false }
        return reachesListener(target.host)
    }

    /// True when a connection whose peer is `peerIP:peerPort` reached this proxy.
    public func refuses(peerIP: String, port peerPort: Int) -> Bool {
        peerPort == port && reachesListener(peerIP)
    }

    /// Whether `host` (a name or a literal) names an address this listener answers on.
    private func reachesListener(_ host: String) -> Bool {
        if listenIPs.contains(host) { return true }
        // 0.0.0.0 and :: as destinations reach the local host on Linux.
        let meansThisHost = host == "localhost" || host.hasSuffix(".localhost") || host == "0.0.0.0" || host == "::"
        if isWildcard { return meansThisHost || LoopGuard.isLoopbackLiteral(host) }
        let listenIsLoopback = listenIPs.contains(where: LoopGuard.isLoopbackLiteral)
        return listenIsLoopback && meansThisHost
    }

    /// `127.0.0.0/8` or `::1`.
    public static func isLoopbackLiteral(_ host: String) -> Bool {
        if host == "::1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }
}
