import Foundation

/// A forward proxy the client reaches over plain TCP and asks to `CONNECT`
/// to the server (`http://HOST:PORT`, the form `HTTPS_PROXY` takes).
public struct ForwardProxy: Hashable, Sendable, CustomStringConvertible {
    /// A host name or IP literal (IPv6 without brackets).
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `http://HOST:PORT`, `HOST:PORT` or `[IPv6]:PORT`, an optional
    /// trailing `/`; nil for anything else (another scheme, user info, a
    /// path, no port: a proxy's port has no sensible default).
    public init?(_ text: String) {
        var rest = Substring(text)
        if let range = rest.range(of: "://") {
            guard rest[..<range.lowerBound].lowercased() == "http" else { return nil }
            rest = rest[range.upperBound...]
        }
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.contains("/"), !rest.contains("@") else { return nil }
        let hostPart: Substring
        let portPart: Substring
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]"), rest[rest.index(after: close)...].hasPrefix(":") else { return nil }
            hostPart = rest[rest.index(after: rest.startIndex)..<close]
            portPart = rest[rest.index(close, offsetBy: 2)...]
        } else {
            guard let colon = rest.lastIndex(of: ":") else { return nil }
            hostPart = rest[..<colon]
            portPart = rest[rest.index(after: colon)...]
            guard !hostPart.contains(":") else { return nil }
        }
        guard !hostPart.isEmpty, let port = Int(portPart), (1...65535).contains(port) else { return nil }
        self.init(host: String(hostPart), port: port)
    }

    /// `http://host:port`.
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
            if name.hasPrefix("[") , let close = name.firstIndex(of: "]") {
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
