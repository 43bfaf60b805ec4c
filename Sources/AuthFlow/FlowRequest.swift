import HTTP

/// A request the flow wants sent: the head (origin form, `Host` included,
/// version HTTP/1.1 — an HTTP/2 driver maps `Host` to `:authority`), the
/// whole body, where it goes and on whose behalf.
public struct FlowRequest: Hashable, Sendable {
    public var step: FlowStep
    /// App or browser: whose cookie jar filled the `Cookie` field.
    public var agent: FlowAgent
    /// Where to connect and what to ask for (`head` agrees with it).
    public var url: AbsoluteURL
    public var head: HTTPRequestHead
    public var body: [UInt8]
    /// The `Intact-Trace` value, or nil when tracing is off.
    public var traceID: String?
}

/// What the driver should do next.
public enum FlowAction: Hashable, Sendable {
    /// Send this request and pass its response (or failure) back.
    case send(FlowRequest)
    /// The run is over.
    case finished(FlowOutcome)
}

/// Why an exchange produced no response, as the I/O driver saw it.
public enum TransportFailure: Hashable, Sendable, Codable, CustomStringConvertible {
    /// Could not connect (refused, unreachable, name not resolved).
    case connectFailed(String)
    /// TLS failed; `clientCertificateRequested` when the peer asked for a
    /// certificate (CertificateRequest, or a `certificate_required` alert).
    case tlsFailed(String, clientCertificateRequested: Bool)
    /// The connection was reset; `detail` says when (before/after headers, body bytes sent).
    case connectionReset(String)
    /// The peer closed without a complete response.
    case closedWithoutResponse
    case timedOut
    /// The response could not be parsed or another error occurred.
    case other(String)

    public var description: String {
        switch self {
        case .connectFailed(let d): return "connect failed: \(d)"
        case .tlsFailed(let d, let asked): return "TLS failed\(asked ? " (client certificate requested)" : ""): \(d)"
        case .connectionReset(let d): return "connection reset: \(d)"
        case .closedWithoutResponse: return "connection closed without a response"
        case .timedOut: return "timed out"
        case .other(let d): return d
        }
    }
}
