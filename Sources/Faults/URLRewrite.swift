import Foundation

/// Where `rewrite-urls` looks for URLs.
public enum URLPlace: String, Sendable, Hashable, CaseIterable {
    /// The request target (scheme, authority, path) and, with it, `Host`.
    case target
    /// The `Location` field of a response.
    case location
    /// Absolute URLs in the body text (JSON, HTML, anything textual), `\/`-escaped ones included.
    case body

    /// The legs this place exists on.
    public var legs: [FaultLeg] {
        switch self {
        case .target: return [.request]
        case .location: return [.response]
        case .body: return [.request, .response]
        }
    }
}

/// How `rewrite-urls` changes an absolute `http`/`https` URL: a new scheme,
/// a new host (the port is kept unless `host` has one), a new path prefix.
/// `onlyHost` limits it to URLs of one host.
public struct URLRewrite: Sendable, Hashable, CustomStringConvertible {
    /// The schemes a URL can be rewritten to.
    enum Scheme: String, CaseIterable { case http, https }

    public var scheme: String?
    public var host: String?
    public var pathFrom: String?
    public var pathTo: String?
    public var onlyHost: String?

    public init(scheme: String? = nil, host: String? = nil, pathFrom: String? = nil, pathTo: String? = nil, onlyHost: String? = nil) {
        self.scheme = scheme
        self.host = host
        self.pathFrom = pathFrom
        self.pathTo = pathTo
        self.onlyHost = onlyHost
    }

    /// The rewritten components, or nil when the URL is not concerned or nothing changes.
    func rewrite(scheme: String, authority: String, path: String) -> (scheme: String, authority: String, path: String)? {
        let (oldHost, port) = URLRewrite.split(authority: authority)
        if let onlyHost, oldHost.lowercased() != onlyHost.lowercased() { return nil }
        let newScheme = self.scheme ?? scheme
        var newAuthority = authority
        if let host {
            newAuthority = URLRewrite.split(authority: host).port != nil ? host : host + (port.map { ":\($0)" } ?? "")
        }
        var newPath = path
        if let pathFrom, let pathTo, URLRewrite.path(path, hasPrefix: pathFrom) {
            newPath = pathTo + path.dropFirst(pathFrom.count)
        }
        if newScheme == scheme && newAuthority == authority && newPath == path { return nil }
        return (newScheme, newAuthority, newPath)
    }

    /// Rewrites an absolute URL given as text (a `Location` value); relative references are left alone.
    func rewrite(url: String) -> String? {
        guard let schemeEnd = url.range(of: "://") else { return nil }
        let scheme = String(url[..<schemeEnd.lowerBound])
        guard ["http", "https"].contains(scheme.lowercased()) else { return nil }
        let rest = url[schemeEnd.upperBound...]
        let pathStart = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        guard let new = rewrite(scheme: scheme, authority: String(rest[..<pathStart]), path: String(rest[pathStart...])) else { return nil }
        return "\(new.scheme)://\(new.authority)\(new.path)"
    }

    /// Absolute http(s) URLs in text: scheme, `//` or JSON's `\/\/`, authority, then a path
    /// whose slashes may be escaped the same way.
    // A constant pattern, compiled once; the tests exercise it.
    private static let urlInText = try! CompiledRegex(#"\b((?i:https?)):(//|\\/\\/)(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+(?::[0-9]+)?)((?:\\?/[^\s"'<>?#\\]*)*)"#)

    /// Rewrites every absolute URL found in `text`; returns the text and how many URLs changed.
    func rewrite(text: String) -> (text: String, count: Int) {
        var out = ""
        var last = text.startIndex
        var count = 0
        for groups in URLRewrite.urlInText.matchRanges(in: text) {
            guard let whole = groups[0], let s = groups[1], let sep = groups[2], let a = groups[3] else { continue }
            let escaped = text[sep] != "//"
            let rawPath = groups[4].map { String(text[$0]) } ?? ""
            let path = escaped ? rawPath.replacingOccurrences(of: "\\/", with: "/") : rawPath
            guard let new = rewrite(scheme: String(text[s]), authority: String(text[a]), path: path) else { continue }
            out += text[last..<whole.lowerBound]
            out += new.scheme + ":" + text[sep] + new.authority + (escaped ? new.path.replacingOccurrences(of: "/", with: "\\/") : new.path)
            last = whole.upperBound
            count += 1
        }
        out += text[last...]
        return (out, count)
    }

    /// `host` and the port text of an authority (`[v6]:port` understood).
    static func split(authority: String) -> (host: String, port: String?) {
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            let after = authority[authority.index(after: close)...]
            return (String(authority[...close]), after.hasPrefix(":") ? String(after.dropFirst()) : nil)
        }
        if let colon = authority.lastIndex(of: ":") {
            return (String(authority[..<colon]), String(authority[authority.index(after: colon)...]))
        }
        return (authority, nil)
    }

    /// True when `prefix` is a whole-segment prefix of `path` (`/suite` of `/suite/x`, not of `/suitex`).
    private static func path(_ path: String, hasPrefix prefix: String) -> Bool {
        guard path.hasPrefix(prefix) else { return false }
        if prefix.hasSuffix("/") { return true }
        let next = path.dropFirst(prefix.count).first
        return next == nil || next == "/" || next == "?" || next == "#"
    }

    public var description: String {
        var parts: [String] = []
        if let scheme { parts.append("scheme → \(scheme)") }
        if let host { parts.append("host → \(host)") }
        if let pathFrom, let pathTo { parts.append("path \(pathFrom) → \(pathTo)") }
        if let onlyHost { parts.append("only \(onlyHost)") }
        return parts.joined(separator: ", ")
    }
}
