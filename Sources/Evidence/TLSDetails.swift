/// What one leg's TLS session looked like, as the TLS layer reported it.
/// Every value is optional: a plain-TCP leg has no `TLSDetails` at all, and a
/// failed handshake may have learnt only some of them. They are spelled
/// `Optional<…>` so the initialiser does not copy the value out whole (see
/// `ExchangeRecord`).
public struct TLSDetails: Codable, Hashable, Sendable {
    /// `TLSv1.2` or `TLSv1.3`.
    public var version: Optional<String>
    /// The negotiated cipher suite, OpenSSL's name (`TLS_AES_128_GCM_SHA256`).
    public var cipher: Optional<String>
    /// The server name the client asked for (SNI), as sent; bytes that are
    /// not visible ASCII written `\xHH`.
    public var sni: Optional<String>
    /// Why that SNI is not a valid host name (an IP address, `host:port`, a
    /// NUL…), when the client sent such a name; nil for a valid one or none.
    public var sniIssue: Optional<String>
    /// The negotiated application protocol (`h2`, `http/1.1`).
    public var alpn: Optional<String>
    /// SHA-256 of the peer's leaf certificate (DER), hex.
    public var peerCertificateSHA256: Optional<String>
    /// The subject of the client certificate, when one was presented.
    public var clientCertificateSubject: Optional<String>

    public init(version: String? = nil, cipher: String? = nil, sni: String? = nil, alpn: String? = nil,
                peerCertificateSHA256: String? = nil, clientCertificateSubject: String? = nil,
                sniIssue: String? = nil) {
        self.version = version
        self.sniIssue = sniIssue
        self.cipher = cipher
        self.sni = sni
        self.alpn = alpn
        self.peerCertificateSHA256 = peerCertificateSHA256
        self.clientCertificateSubject = clientCertificateSubject
    }
}
