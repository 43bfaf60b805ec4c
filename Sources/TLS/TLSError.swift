/// A TLS failure as a value: what went wrong in words a network engineer reads,
/// plus the evidence behind it (OpenSSL's reason, the alert that crossed the
/// wire, the certificate verification error).
///
/// `description` puts it together, for example:
/// `peer presented no client certificate but one is required (alert sent: certificate required; OpenSSL: peer did not return a certificate)`.
public struct TLSError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The class of failure, for callers that branch on it.
    public enum Kind: Sendable, Hashable {
        /// The peer's bytes are not TLS records (for example a plain HTTP request).
        case notTLS
        /// No TLS version both sides accept.
        case protocolVersionMismatch
        /// No cipher suite or signature algorithm both sides accept.
        case noSharedCipher
        /// ALPN offered on both sides with no protocol in common (and the server is set to fail on that).
        case noApplicationProtocol
        /// The server has no certificate for the name the client asked for.
        case unknownServerName
        /// A client certificate is required and none was presented.
        case clientCertificateRequired
        /// The peer's certificate chain did not verify against the trusted roots.
        case peerCertificateUntrusted
        /// The server's certificate chain verified but does not name the host we connected to.
        case hostNameMismatch
        /// The peer rejected the certificate we presented.
        case certificateRejectedByPeer
        /// The peer aborted with a fatal alert not covered by a more precise kind.
        case peerAborted
        /// The bytes broke the protocol (bad record, decode error, unexpected message).
        case protocolViolation
        /// A name that cannot be used as a TLS server name (SNI / verification).
        case invalidServerName
        /// A certificate, chain or private key could not be loaded or do not belong together.
        case invalidIdentity
        /// A context could not be configured (trust roots, key log file, protocol list).
        case configuration
        /// Application data was written or read outside the established state.
        case notEstablished
    }

    /// An alert seen on the connection, and which way it went.
    public enum AlertEvent: Sendable, Hashable, CustomStringConvertible {
        case sent(TLSAlert)
        case received(TLSAlert)

        public var alert: TLSAlert {
            switch self {
            case .sent(let alert), .received(let alert): alert
            }
        }

        public var description: String {
            switch self {
            case .sent(let alert): "alert sent: \(alert.name)"
            case .received(let alert): "alert received: \(alert.name)"
            }
        }
    }

    public var kind: Kind
    /// A short human explanation, e.g. "peer presented no client certificate but one is required".
    public var explanation: String
    /// OpenSSL's reason strings (`ERR_reason_error_string`) for the failing call, when OpenSSL reported any.
    public var openSSLReason: String?
    /// The fatal alert this side sent or received, when there was one.
    public var alert: AlertEvent?
    /// The X.509 verification error (`X509_verify_cert_error_string`), when verification failed.
    public var verifyError: String?

    public init(kind: Kind, explanation: String, openSSLReason: String? = nil,
                alert: AlertEvent? = nil, verifyError: String? = nil) {
        self.kind = kind
        self.explanation = explanation
        self.openSSLReason = openSSLReason
        self.alert = alert
        self.verifyError = verifyError
    }

    public var description: String {
        var details: [String] = []
        if let alert { details.append(alert.description) }
        if let verifyError, !explanation.contains(verifyError) { details.append("verification: \(verifyError)") }
        if let openSSLReason { details.append("OpenSSL: \(openSSLReason)") }
        return details.isEmpty ? explanation : "\(explanation) (\(details.joined(separator: "; ")))"
    }
}
