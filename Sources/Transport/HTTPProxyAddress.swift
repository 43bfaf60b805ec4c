import Foundation
import Wire

/// An HTTP forward proxy (plaintext) that accepts CONNECT, optionally with
/// Basic credentials sent as `Proxy-Authorization` on every CONNECT.
///
/// `description` never shows the credentials.
public struct HTTPProxyAddress: Hashable, Sendable, CustomStringConvertible {
    /// A host name or IP literal (IPv6 without brackets).
    public var host: String
    public var port: UInt16
    /// The `Proxy-Authorization` value (`Basic …`), when credentials were given.
    public var authorization: String?

    public init(host: String, port: UInt16, authorization: String? = nil) {
        self.host = host
        self.port = port
        self.authorization = authorization
    }

    /// Parses `http://[user:password@]HOST:PORT[/]` (the scheme may be left
    /// out; `[IPv6]` for IPv6 literals; user and password percent-decoded).
    /// Nil for another scheme, a path, a missing or bad port (a proxy's port
    /// has no sensible default), or user info without a colon.
    public init?(url text: String) {
        var rest = Substring(text)
        if let range = rest.range(of: "://") {
            guard rest[..<range.lowerBound].lowercased() == "http" else { return nil }
            rest = rest[range.upperBound...]
        }
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.contains("/") else { return nil }
        var authorization: String?
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            guard let colon = userInfo.firstIndex(of: ":"),
                  let user = String(userInfo[..<colon]).removingPercentEncoding,
                  let password = String(userInfo[userInfo.index(after: colon)...]).removingPercentEncoding,
                  !user.isEmpty else { return nil }
            authorization = "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
            rest = rest[rest.index(after: at)...]
        }
        guard let endpoint = HostPort(String(rest)), endpoint.port != 0 else { return nil }
        self.init(host: endpoint.host, port: endpoint.port, authorization: authorization)
    }

    /// `http://host:port`, credentials left out.
    public var description: String {
        "http://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }

    /// Whether `NO_PROXY` (comma-separated: `*`, host names, `.domain` or
    /// `domain` suffixes, IP literals; ports ignored) exempts `host`.
    public static func isExempt(host: String, noProxy: String) -> Bool {
        let host = host.lowercased()
        for entry in noProxy.split(separator: ",") {
            var name = entry.trimmingCharacters(in: .whitespaces).lowercased()
            if name == "*" { return true }
            if name.hasPrefix("["), let close = name.firstIndex(of: "]") {
                name = String(name[name.index(after: name.startIndex)..<close])
            } else if name.filter({ $0 == ":" }).count == 1, let colon = name.firstIndex(of: ":") {
                name = String(name[..<colon])
            }
            if name.hasPrefix(".") { name.removeFirst() }
            guard !name.isEmpty else { continue }
            if host == name || host.hasSuffix("." + name) { return true }
        }
        return false
    }
}
