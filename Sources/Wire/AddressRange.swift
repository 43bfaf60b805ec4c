/// A block of IP addresses in CIDR notation (`192.168.1.0/24`, `::1/128`);
/// a bare address is a block of one. What `--allow` takes.
///
/// Invariants: `prefixLength` is at most 32 (IPv4) or 128 (IPv6) and the
/// network bytes have every bit past the prefix cleared.
public struct AddressRange: Hashable, Sendable, CustomStringConvertible {
    public let family: SocketAddress.Family
    /// The network address, in network byte order, host bits zero.
    public let network: [UInt8]
    public let prefixLength: Int

    /// Parses `ADDRESS/PREFIX` or `ADDRESS`. Nil for a malformed address, a
    /// prefix that is not a number within the family's width, or host bits
    /// set past the prefix (`10.0.0.1/8` is a typo for `10.0.0.0/8` or `10.0.0.1/32`).
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let address = SocketAddress(ip: String(parts[0]), port: 0) else { return nil }
        let width = address.addressBytes.count * 8
        var length = width
        if parts.count == 2 {
            guard !parts[1].isEmpty, parts[1].count <= 3, parts[1].allSatisfy({ $0.isASCII && $0.isNumber }),
                  let parsed = Int(parts[1]), parsed <= width else { return nil }
            length = parsed
        }
        let masked = AddressRange.mask(address.addressBytes, to: length)
        guard masked == address.addressBytes else { return nil }
        family = address.family
        network = masked
        prefixLength = length
    }

    /// Whether `address` is in the block. An IPv4-mapped IPv6 address
    /// (`::ffff:10.0.0.1`, how a dual-stack socket reports IPv4 peers) is
    /// matched as the IPv4 address it carries.
    public func contains(_ address: SocketAddress) -> Bool {
        var bytes = address.addressBytes
        var addressFamily = address.family
        if addressFamily == .ipv6, family == .ipv4, bytes[0..<10].allSatisfy({ $0 == 0 }),
           bytes[10] == 0xff, bytes[11] == 0xff {
            bytes = Array(bytes[12...])
            addressFamily = .ipv4
        }
        guard addressFamily == family else { return false }
        return AddressRange.mask(bytes, to: prefixLength) == network
    }

    /// `10.0.0.0/8`, `::1/128`.
    public var description: String {
        "\(SocketAddress.from(family: family, bytes: network).ip)/\(prefixLength)"
    }

    private static func mask(_ bytes: [UInt8], to length: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let bits = min(8, max(0, length - index * 8))
            return bits == 8 ? byte : byte & UInt8(truncatingIfNeeded: 0xff << (8 - bits))
        }
    }
}
