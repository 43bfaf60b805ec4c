import Wire

/// Refuses requests aimed at the proxy itself, which would otherwise loop
/// through it until descriptors run out.
///
/// Addresses are compared normalised (`SocketAddress.normalised`), so every
/// spelling of one destination is caught: `127.1`, `2130706433`,
/// `0x7f000001`, `[::ffff:127.0.0.1]`, `[::ffff:7f00:1]`, `[::127.0.0.1]`.
/// The listen addresses are the ones the listeners are actually bound to
/// (port 0 means the ephemeral port they got; a listen name such as
/// `localhost` binds several, `otherListenIPs`). A wildcard listener (`0.0.0.0`, `::`)
/// answers on loopback, on the unspecified address and on every address of
/// every local interface (`localAddresses`, from `LocalInterfaces` when the
/// listener binds). The layer checks each target before connecting
/// (`refuses(_:)`: literals and `localhost`); the driver checks each
/// upstream connection's resolved peer (`refuses(peerIP:port:)`), which
/// catches names that resolve here.
public struct LoopGuard: Hashable, Sendable {
    /// The bound IP address as text (`127.0.0.1`, `::`), and port.
    public let listenIP: String
    public let port: Int
    /// The other addresses bound on the same port, when the listen host was
    /// a name with several (`localhost`: 127.0.0.1 and ::1).
    public let otherListenIPs: [String]
    /// Every bound address, normalised (port 0).
    private let listens: [SocketAddress]
    /// The local interfaces' addresses (normalised, port 0).
    private let localAddresses: Set<SocketAddress>

    public init(listenIP: String, port: Int, otherListenIPs: [String] = [], localAddresses: [SocketAddress] = []) {
        self.listenIP = listenIP
        self.port = port
        self.otherListenIPs = otherListenIPs
        listens = ([listenIP] + otherListenIPs).compactMap { SocketAddress(numericHost: $0, port: 0)?.normalised }
        self.localAddresses = Set(localAddresses.map { $0.normalised.withPort(0) })
    }

    /// True when a connection to `target` would reach this proxy: an IP
    /// literal in any spelling, or `localhost` and its subdomains.
    public func refuses(_ target: UpstreamTarget) -> Bool {
        guard target.port == port else { return false }
        if target.host == "localhost" || target.host.hasSuffix(".localhost")
            || target.host == "localhost." || target.host.hasSuffix(".localhost.") {
            return reaches(.loopbackIPv4(port: 0)) || reaches(.loopbackIPv6(port: 0))
        }
        guard let address = SocketAddress(numericHost: target.host, port: 0) else { return false }
        return reaches(address.normalised)
    }

    /// True when a connection whose peer is `peerIP:peerPort` reached this proxy.
    public func refuses(peerIP: String, port peerPort: Int) -> Bool {
        guard peerPort == port, let peer = SocketAddress(numericHost: peerIP, port: 0) else { return false }
        return reaches(peer.normalised)
    }

    /// `refuses(peerIP:port:)` for a peer as its socket reports it. The port
    /// is compared first: a pooled upstream connection is checked on every
    /// request it carries, and one on another port than the proxy's (every
    /// upstream but a loop) then costs no formatting of its address.
    public func refuses(peer: SocketAddress) -> Bool {
        guard Int(peer.port) == port else { return false }
        return refuses(peerIP: peer.ip, port: Int(peer.port))
    }

    /// Whether a connection to the normalised `address` (port 0) lands on one of the listeners.
    private func reaches(_ address: SocketAddress) -> Bool {
        listens.contains { reaches(address, listener: $0) }
    }

    private func reaches(_ address: SocketAddress, listener listen: SocketAddress) -> Bool {
        if address == listen { return true }
        if listen.isUnspecified {
            // A wildcard listener: IPv4 only for 0.0.0.0; both families for :: (dual-stack).
            guard listen.family == .ipv6 || address.family == .ipv4 else { return false }
            return address.isUnspecified || address.isLoopback || localAddresses.contains(address)
        }
        // 0.0.0.0 and :: as destinations reach the local host (Linux connects them to loopback).
        return listen.isLoopback && address.isUnspecified
    }

    /// `127.0.0.0/8`, `::1` or IPv4-mapped loopback, in any spelling.
    public static func isLoopbackLiteral(_ host: String) -> Bool {
        SocketAddress(numericHost: host, port: 0)?.normalised.isLoopback ?? false
    }
}
