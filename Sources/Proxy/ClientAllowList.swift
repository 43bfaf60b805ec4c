import Wire

/// `--allow CIDR`: which clients may connect. The accept filter the
/// listeners run before a connection reaches the proxy's layers: a client
/// outside every range is closed at once and reported (`refused`).
///
/// Empty ranges admit everyone (the default, fine on loopback).
public struct ClientAllowList: Sendable {
    public var ranges: [AddressRange]

    public init(_ ranges: [AddressRange] = []) {
        self.ranges = ranges
    }

    /// Whether a client at `address` may use the proxy.
    public func admits(_ address: SocketAddress) -> Bool {
        ranges.isEmpty || ranges.contains { $0.contains(address) }
    }

    public var isEmpty: Bool { ranges.isEmpty }
}
