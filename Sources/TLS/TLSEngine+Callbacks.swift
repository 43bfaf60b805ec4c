internal import COpenSSL

/// Facts the OpenSSL callbacks record during a handshake. They explain a
/// failure (`TLSEngine.failure`) and fill `TLSConnectionInfo`; they are
/// observations, not state: the engine's state is `TLSEngine.State`.
struct HandshakeObservations {
    /// The first fatal alert this side sent (close_notify does not count).
    var alertSent: TLSAlert?
    /// The first fatal alert the peer sent (close_notify does not count).
    var alertReceived: TLSAlert?
    /// Server: the SNI host name the client sent.
    var serverNameReceived: String?
    /// Server: the ALPN protocols the client offered, in its order.
    var offeredALPN: [String] = []
    /// Client without an identity: the server asked for a client certificate.
    var certificateRequested = false
    /// A failure decided inside a callback, more precise than what OpenSSL reports after it.
    var callbackFailure: TLSError?
}

/// The server-name callback's verdict.
enum ServerNameDecision {
    case proceed
    case abort(TLSAlert)
}

/// The ALPN select callback's verdict.
enum ALPNDecision {
    /// This range of the client's wire-format list names the chosen protocol.
    case selected(Range<Int>)
    /// Continue without ALPN.
    case none
    /// Abort with "no application protocol".
    case abort
}

// Called only from the callbacks in TLSContext+Callbacks.swift, inside this engine's
// own OpenSSL calls. They must not clear the error queue: the enclosing call reads it.
extension TLSEngine {
    func observe(alert: TLSAlert, sent: Bool) {
        guard alert != .closeNotify else { return }
        if sent {
            if observations.alertSent == nil { observations.alertSent = alert }
        } else if observations.alertReceived == nil {
            observations.alertReceived = alert
        }
    }

    func observeCertificateRequest() {
        observations.certificateRequested = true
    }

    /// Server: records the SNI and installs the certificate the provider picks for it.
    func serverNameReceived() -> ServerNameDecision {
        let name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name).map { String(cString: $0) }
        observations.serverNameReceived = name
        guard case .server(let configuration) = context.settings,
              let provider = configuration.certificateProvider else { return .proceed }
        if let identity = provider(name) {
            guard use(identity) else {
                observations.callbackFailure = TLSError(
                    kind: .invalidIdentity,
                    explanation: "the certificate provided for \(name ?? "a client without SNI") could not be installed")
                return .abort(.internalError)
            }
            return .proceed
        }
        if configuration.identity != nil { return .proceed }
        observations.callbackFailure = TLSError(
            kind: .unknownServerName,
            explanation: name.map { "server has no certificate for the name \($0)" }
                ?? "client sent no server name (SNI) and the server has no default certificate")
        return .abort(.unrecognizedName)
    }

    /// Server: picks the first protocol of the preference list that the client offered.
    func selectALPN(offeredWire: UnsafeBufferPointer<UInt8>) -> ALPNDecision {
        guard let offered = ALPNWireFormat.decode(offeredWire) else { return .none }
        observations.offeredALPN = SharedTLSValues.shared(offered.map(\.name))
        guard case .server(let configuration) = context.settings, !configuration.alpnPreference.isEmpty else {
            return .none
        }
        for preferred in configuration.alpnPreference {
            if let match = offered.first(where: { $0.name == preferred }) {
                return .selected(match.range)
            }
        }
        switch configuration.alpnMismatch {
        case .proceedWithoutALPN:
            return .none
        case .fail:
            observations.callbackFailure = TLSError(
                kind: .noApplicationProtocol,
                explanation: "client offered ALPN \(observations.offeredALPN.joined(separator: ", ")) but the server speaks only "
                    + configuration.alpnPreference.joined(separator: ", "))
            return .abort
        }
    }

    /// Presents `identity` on this connection instead of the context's.
    private func use(_ identity: TLSIdentity) -> Bool {
        SSL_certs_clear(ssl)
        guard SSL_use_certificate(ssl, identity.certificate.pointer) == 1,
              SSL_use_PrivateKey(ssl, identity.privateKey.pointer) == 1 else { return false }
        return identity.chain.allSatisfy { intact_SSL_add1_chain_cert(ssl, $0.pointer) == 1 }
    }
}
