import TLS
import Transport

extension ProxyError {
    /// A transport failure at `location` (`upstream TLS handshake`,
    /// `downstream request body`, …), with the Proxy-Status type it maps to.
    static func transport(_ error: TransportError, at location: String) -> ProxyError {
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
        case .http1Parse, .http1Serialize, .http2Connection, .http2Session, .unsupportedProtocol, .invalidState,
             .proxyRefused:
            return ProxyError(.protocolError, at: location, message, status: .httpProtocolError)
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
