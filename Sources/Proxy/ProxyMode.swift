/// How the proxy finds where a request goes.
public enum ProxyMode: Hashable, Sendable, CustomStringConvertible {
    /// Clients are configured to use the proxy: they send `CONNECT host:port`
    /// (intercepted, or tunnelled for passthrough hosts) or absolute-form
    /// plain-HTTP requests.
    case forward
    /// Clients connect to the proxy as if it were the server; it terminates
    /// TLS and forwards every request to this upstream.
    case reverse(UpstreamTarget)

    /// Parses `forward` or `reverse:https://HOST:PORT` (or `reverse:http://…`).
    public init(parsing text: String) throws(ProxyModeError) {
        if text == "forward" {
            self = .forward
            return
        }
        guard text.hasPrefix("reverse:") else { throw ProxyModeError(text: text, reason: "unknown mode") }
        let url = String(text.dropFirst("reverse:".count))
        guard let target = UpstreamTarget(url: url) else {
            throw ProxyModeError(text: text, reason: "the upstream must be http://HOST[:PORT] or https://HOST[:PORT]")
        }
        self = .reverse(target)
    }

    /// True in reverse mode: every request goes to the one upstream it names.
    public var isReverse: Bool {
        if case .reverse = self { return true }
        return false
    }

    /// `forward` or `reverse:https://host:port`, as the recording header names it.
    public var description: String {
        switch self {
        case .forward: return "forward"
        case .reverse(let target): return "reverse:\(target)"
        }
    }
}

/// A mode the proxy cannot run in, naming the text and why.
public struct ProxyModeError: Error, Hashable, Sendable, CustomStringConvertible {
    public var text: String
    public var reason: String

    public var description: String {
        "mode '\(text)': \(reason) (expected forward or reverse:https://HOST:PORT)"
    }
}
