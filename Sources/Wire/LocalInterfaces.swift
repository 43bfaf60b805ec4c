import Glibc

/// The addresses of this machine's network interfaces (`getifaddrs(3)`):
/// what a listener on `0.0.0.0` or `::` answers on besides loopback.
public enum LocalInterfaces {
    /// Every IPv4 and IPv6 address of every interface, normalised, port 0,
    /// without duplicates. Empty when `getifaddrs` fails. A system call that
    /// does not block on the network; cheap enough to call when a listener binds.
    public static func addresses() -> [SocketAddress] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return [] }
        defer { freeifaddrs(list) }
        var addresses: [SocketAddress] = []
        var node = list
        while let entry = node {
            if let raw = entry.pointee.ifa_addr, let address = SocketAddress(UnsafePointer(raw))?.normalised.withPort(0),
               !addresses.contains(address) {
                addresses.append(address)
            }
            node = entry.pointee.ifa_next
        }
        return addresses
    }
}
