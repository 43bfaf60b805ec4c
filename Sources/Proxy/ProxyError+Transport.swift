import TLS
import Transport

extension ProxyError {
    /// A transport failure at `location` (`.upstream(target)`,
    /// `.downstreamRequest`, …), with the Proxy-Status type it maps to.
    static func transport(_ error: TransportError, at location: Place) -> ProxyError {
        let message = error.description
        switch error {
        case .connect(let wire):
            let mapped = ProxyError.connectError(wire, message: message, at: location)
            return mapped
        case .connection:
            return ProxyError(.reset, at: location, message, status: .connectionTerminated)
        case .tlsHandshake(let tls), .tls(let tls):
            let certificate: Set<TLSError.Kind> = [.peerCertificateUntrusted, .hostNameMismatch, .certificateRejectedByPeer]
            return ProxyError(.tls, at: location, message,
                              status: certificate.contains(tls.kind) ? .tlsCertificateError : .tlsProtocolError)
        case .timeout(let what):
            return ProxyError(.timeout, at: location, message,
                              status: what == .connect ? .connectionTimeout : .tlsProtocolError)
        case .peerClosed(let stage):
            var problem = ProxyError(.closedEarly, at: location, message, status: .connectionTerminated)
            if stage == .responseOnReusedConnection { problem.notProcessed = .ifIdempotent }
            return problem
        case let .proxyRefused(proxy, status, reason):
            return .upstreamProxyRefused(proxy: proxy, status: status, reason: reason, at: location)
        case .http1Parse, .http1Serialize, .http2Connection, .http2Session, .unsupportedProtocol, .invalidState:
            return ProxyError(.protocolError, at: location, message, status: .httpProtocolError)
        case .extendedConnectNotAllowed:
            // The destination cannot carry the tunnel asked for; nothing is wrong with either peer's HTTP.
            return ProxyError(.protocolError, at: location, message, status: .destinationUnavailable)
        case .goAway:
            var problem = ProxyError(.reset, at: location, message, status: .connectionTerminated)
            problem.notProcessed = .certainly
            return problem
        case .streamReset(let reset):
            var problem = ProxyError(.reset, at: location, message, status: .connectionTerminated)
            if reset.code == .refusedStream, reset.initiator == .peer { problem.notProcessed = .certainly }
            return problem
        case .cancelled:
            return ProxyError(.reset, at: location, message, status: .connectionTerminated)
        }
    }
}

extension ProxyError {
    /// The upstream proxy answered CONNECT with a non-2xx status: the client
    /// gets 502 naming that proxy and its answer (`next-hop`,
    /// `received-status`). A 407 means Intact's credentials are missing or
    /// wrong: a configuration error; anything else leaves the destination
    /// unavailable through that proxy.
    static func upstreamProxyRefused(proxy: String, status: Int, reason: String, at location: Place) -> ProxyError {
        let message = "upstream proxy \(proxy) refused CONNECT: \(status) \(reason)"
            + (status == 407 ? " (give credentials with --upstream-proxy http://USER:PASSWORD@HOST:PORT)" : "")
        return ProxyError(.connectionRefused, at: location, message,
                          status: status == 407 ? .proxyConfigurationError : .destinationUnavailable,
                          nextHop: proxy, receivedStatus: status)
    }
}
