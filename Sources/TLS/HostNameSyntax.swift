import Hashing

/// Classifies a server name the way SNI (RFC 6066 §3) needs it: a DNS host
/// name of RFC 1123 labels, an IP address literal (which SNI forbids), or
/// neither. Pure Swift: used on untrusted ClientHello bytes.
enum HostNameSyntax {
    enum Verdict: Equatable {
        /// A valid host name (letters, digits and hyphens in dot-separated labels).
        case hostName
        /// An IPv4 dotted quad or an IPv6 literal.
        case ipAddress
        case invalid(reason: String)
    }

    /// The longest host name, in bytes, without a trailing dot (RFC 1035 §2.3.4).
    static let maximumLength = 253
    static let maximumLabelLength = 63

    static func check(_ name: [UInt8]) -> Verdict {
        guard !name.isEmpty else { return .invalid(reason: "the name is empty") }
        if name.contains(UInt8(ascii: ":")) {
            return isIPv6Literal(name) ? .ipAddress : .invalid(reason: "a ':' is not allowed in a host name")
        }
        if isIPv4Literal(name) { return .ipAddress }
        guard name.count <= maximumLength else {
            return .invalid(reason: "the name is \(name.count) bytes, longer than \(maximumLength)")
        }
        let labels = name.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        for label in labels {
            guard !label.isEmpty else {
                return .invalid(reason: name.last == UInt8(ascii: ".") ? "a trailing dot is not allowed" : "a label is empty")
            }
            guard label.count <= maximumLabelLength else {
                return .invalid(reason: "a label is \(label.count) bytes, longer than \(maximumLabelLength)")
            }
            if let bad = label.first(where: { !isLetterDigitHyphen($0) }) {
                return .invalid(reason: "character \(describe(bad)) is not allowed in a host name")
            }
            guard label.first != UInt8(ascii: "-"), label.last != UInt8(ascii: "-") else {
                return .invalid(reason: "a label may not start or end with '-'")
            }
        }
        if let top = labels.last, top.allSatisfy(isDigit) {
            return .invalid(reason: "the last label is all digits, which makes it an address, not a host name")
        }
        return .hostName
    }

    private static func isLetterDigitHyphen(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z")) || byte == UInt8(ascii: "-")
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private static func isIPv4Literal(_ name: [UInt8]) -> Bool {
        let parts = name.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in
            (1...3).contains(part.count) && part.allSatisfy(isDigit)
                && Int(String(decoding: part, as: UTF8.self))! <= 255
        }
    }

    /// Hex groups and colons (with an optional embedded IPv4 tail); enough to tell an
    /// address from a name, not a full RFC 4291 parser.
    private static func isIPv6Literal(_ name: [UInt8]) -> Bool {
        name.count <= 45 && name.allSatisfy { byte in
            isDigit(byte) || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "f"))
                || byte == UInt8(ascii: ":") || byte == UInt8(ascii: ".")
        }
    }

    /// "'_' (0x5f)" for printable bytes, "0x00" otherwise.
    static func describe(_ byte: UInt8) -> String {
        let hex = "0x" + Encoding.hex([byte])
        return (0x21...0x7e).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))' (\(hex))" : hex
    }
}
