/// Every spelling of an address reduced to one value, for comparing
/// addresses as the kernel does (the proxy's loop check): `127.1`,
/// `2130706433`, `0x7f000001`, `::ffff:127.0.0.1` and `::ffff:7f00:1` are
/// all `127.0.0.1`.
extension SocketAddress {
    /// Parses an IP literal in any form `getaddrinfo` accepts as numeric (so
    /// exactly the forms a connect to `host` would use): dotted quads, the
    /// short and hexadecimal IPv4 forms, IPv6 with or without brackets.
    /// Never touches the network. Nil for a host name.
    public init?(numericHost host: String, port: UInt16) {
        var literal = host
        if literal.hasPrefix("["), literal.hasSuffix("]") { literal = String(literal.dropFirst().dropLast()) }
        guard !literal.isEmpty, case .success(let addresses) = Resolver.lookUp(literal, numericOnly: true),
              let first = addresses.first else { return nil }
        self = first.withPort(port)
    }

    /// The address with IPv4-mapped (`::ffff:a.b.c.d`) and IPv4-compatible
    /// (`::a.b.c.d`, other than `::` and `::1`) IPv6 addresses turned into the
    /// IPv4 address they carry, and the IPv6 scope dropped; any other address
    /// unchanged. Two spellings of one destination normalise to equal values.
    public var normalised: SocketAddress {
        guard family == .ipv6 else { return self }
        let prefixIsZero = addressBytes[0..<10].allSatisfy { $0 == 0 }
        let mapped = prefixIsZero && addressBytes[10] == 0xff && addressBytes[11] == 0xff
        let compatible = prefixIsZero && addressBytes[10] == 0 && addressBytes[11] == 0
            && addressBytes[12..<15].contains { $0 != 0 } // not :: nor ::1 (nor ::0.0.0.x)
        guard mapped || compatible else {
            return SocketAddress(ip: ipWithoutScope, port: port) ?? self
        }
        return SocketAddress(ip: addressBytes[12...].map(String.init).joined(separator: "."), port: port) ?? self
    }

    /// `0.0.0.0` or `::`: as a destination, the local host itself.
    public var isUnspecified: Bool { addressBytes.allSatisfy { $0 == 0 } }

    /// The IP text without a `%scope` suffix.
    private var ipWithoutScope: String {
        let text = ip
        return text.firstIndex(of: "%").map { String(text[..<$0]) } ?? text
    }
}
