import Evidence
import TLS

extension TLSDetails {
    /// What a completed handshake settled, as a record keeps it.
    ///
    /// - Parameter presentedClientCertificate: on a client leg, the subject
    ///   of the certificate this side presented (the peer certificate is the
    ///   server's); ignored on a server leg, where the peer certificate is the
    ///   client's.
    init(_ info: TLSConnectionInfo, presentedClientCertificate: String? = nil) {
        let clientSubject: String?
        switch info.role {
        case .server: clientSubject = info.peerCertificate?.subject
        case .client: clientSubject = presentedClientCertificate
        }
        self.init(version: info.version, cipher: info.cipher, sni: info.serverName, alpn: info.alpn,
                  peerCertificateSHA256: info.peerCertificate?.sha256Fingerprint,
                  clientCertificateSubject: clientSubject)
    }
}
