internal import COpenSSL

// Turning what OpenSSL leaves behind after a failed call (the SSL_get_error code,
// the error queue, the alerts seen, the verification result) into one `TLSError`
// that says what happened in the terms of the protocol.
extension TLSEngine {
    /// The error for a failed `SSL_*` call. `errors` is the queue that call left.
    func failure(sslError: Int32, errors: [OpenSSLErrorEntry]) -> TLSError {
        let reason = OpenSSLErrorQueue.summary(errors)
        let alert: TLSError.AlertEvent? = observations.alertSent.map { .sent($0) }
            ?? observations.alertReceived.map { .received($0) }
        func error(_ kind: TLSError.Kind, _ explanation: String, verifyError: String? = nil) -> TLSError {
            TLSError(kind: kind, explanation: explanation, openSSLReason: reason, alert: alert, verifyError: verifyError)
        }

        if var decided = observations.callbackFailure {
            decided.alert = decided.alert ?? alert
            decided.openSSLReason = decided.openSSLReason ?? reason
            return decided
        }
        if sslError == SSL_ERROR_ZERO_RETURN {
            return error(.peerAborted, "peer closed the connection (close notify) before the handshake completed")
        }
        let sslReasons = Set(errors.filter { $0.library == ERR_LIB_SSL }.map(\.reason))
        let peer = context.role == .client ? "server" : "client"

        if sslReasons.contains(SSL_R_CERTIFICATE_VERIFY_FAILED) {
            let code = SSL_get_verify_result(ssl)
            let text = Self.verifyErrorText(code)
            if code == Int(X509_V_ERR_HOSTNAME_MISMATCH) || code == Int(X509_V_ERR_IP_ADDRESS_MISMATCH) {
                return error(.hostNameMismatch,
                             "server certificate does not name \(serverName ?? "the requested host")", verifyError: text)
            }
            // Name who issued it: a TLS-inspecting proxy's CA, a private CA (the one clue a user acts on).
            let issuer = peerChainLeafIssuer
            let issued = issuer.isEmpty ? "" : " (issued by \(issuer))"
            return error(.peerCertificateUntrusted, "\(peer) certificate is not trusted: \(text)\(issued)", verifyError: text)
        }
        if sslReasons.contains(SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE) {
            return error(.clientCertificateRequired, "peer presented no client certificate but one is required")
        }
        if let received = observations.alertReceived {
            return failure(afterAlert: received, make: { kind, explanation in error(kind, explanation) })
        }
        if sslReasons.contains(SSL_R_HTTP_REQUEST) {
            return error(.notTLS, "peer sent a plain HTTP request where a TLS ClientHello was expected")
        }
        if sslReasons.contains(SSL_R_HTTPS_PROXY_REQUEST) {
            return error(.notTLS, "peer sent an HTTP CONNECT request where a TLS ClientHello was expected")
        }
        if !sslReasons.isDisjoint(with: [SSL_R_WRONG_VERSION_NUMBER, SSL_R_PACKET_LENGTH_TOO_LONG, SSL_R_UNKNOWN_PROTOCOL]) {
            return error(.notTLS, "peer's bytes are not TLS records")
        }
        if !sslReasons.isDisjoint(with: [SSL_R_UNSUPPORTED_PROTOCOL, SSL_R_NO_PROTOCOLS_AVAILABLE]) {
            return error(.protocolVersionMismatch, "\(peer) supports none of the TLS versions this side accepts")
        }
        if sslReasons.contains(SSL_R_NO_SHARED_CIPHER) {
            return error(.noSharedCipher, "\(peer) offers no cipher suite this side accepts")
        }
        if errors.isEmpty {
            return error(.protocolViolation, "TLS connection failed without a reason from OpenSSL (SSL error \(sslError))")
        }
        return error(.protocolViolation, "TLS protocol error: \(errors[0].reasonText)")
    }

    /// The issuer of the certificate the peer presented, from the chain it
    /// sent (kept after a failed verification, unlike the verified peer);
    /// empty when it sent none.
    private var peerChainLeafIssuer: String {
        guard let chain = SSL_get_peer_cert_chain(ssl), OPENSSL_sk_num(chain) > 0,
              let leaf = OPENSSL_sk_value(chain, 0) else { return "" }
        let certificate = OpaquePointer(leaf)
        guard X509_up_ref(certificate) == 1 else { return "" }
        return TLSCertificate(taking: certificate).issuer
    }

    /// Explains a fatal alert from the peer, given what this side knows about its own part.
    private func failure(afterAlert alert: TLSAlert,
                         make: (TLSError.Kind, String) -> TLSError) -> TLSError {
        let isClient = context.role == .client
        let peer = isClient ? "server" : "client"
        switch alert {
        case .certificateRequired:
            return make(.clientCertificateRequired, "server requires a client certificate and none was presented")
        case .handshakeFailure where isClient && observations.certificateRequested:
            return make(.clientCertificateRequired,
                        "server asked for a client certificate, none is configured, and the server aborted the handshake "
                            + "(TLS 1.2 servers answer a missing required certificate with handshake failure)")
        case .handshakeFailure:
            return make(.peerAborted, "\(peer) aborted the handshake: no common parameters (cipher, group, signature) or a certificate it requires is missing")
        case .unknownCA, .badCertificate, .unsupportedCertificate, .certificateRevoked,
             .certificateExpired, .certificateUnknown, .accessDenied:
            let ours = isClient ? "client" : "server"
            return make(.certificateRejectedByPeer, "\(peer) rejected our \(ours) certificate")
        case .noApplicationProtocol:
            return make(.noApplicationProtocol, "server supports none of the offered application protocols (ALPN)")
        case .protocolVersion:
            return make(.protocolVersionMismatch, "\(peer) supports none of the TLS versions this side offered")
        case .unrecognizedName:
            return make(.unknownServerName, "server has no certificate for the name \(serverName ?? "requested")")
        default:
            return make(.peerAborted, "\(peer) aborted the connection with alert \"\(alert.name)\"")
        }
    }
}
