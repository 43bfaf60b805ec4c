import HTTP

/// A response the proxy makes up itself (a 400 for a malformed request, a 502
/// when the upstream cannot be reached): a short plain-text body that says
/// why, and a `Proxy-Status` field (RFC 9209) naming the error type, so a
/// client, a log or a verifier can tell the proxy answered, not the server.
public struct LocalResponse: Hashable, Sendable {
    public var head: HTTPResponseHead
    public var body: [UInt8]

    /// The proxy's name in `Proxy-Status`.
    public static let proxyName = "intact"

    /// An error answer: `status`, the reason as the body, `Proxy-Status: intact; error=…; details="…"`.
    public init(status: Int, error: ProxyError) {
        let text = "intact: \(error.failure.location): \(error.failure.message)\n"
        body = Array(text.utf8)
        var fields = HTTPFields()
        fields.append("Content-Type", "text/plain; charset=utf-8")
        fields.append("Content-Length", String(body.count))
        fields.append("Proxy-Status", LocalResponse.proxyStatus(error))
        fields.append("Cache-Control", "no-store")
        head = HTTPResponseHead(status: HTTPStatus(status), fields: fields)
    }

    /// The answer as parts: head, body (when not empty), end.
    public var parts: [HTTPResponsePart] {
        body.isEmpty ? [.head(head), .end(trailers: nil)] : [.head(head), .body(body), .end(trailers: nil)]
    }

    /// `intact; error=connection_refused; details="…"`: `details` is an sf-string
    /// (RFC 8941 §3.3.3): printable ASCII only, `"` and `\` escaped, anything
    /// else replaced by `?`.
    /// An upstream proxy's refusal adds `next-hop="…"` and `received-status=N` (RFC 9209 §2.1.2, §2.1.3).
    static func proxyStatus(_ error: ProxyError) -> String {
        var value = "\(proxyName); error=\(error.statusType.rawValue)"
        if let nextHop = error.nextHop { value += "; next-hop=\(sfString(nextHop))" }
        if let status = error.receivedStatus { value += "; received-status=\(status)" }
        return value + "; details=\(sfString(error.failure.message))"
    }

    /// `text` as a quoted sf-string.
    static func sfString(_ text: String) -> String {
        var quoted = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"", "\\": quoted += "\\" + String(scalar)
            case " "..."~": quoted.unicodeScalars.append(scalar)
            default: quoted += "?"
            }
        }
        return quoted + "\""
    }
}
