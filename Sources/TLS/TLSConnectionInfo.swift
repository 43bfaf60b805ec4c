internal import COpenSSL

/// The outcome of checking a peer's certificate chain.
public enum TLSVerifyResult: Sendable, Hashable, Codable {
    /// The chain leads to a trusted root (and, for a client, names the host).
    case trusted
    /// The check failed for this reason (`X509_verify_cert_error_string`). Only seen on a
    /// completed handshake when verification was not enforced (insecure client mode).
    case untrusted(String)
    /// The peer presented no certificate (a server's client that declined).
    case noPeerCertificate
}

/// What a completed handshake settled, as recorded with every exchange.
public struct TLSConnectionInfo: Sendable, Hashable, Codable {
    public var role: TLSRole
    /// OpenSSL's protocol name, e.g. "TLSv1.3".
    public var version: String
    /// The cipher suite, e.g. "TLS_AES_256_GCM_SHA384".
    public var cipher: String
    /// The negotiated application protocol, e.g. "h2"; `nil`: none, HTTP/1.1 is assumed.
    public var alpn: String?
    /// Client: what we offered. Server: what the client offered, kept even when nothing was selected.
    public var offeredALPN: [String]
    /// Client: the SNI sent. Server: the SNI the client sent. `nil`: none.
    public var serverName: String?
    /// Server: why the SNI the client sent is not a valid host name (an IP
    /// address, `host:port`…), when the server accepted it anyway
    /// (`ClientHelloSummary.serverNameIssue`); nil otherwise.
    public var serverNameIssue: String?
    /// The peer's leaf certificate: the server's for a client, the client certificate for a server.
    public var peerCertificate: TLSCertificateSummary?
    public var verifyResult: TLSVerifyResult
    /// Whether the session was resumed rather than fully negotiated.
    public var sessionReused: Bool

    public init(role: TLSRole, version: String, cipher: String, alpn: String?, offeredALPN: [String],
                serverName: String?, peerCertificate: TLSCertificateSummary?, verifyResult: TLSVerifyResult,
                sessionReused: Bool) {
        self.role = role
        self.version = version
        self.cipher = cipher
        self.alpn = alpn
        self.offeredALPN = offeredALPN
        self.serverName = serverName
        self.peerCertificate = peerCertificate
        self.verifyResult = verifyResult
        self.sessionReused = sessionReused
    }

    /// The version as a `TLSVersion`, when it is one Intact names.
    public var tlsVersion: TLSVersion? {
        TLSVersion(rawValue: version)
    }
}

extension TLSEngine {
    /// Reads what the handshake settled. Called once, when it completes.
    func connectionInfo() -> TLSConnectionInfo {
        let version = String(cString: SSL_get_version(ssl))
        let cipher = SSL_get_current_cipher(ssl).flatMap { SSL_CIPHER_get_name($0) }.map(SharedTLSValues.cipherName) ?? ""
        var selected: UnsafePointer<UInt8>?
        var selectedLength: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &selected, &selectedLength)
        let alpn = selected.flatMap { pointer in
            selectedLength == 0 ? nil : String(decoding: UnsafeBufferPointer(start: pointer, count: Int(selectedLength)),
                                               as: UTF8.self)
        }
        let peer = SSL_get1_peer_certificate(ssl).map { TLSCertificate(taking: $0) }
        let verifyResult: TLSVerifyResult
        if peer == nil {
            verifyResult = .noPeerCertificate
        } else {
            let code = SSL_get_verify_result(ssl)
            verifyResult = code == X509_V_OK ? .trusted : .untrusted(Self.verifyErrorText(code))
        }
        let offered: [String]
        let serverName: String?
        switch context.settings {
        case .server:
            offered = observations.offeredALPN
            serverName = observations.serverNameReceived
        case .client(let configuration):
            offered = configuration.alpnOffer
            serverName = sentServerName
        }
        return TLSConnectionInfo(role: context.role, version: version, cipher: cipher, alpn: alpn,
                                 offeredALPN: offered, serverName: serverName, peerCertificate: peer?.summary,
                                 verifyResult: verifyResult, sessionReused: SSL_session_reused(ssl) == 1)
    }

    static func verifyErrorText(_ code: Int) -> String {
        X509_verify_cert_error_string(code).map { String(cString: $0) } ?? "verification error \(code)"
    }
}
