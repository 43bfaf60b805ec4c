import TLS

extension TLSDetails {
    /// What a completed handshake settled, as a record keeps it.
    ///
    /// On a server leg (the proxy's downstream, the mock server) the peer
    /// certificate is the client's, so its subject is the client certificate
    /// subject. On a client leg the peer certificate is the server's; give
    /// `presentedClientCertificate`, the subject of the certificate this side
    /// presented, when it presented one.
    public init(_ info: TLSConnectionInfo, presentedClientCertificate: String? = nil) {
        let peer = info.peerCertificate
        let clientSubject: String?
        switch info.role {
        case .server: clientSubject = peer?.subject
        case .client: clientSubject = presentedClientCertificate
        }
        self.init(version: info.version, cipher: info.cipher, sni: info.serverName, alpn: info.alpn,
                  peerCertificateSHA256: peer?.sha256Fingerprint, clientCertificateSubject: clientSubject,
                  sniIssue: info.serverNameIssue)
    }
}
