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

    /// Where it failed.
    public var place: Place

    public init(_ kind: ExchangeRecord.Failure.Kind, at place: Place, _ message: String, status: StatusType,
                nextHop: String? = nil, receivedStatus: Int? = nil) {
        failure = ExchangeRecord.Failure(kind: kind, location: place.description, message: message)
        // Side and stage from the place itself, not read back from its text
        // (which would take a host named `tls.test` for a TLS stage).
        failure.side = place.side
        failure.stage = place.stage(kind)
        self.place = place
        statusType = status
        self.nextHop = nextHop
        self.receivedStatus = receivedStatus
    }

    /// Where in the proxy an exchange or a connection failed: the downstream
    /// side (the client's connection), the upstream side (the origin's or an
    /// upstream proxy's), or the proxy itself. `description` is the recorded
    /// failure's `location` (`downstream request`, `upstream https://host:443`),
    /// the same text recordings have always carried.
    public enum Place: Hashable, Sendable, CustomStringConvertible {
        /// The client's connection as a whole (an idle or head timeout, the client gone).
        case downstream
        /// The client's connection failed or closed under an exchange.
        case downstreamConnection
        /// The TLS handshake with the client.
        case downstreamTLSHandshake
        /// The client's CONNECT request or its tunnel.
        case downstreamConnect
        /// The client's request (head, body or trailers).
        case downstreamRequest
        /// Writing the response to the client: its head, body, end.
        case downstreamResponseHead, downstreamResponseBody, downstreamResponseEnd
        /// Opening the TCP connection upstream, for a request.
        case upstreamConnect
        /// Opening the TCP connection to a client's CONNECT target.
        case upstreamConnectForCONNECT
        /// Opening the tunnel through the upstream proxy.
        case upstreamConnectViaProxy
        /// The exchange with this upstream (connection, stream, response).
        case upstream(UpstreamTarget)
        /// Sending the request's body or end upstream.
        case upstreamRequestBody, upstreamRequestEnd
        /// The upstream's response, refused by the proxy.
        case upstreamResponse
        /// A tunnel passed through uninspected to this authority.
        case passthroughTunnel(to: String)
        /// Switching both connections to the upgraded protocol; the upgraded connection afterwards.
        case upgrade, upgradedConnection
        /// An exchange hook's output on this message.
        case hook(on: Message)
        /// The proxy itself (stopping, a request it could not route).
        case proxy

        /// The message a hook acted on.
        public enum Message: String, Hashable, Sendable, CaseIterable {
            case request, response
        }

        /// The leg that failed, as the record says it (`side`): the client's
        /// for the downstream places, the server's for the upstream ones and
        /// a passthrough tunnel; nil where the proxy itself acted (`upgrade`,
        /// a hook, the proxy).
        public var side: ExchangeRecord.Failure.Side? {
            switch self {
            case .downstream, .downstreamConnection, .downstreamTLSHandshake, .downstreamConnect, .downstreamRequest,
                 .downstreamResponseHead, .downstreamResponseBody, .downstreamResponseEnd:
                .client
            case .upstreamConnect, .upstreamConnectForCONNECT, .upstreamConnectViaProxy, .upstream,
                 .upstreamRequestBody, .upstreamRequestEnd, .upstreamResponse, .passthroughTunnel:
                .upstream
            case .upgrade, .upgradedConnection, .hook, .proxy:
                nil
            }
        }

        /// How far the exchange got (`stage`), as the place says; where it
        /// says nothing, what `kind` implies (refused and unresolved: connect;
        /// TLS: tls). The connection places mean connecting unless the peer
        /// reset or closed an open connection.
        public func stage(_ kind: ExchangeRecord.Failure.Kind) -> ExchangeRecord.Failure.Stage? {
            switch self {
            case .downstreamTLSHandshake: return .tls
            case .downstreamConnect, .upstreamConnect, .upstreamConnectForCONNECT, .upstreamConnectViaProxy: return .connect
            case .downstreamRequest, .upstreamRequestBody, .upstreamRequestEnd, .hook(on: .request): return .request
            case .downstreamResponseHead, .downstreamResponseBody, .downstreamResponseEnd, .upstreamResponse,
                 .hook(on: .response):
                return .response
            case .downstreamConnection, .upgradedConnection:
                if kind != .reset && kind != .closedEarly { return .connect }
            case .downstream, .upstream, .passthroughTunnel, .upgrade, .proxy:
                break
            }
            switch kind {
            case .connectionRefused, .resolution: return .connect
            case .tls: return .tls
            default: return nil
            }
        }

        public var description: String {
            switch self {
            case .downstream: "downstream"
            case .downstreamConnection: "downstream connection"
            case .downstreamTLSHandshake: "downstream TLS handshake"
            case .downstreamConnect: "downstream CONNECT"
            case .downstreamRequest: "downstream request"
            case .downstreamResponseHead: "downstream response head"
            case .downstreamResponseBody: "downstream response body"
            case .downstreamResponseEnd: "downstream response end"
            case .upstreamConnect: "upstream connect"
            case .upstreamConnectForCONNECT: "upstream connect (CONNECT)"
            case .upstreamConnectViaProxy: "upstream connect (CONNECT via upstream proxy)"
            case .upstream(let target): "upstream \(target)"
            case .upstreamRequestBody: "upstream request body"
            case .upstreamRequestEnd: "upstream request end"
            case .upstreamResponse: "upstream response"
            case .passthroughTunnel(let authority): "passthrough tunnel to \(authority)"
            case .upgrade: "upgrade"
            case .upgradedConnection: "upgraded connection"
            case .hook(let message): "proxy hook on the \(message.rawValue)"
            case .proxy: "proxy"
            }
        }
    }

    /// `upstream connect: connection refused (127.0.0.1:1)`.
    public var description: String { "\(failure.location): \(failure.message)" }
}
