import Foundation
import HTTP

/// A cookie as a user agent stores it (RFC 6265 §5.3).
public struct Cookie: Hashable, Sendable, Codable {
    public var name: String
    public var value: String
    /// The host (host-only cookie) or the domain it was set for, lowercase.
    public var domain: String
    /// True when the field had no `Domain`: the cookie goes back to exactly that host.
    public var hostOnly: Bool
    public var path: String
    public var secure: Bool
    public var httpOnly: Bool
    public var sameSite: String?
    /// Nil for a session cookie (lives as long as the jar).
    public var expires: Date?
    public var created: Date

    /// True when the cookie should be sent to `url` at `now` (domain, path, Secure, expiry).
    public func matches(_ url: AbsoluteURL, now: Date) -> Bool {
        if let expires, expires <= now { return false }
        if secure && url.origin.scheme != "https" { return false }
        let host = url.origin.host
        if hostOnly {
            guard host == domain else { return false }
        } else {
            guard CookieJar.domainMatches(host: host, domain: domain, hostIsIP: url.origin.hostIsIPAddress) else { return false }
        }
        return CookieJar.pathMatches(requestPath: url.path, cookiePath: path)
    }
}

/// A user agent's cookie store: the app owns one and the browser owns
/// another, as on a phone (`AUTH_FLOW.md`).
///
/// Follows RFC 6265 §5.3–5.4 except: no public-suffix list (a `Domain` equal
/// to a public suffix is accepted), no per-jar limits, no SameSite
/// enforcement (the flow never makes cross-site requests). A `Secure` cookie
/// set over plain http is rejected (RFC 6265bis). Cookies are keyed by
/// (name, domain, path); a newer one replaces an older one and keeps its
/// creation time.
public struct CookieJar: Sendable, Codable {
    /// What the jar did with one `Set-Cookie` field.
    public enum Decision: Hashable, Sendable, Codable {
        case stored(name: String)
        /// The field expired the cookie (e.g. `Max-Age=0`) and removed any stored one.
        case deleted(name: String)
        /// The cookie was refused; `reason` says why (domain mismatch, Secure over http).
        case rejected(name: String, reason: String)
        /// The field held no cookie at all (no `name=value`).
        case unparsable(field: String)
    }

    public private(set) var cookies: [Cookie] = []

    public init() {}

    /// Applies every `Set-Cookie` field of a response received from `url`, in order.
    @discardableResult
    public mutating func receive(_ response: HTTPResponseHead, from url: AbsoluteURL, now: Date) -> [Decision] {
        response.fields.values("Set-Cookie").map { receive(setCookie: $0, from: url, now: now) }
    }

    /// Applies one `Set-Cookie` field value received from `url`.
    @discardableResult
    public mutating func receive(setCookie field: String, from url: AbsoluteURL, now: Date) -> Decision {
        guard let parsed = SetCookie(parsing: field) else { return .unparsable(field: field) }
        return store(parsed, from: url, now: now)
    }

    /// Stores a parsed cookie received from `url`.
    @discardableResult
    public mutating func store(_ setCookie: SetCookie, from url: AbsoluteURL, now: Date) -> Decision {
        let host = url.origin.host
        var domain = host
        var hostOnly = true
        if let d = setCookie.domain, d != host {
            guard CookieJar.domainMatches(host: host, domain: d, hostIsIP: url.origin.hostIsIPAddress) else {
                return .rejected(name: setCookie.name, reason: "Domain=\(d) does not match host \(host)")
            }
            domain = d
            hostOnly = false
        } else if setCookie.domain != nil {
            hostOnly = false
        }
        if setCookie.secure && url.origin.scheme != "https" {
            return .rejected(name: setCookie.name, reason: "Secure cookie set over \(url.origin.scheme)")
        }
        let path = setCookie.path ?? CookieJar.defaultPath(for: url.path)
        let expiry = setCookie.expiry(receivedAt: now)
        let existing = cookies.firstIndex { $0.name == setCookie.name && $0.domain == domain && $0.path == path }
        if let expiry, expiry <= now {
            if let existing { cookies.remove(at: existing) }
            return .deleted(name: setCookie.name)
        }
        let cookie = Cookie(name: setCookie.name, value: setCookie.value, domain: domain, hostOnly: hostOnly,
                            path: path, secure: setCookie.secure, httpOnly: setCookie.httpOnly,
                            sameSite: setCookie.sameSite, expires: expiry,
                            created: existing.map { cookies[$0].created } ?? now)
        if let existing { cookies[existing] = cookie } else { cookies.append(cookie) }
        return .stored(name: setCookie.name)
    }

    /// The cookies to send to `url` at `now`, longest path first, then oldest first (RFC 6265 §5.4).
    public func cookies(for url: AbsoluteURL, now: Date) -> [Cookie] {
        cookies.enumerated()
            .filter { $0.element.matches(url, now: now) }
            .sorted { a, b in
                if a.element.path.count != b.element.path.count { return a.element.path.count > b.element.path.count }
                if a.element.created != b.element.created { return a.element.created < b.element.created }
                return a.offset < b.offset
            }
            .map(\.element)
    }

    /// The `Cookie` field value for a request to `url`, or nil when no cookie applies.
    public func cookieHeader(for url: AbsoluteURL, now: Date) -> String? {
        let matching = cookies(for: url, now: now)
        guard !matching.isEmpty else { return nil }
        return matching.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }

    /// The value of the first cookie named `name` that would go to `url`.
    public func value(of name: String, for url: AbsoluteURL, now: Date) -> String? {
        cookies(for: url, now: now).first { $0.name == name }?.value
    }

    /// Forgets every cookie (the browser closing, step 8).
    public mutating func removeAll() {
        cookies.removeAll()
    }

    /// RFC 6265 §5.1.3.
    static func domainMatches(host: String, domain: String, hostIsIP: Bool) -> Bool {
        if host == domain { return true }
        return !hostIsIP && host.hasSuffix("." + domain)
    }

    /// RFC 6265 §5.1.4.
    static func pathMatches(requestPath: String, cookiePath: String) -> Bool {
        if requestPath == cookiePath { return true }
        guard requestPath.hasPrefix(cookiePath) else { return false }
        return cookiePath.hasSuffix("/") || requestPath.dropFirst(cookiePath.count).hasPrefix("/")
    }

    /// RFC 6265 §5.1.4: the request path up to, not including, its last `/`.
    static func defaultPath(for requestPath: String) -> String {
        guard requestPath.hasPrefix("/"), let last = requestPath.lastIndex(of: "/"), last != requestPath.startIndex else { return "/" }
        return String(requestPath[..<last])
    }

    /// The `name=value` pairs of a request's `Cookie` fields (several fields,
    /// as HTTP/2 crumbs arrive, are joined). Pairs without `=` are skipped.
    public static func parseCookieHeader(_ fields: HTTPFields) -> [(name: String, value: String)] {
        fields.values("Cookie").flatMap { $0.split(separator: ";") }.compactMap { crumb in
            guard let eq = crumb.firstIndex(of: "=") else { return nil }
            let name = SetCookie.trim(crumb[..<eq])
            return name.isEmpty ? nil : (name, SetCookie.trim(crumb[crumb.index(after: eq)...]))
        }
    }
}
