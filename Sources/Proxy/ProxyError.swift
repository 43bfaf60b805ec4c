import Evidence

/// Why the proxy could not carry an exchange (or a connection) through, as
/// a value: the recorded failure plus the RFC 9209 `Proxy-Status` error type
/// the proxy names when it answers the client itself.
public struct ProxyError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The error types of RFC 9209 §2.3 that Intact reports.
    public enum StatusType: String, Hashable, Sendable {
        case dnsError = "dns_error"
        case destinationNotFound = "destination_not_found"
        case connectionRefused = "connection_refused"
        case connectionTerminated = "connection_terminated"
        case connectionTimeout = "connection_timeout"
        case destinationUnavailable = "destination_unavailable"
        case tlsProtocolError = "tls_protocol_error"
        case tlsCertificateError = "tls_certificate_error"
        case httpRequestError = "http_request_error"
        case httpResponseIncomplete = "http_response_incomplete"
        case httpProtocolError = "http_protocol_error"
        case proxyLoopDetected = "proxy_loop_detected"
        case proxyConfigurationError = "proxy_configuration_error"
        case proxyInternalError = "proxy_internal_error"
    }

    /// What the recording says.
    public var failure: ExchangeRecord.Failure
    /// What the `Proxy-Status` field of a local answer says.
    public var statusType: StatusType
    /// Set when the upstream certainly or most likely never processed the
    /// request, so it may be sent again on a fresh connection.
    public var notProcessed: NotProcessed?

    /// How sure it is that the upstream never processed a request.
    public enum NotProcessed: Hashable, Sendable {
        /// Certain: its HTTP/2 stream was above a GOAWAY's last-stream-id, or
        /// refused with REFUSED_STREAM (RFC 9113 §8.7). Any method may be resent.
        case certainly
        /// Likely: a reused HTTP/1.1 connection ended before any byte of the
        /// response. Only an idempotent request may be resent (RFC 9110 §9.2.2).
        case ifIdempotent
    }
    /// The next hop that gave the answer, when it was not the destination
    /// (an upstream proxy): `Proxy-Status`'s `next-hop` parameter.
    public var nextHop: String?
    /// The status the next hop answered with: `Proxy-Status`'s `received-status`.
    public var receivedStatus: Int?

    public init(_ kind: ExchangeRecord.Failure.Kind, at location: String, _ message: String, status: StatusType,
                nextHop: String? = nil, receivedStatus: Int? = nil) {
        failure = ExchangeRecord.Failure(kind: kind, location: location, message: message)
        statusType = status
        self.nextHop = nextHop
        self.receivedStatus = receivedStatus
    }

    /// `upstream connect: connection refused (127.0.0.1:1)`.
    public var description: String { "\(failure.location): \(failure.message)" }
}
