import Foundation
import Transport

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
        guard let parsed = HTTPProxyAddress(url: text), parsed.authorization == nil, !text.contains("@") else { return nil }
        self.init(host: parsed.host, port: Int(parsed.port))
    }

    /// `http://host:port`.
    public var description: String {
        "http://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }

    /// Whether `NO_PROXY` exempts `host` (`HTTPProxyAddress.isExempt`).
    public static func isExempt(host: String, noProxy: String) -> Bool {
        HTTPProxyAddress.isExempt(host: host, noProxy: noProxy)
    }
}
