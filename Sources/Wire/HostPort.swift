/// A host (a name or an IP literal) and a port, as a user types one for a
/// listening address: `localhost:8080`, `127.0.0.1:0`, `[::1]:8080`.
///
/// Invariants: `host` is not empty and holds an IPv6 literal without
/// brackets; an IPv6 literal was written in brackets (its colons would make
/// the port ambiguous otherwise).
public struct HostPort: Hashable, Sendable, CustomStringConvertible {
    public let host: String
    public let port: UInt16

    public init?(host: String, port: UInt16) {
        guard !host.isEmpty else { return nil }
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT` or `[IPv6]:PORT`; nil for anything else (no port,
    /// a port outside 0…65535, an unbracketed IPv6 literal, an empty host).
    public init?(_ text: String) {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
            guard host.contains(":") else { return nil }
        } else {
            guard let colon = text.firstIndex(of: ":"), text.lastIndex(of: ":") == colon else { return nil }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
              let port = UInt16(portText) else { return nil }
        self.init(host: String(host), port: port)
    }

    /// `host:port`, with brackets around an IPv6 literal.
    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
