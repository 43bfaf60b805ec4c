import HTTP

/// Where an exchange goes: the scheme (and so whether the upstream leg is
/// TLS), the host and the port. Also the key of the upstream connection pool.
///
/// Invariants: `host` is lowercase, an IPv6 literal is held without brackets,
/// and `port` is 1…65535.
public struct UpstreamTarget: Hashable, Sendable, CustomStringConvertible {
    /// The two schemes a proxy forwards.
    public enum Scheme: String, Hashable, Sendable {
        case http, https

        /// 80 or 443.
        public var defaultPort: Int { self == .https ? 443 : 80 }
    }

    public let scheme: Scheme
    public let host: String
    public let port: Int

    /// Makes a target; nil for an empty host or a port outside 1…65535.
    public init?(scheme: Scheme, host: String, port: Int) {
        var host = HTTPField.lowercaseASCII(host)
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, (1...65535).contains(port) else { return nil }
        self.scheme = scheme
        self.host = host
        self.port = port
    }

    /// Parses `host`, `host:port`, `[v6]` or `[v6]:port`; the scheme's
    /// default port when none is given. Nil when it is not an authority
    /// (user info, a bad port, an empty host).
    public init?(authority: String, scheme: Scheme) {
        guard !authority.contains("@"), !authority.contains("/") else { return nil }
        let host: Substring
        let portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let rest = authority[authority.index(after: close)...]
            if rest.isEmpty {
                portText = nil
            } else {
                guard rest.hasPrefix(":") else { return nil }
                portText = rest.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            // One colon only: more than one without brackets is an unbracketed IPv6 literal.
            guard authority.firstIndex(of: ":") == colon else { return nil }
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = Substring(authority)
            portText = nil
        }
        var port = scheme.defaultPort
        if let portText {
            guard !portText.isEmpty, portText.allSatisfy(\.isASCIIDigitCharacter), let number = Int(portText) else {
                return nil
            }
            port = number
        }
        self.init(scheme: scheme, host: String(host), port: port)
    }

    /// Parses `http://authority` or `https://authority`, with nothing or `/`
    /// after the authority (a reverse proxy's upstream names an origin, not a path).
    public init?(url: String) {
        let scheme: Scheme
        let rest: Substring
        if url.hasPrefix("https://") {
            scheme = .https
            rest = url.dropFirst("https://".count)
        } else if url.hasPrefix("http://") {
            scheme = .http
            rest = url.dropFirst("http://".count)
        } else {
            return nil
        }
        let authority = rest.hasSuffix("/") ? rest.dropLast() : rest
        self.init(authority: String(authority), scheme: scheme)
    }

    /// `host:port`, with brackets around an IPv6 literal.
    public var authority: String {
        (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
    }

    /// The `Host`/`:authority` form: the port is left out when it is the scheme's default.
    public var hostField: String {
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return port == scheme.defaultPort ? bracketed : "\(bracketed):\(port)"
    }

    /// `https://host:port`.
    public var description: String { "\(scheme.rawValue)://\(authority)" }
}

fileprivate extension Character {
    /// True for the ASCII digits 0–9 only.
    var isASCIIDigitCharacter: Bool { isASCII && isNumber }
}
