import AuthFlow
import Evidence
import TLS
import Transport
import Wire

extension TransportError {
    /// What the sign-in flow makes of this failure (`SignInFlow.fail`). A TLS
    /// failure over a client certificate — none presented where one is
    /// required, or the one presented refused — says the peer asked for one,
    /// so the diagnosis is `client-cert-required`.
    var flowFailure: TransportFailure {
        switch self {
        case .connect(let error):
            return .connectFailed(error.description)
        case .connection(let error):
            switch error {
            case .connectionReset, .brokenPipe: return .connectionReset(error.description)
            default: return .other("connection failed: \(error)")
            }
        case .tlsHandshake(let error), .tls(let error):
            let certificateAsked = error.kind == .clientCertificateRequired || error.kind == .certificateRejectedByPeer
            return .tlsFailed(error.description, clientCertificateRequested: certificateAsked)
        case .timeout:
            return .timedOut
        case .peerClosed(let stage):
            return stage == .tlsHandshake ? .tlsFailed(description, clientCertificateRequested: false)
                                          : .closedWithoutResponse
        case .streamReset, .goAway:
            return .connectionReset(description)
        case .proxyRefused:
            return .connectFailed(description)
        case .http1Parse, .http1Serialize, .http2Connection, .http2Session, .unsupportedProtocol, .invalidState,
             .cancelled, .extendedConnectNotAllowed:
            return .other(description)
        }
    }

    /// This failure as a recording keeps it, at `location` (`client TLS handshake`).
    func recordedFailure(at location: String) -> ExchangeRecord.Failure {
        let kind: ExchangeRecord.Failure.Kind
        switch self {
        case .connect(let error):
            switch error {
            case .invalidHostName, .nameNotFound, .resolutionFailed: kind = .resolution
            case .timedOut: kind = .timeout
            default: kind = .connectionRefused
            }
        case .connection(let error):
            kind = error == .timedOut ? .timeout : .reset
        case .tlsHandshake, .tls:
            kind = .tls
        case .timeout:
            kind = .timeout
        case .peerClosed:
            kind = .closedEarly
        case .streamReset, .goAway:
            kind = .reset
        case .proxyRefused:
            kind = .connectionRefused
        case .http1Parse, .http2Connection, .unsupportedProtocol, .extendedConnectNotAllowed:
            kind = .protocolError
        case .http1Serialize, .http2Session, .invalidState, .cancelled:
            kind = .internal
        }
        return ExchangeRecord.Failure(kind: kind, location: location, message: description)
    }
}
