import HTTP

/// The origin of a URL: scheme, host and an optional explicit port.
///
/// Invariants: `scheme` and `host` are lowercase; `host` holds an IPv6
/// literal without brackets; `port` is nil when the URL gave none *or* gave
/// the scheme's default port, so `serialized` never shows a default port
/// (`https://h.test`, never `https://h.test:443`).
public struct Origin: Hashable, Sendable, Codable, CustomStringConvertible {
    public let scheme: String
    public let host: String
    public let port: Int?

    /// Makes an origin; a port equal to the scheme's default is dropped.
    public init(scheme: String, host: String, port: Int? = nil) {
        let scheme = HTTPField.lowercaseASCII(scheme)
        self.scheme = scheme
        self.host = HTTPField.lowercaseASCII(host)
        if let port, port != Origin.defaultPort(for: scheme) {
            self.port = port
        } else {
            self.port = nil
        }
    }

    /// 443 for https, 80 for http, nil for other schemes.
    public static func defaultPort(for scheme: String) -> Int? {
        switch scheme {
        case "https": return 443
        case "http": return 80
        default: return nil
        }
    }

    /// `host[:port]`, with brackets around an IPv6 literal.
    public var authority: String {
        let h = host.contains(":") ? "[\(host)]" : host
        if let port { return "\(h):\(port)" }
        return h
    }

    /// `scheme://host[:port]`.
    public var serialized: String { "\(scheme)://\(authority)" }

    public var description: String { serialized }

    /// True when the host is an IPv4 or IPv6 literal (cookies never domain-match those).
    public var hostIsIPAddress: Bool {
        if host.contains(":") { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isASCIIDigitCharacter) }
    }
}

/// An absolute URL as the flow uses it: an origin plus path and query.
///
/// Parsing is deliberately strict and small: `scheme://authority[/path][?query]`,
/// no user info, no fragment kept. Any scheme is accepted so callback URLs
/// (`com.appian.tempo://host/suite?…`) parse too. Paths are kept as written
/// (percent-encoding untouched); an empty path becomes `/`.
public struct AbsoluteURL: Hashable, Sendable, Codable, CustomStringConvertible {
    public let origin: Origin
    /// The path without its query, starting with `/`.
    public let path: String
    /// The query without `?`, or nil when there was none.
    public let query: String?

    public init(origin: Origin, path: String, query: String? = nil) {
        self.origin = origin
        self.path = path.hasPrefix("/") ? path : "/" + path
        self.query = query
    }

    /// Parses an absolute URL; nil when it is not one (no scheme, no host, bad port, user info).
    public init?(_ text: String) {
        guard let sep = text.range(of: "://") else { return nil }
        let scheme = String(text[..<sep.lowerBound])
        guard AbsoluteURL.isValidScheme(scheme) else { return nil }
        var rest = Substring(text[sep.upperBound...])
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard !authority.contains("@"), let (host, port) = AbsoluteURL.splitAuthority(authority) else { return nil }
        let pathAndQuery = rest[authorityEnd...]
        let path: Substring
        var query: String? = nil
        if let q = pathAndQuery.firstIndex(of: "?") {
            path = pathAndQuery[..<q]
            query = String(pathAndQuery[pathAndQuery.index(after: q)...])
        } else {
            path = pathAndQuery
        }
        self.init(origin: Origin(scheme: scheme, host: host, port: port),
                  path: path.isEmpty ? "/" : String(path), query: query)
    }

    /// RFC 3986 §3.1: `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`.
    static func isValidScheme(_ scheme: String) -> Bool {
        guard let first = scheme.first, first.isASCIILetterCharacter else { return false }
        return scheme.allSatisfy { $0.isASCIILetterCharacter || $0.isASCIIDigitCharacter || "+-.".contains($0) }
    }

    /// Splits `host[:port]` or `[v6][:port]`; nil for an empty host or a bad port.
    static func splitAuthority(_ authority: Substring) -> (String, Int?)? {
        var host: Substring
        var portText: Substring? = nil
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return nil }
                portText = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty else { return nil }
        guard let portText else { return (String(host), nil) }
        guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy(\.isASCIIDigitCharacter),
              let port = Int(portText), port > 0, port <= 65535 else { return nil }
        return (String(host), port)
    }

    /// Path and query as an origin-form request target (`/a/b?c=d`).
    public var pathAndQuery: String {
        if let query { return "\(path)?\(query)" }
        return path
    }

    /// The full URL text.
    public var serialized: String { origin.serialized + pathAndQuery }

    public var description: String { serialized }

    /// The query parsed as `application/x-www-form-urlencoded` pairs (empty when absent or malformed).
    public var queryItems: [(name: String, value: String)] {
        guard let query else { return [] }
        return FormEncoding.decode(query) ?? []
    }

    /// The first value of a query parameter.
    public func queryValue(_ name: String) -> String? {
        queryItems.first { $0.name == name }?.value
    }

    /// This URL with `items` appended to its query, form-encoded.
    public func appendingQuery(_ items: [(String, String)]) -> AbsoluteURL {
        let added = FormEncoding.encode(items)
        let query = self.query.map { $0.isEmpty ? added : "\($0)&\(added)" } ?? added
        return AbsoluteURL(origin: origin, path: path, query: query)
    }

    /// Resolves a reference found in a page or a `Location` field: absolute
    /// URLs parse as themselves; `/path` references keep this URL's origin.
    /// Other relative forms are not used by the flow and give nil.
    public func resolving(_ reference: String) -> AbsoluteURL? {
        if let absolute = AbsoluteURL(reference) { return absolute }
        guard reference.hasPrefix("/"), !reference.hasPrefix("//") else { return nil }
        if let q = reference.firstIndex(of: "?") {
            return AbsoluteURL(origin: origin, path: String(reference[..<q]),
                               query: String(reference[reference.index(after: q)...]))
        }
        return AbsoluteURL(origin: origin, path: reference)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let url = AbsoluteURL(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an absolute URL: \(text)")
        }
        self = url
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(serialized)
    }
}

extension Character {
    var isASCIIDigitCharacter: Bool { ("0"..."9").contains(self) }
    var isASCIILetterCharacter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
}
