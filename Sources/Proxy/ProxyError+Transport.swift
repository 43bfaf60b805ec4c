import TLS
import Transport
import Wire

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
            var message = message
            if tls.kind == .peerCertificateUntrusted, location.side == .upstream {
                // The likely cause and what to do: a TLS-inspecting proxy (or a private CA) between the tap and the server.
                message += "; if a TLS-inspecting proxy or a private CA issued it, trust that CA with --upstream-ca FILE "
                    + "(with --upstream-ca-adds to keep the system store too)"
            }
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

extension ProxyError {
    /// Opening a TCP connection to `target` failed.
    static func connect(_ error: WireError, to target: UpstreamTarget, at location: Place = .upstreamConnect) -> ProxyError {
        connectError(error, message: "connecting to \(target.authority) failed: \(error)", at: location)
    }

    /// A connect failure with its message, mapped by what went wrong.
    static func connectError(_ error: WireError, message: String, at location: Place) -> ProxyError {
        switch error {
        case .connectionRefused:
            return ProxyError(.connectionRefused, at: location, message, status: .connectionRefused)
        case .unreachable:
            return ProxyError(.connectionRefused, at: location, message, status: .destinationNotFound)
        case .nameNotFound, .invalidHostName, .resolutionFailed:
            return ProxyError(.resolution, at: location, message, status: .dnsError)
        case .timedOut:
            return ProxyError(.timeout, at: location, message, status: .connectionTimeout)
        case .connectionReset, .brokenPipe:
            return ProxyError(.reset, at: location, message, status: .connectionTerminated)
        case .addressInUse, .addressNotAvailable, .notListening, .system:
            return ProxyError(.internal, at: location, message, status: .proxyInternalError)
        }
    }
}
