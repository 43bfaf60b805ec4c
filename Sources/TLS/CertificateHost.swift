import Glibc

/// A name a server certificate can be minted for: a DNS host name or an IP
/// address, validated and put in canonical form (lowercase without a
/// trailing dot; an IP address as `inet_ntop` prints it), so that equal
/// hosts share one cache entry and one certificate.
public enum CertificateHost: Hashable, Sendable, CustomStringConvertible {
    /// A host name of letter-digit-hyphen labels (underscores tolerated, as
    /// real hosts use them), each 1–63 characters, 253 in all.
    case dnsName(String)
    /// An IPv4 or IPv6 address (without brackets or zone).
    case ipAddress(String)

    /// Validates `name`. Throws `CertificateError.invalidName` saying what is wrong.
    public init(_ name: String) throws {
        if let address = Self.canonicalIPAddress(name) {
            self = .ipAddress(address)
            return
        }
        var host = name.lowercased()
        if host.hasSuffix(".") { host.removeLast() }
        if let problem = Self.hostNameProblem(host) {
            throw CertificateError.invalidName(name, reason: problem)
        }
        self = .dnsName(host)
    }

    /// The canonical name, as it appears in the certificate.
    public var description: String {
        switch self {
        case let .dnsName(name), let .ipAddress(name): return name
        }
    }

    /// Why `host` is not a valid host name, or `nil` when it is.
    private static func hostNameProblem(_ host: String) -> String? {
        let bytes = Array(host.utf8)
        if bytes.isEmpty { return "the name is empty" }
        if bytes.count > 253 { return "longer than 253 characters" }
        if bytes.contains(UInt8(ascii: "*")) { return "wildcards are not issued; ask for the exact host name" }
        if host.hasPrefix("[") || host.contains(":") {
            return "neither a host name nor an IP address (give an IPv6 address without brackets or zone)"
        }
        for label in bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false) {
            if label.isEmpty { return "empty label (two dots in a row, or a leading dot)" }
            if label.count > 63 { return "a label is longer than 63 characters" }
            if label.first == UInt8(ascii: "-") || label.last == UInt8(ascii: "-") {
                return "a label starts or ends with a hyphen"
            }
            for byte in label where !isHostCharacter(byte) {
                return "character '\(String(decoding: [byte], as: UTF8.self))' is not allowed in a host name "
                    + "(letters, digits, hyphens; non-ASCII names must be given in punycode)"
            }
        }
        if bytes.allSatisfy({ isDigit($0) || $0 == UInt8(ascii: ".") }) {
            return "looks like an IPv4 address but is not a valid one"
        }
        return nil
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private static func isHostCharacter(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }

    /// The address in `inet_ntop` form when `text` is an IPv4 (dotted quad)
    /// or IPv6 address, else `nil`.
    private static func canonicalIPAddress(_ text: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return inet_ntop(AF_INET, &v4, &buffer, socklen_t(buffer.count)).map { _ in Self.string(buffer) }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            return inet_ntop(AF_INET6, &v6, &buffer, socklen_t(buffer.count)).map { _ in Self.string(buffer) }
        }
        return nil
    }

    private static func string(_ cString: [CChar]) -> String {
        String(decoding: cString.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
