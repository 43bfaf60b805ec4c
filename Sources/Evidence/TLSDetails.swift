/// What one leg's TLS session looked like, as the TLS layer reported it.
/// Every value is optional: a plain-TCP leg has no `TLSDetails` at all, and a
/// failed handshake may have learnt only some of them.
///
/// A value type whose seven strings sit in one shared object (`Values`,
/// copy-on-write): the details of a connection are copied into every leg of
/// every exchange on it (the flow's upstream link, the leg recorder, the
/// record), and a copy is then one retain, not one per string. Encoded
/// (`Codable`, the HAR's `_tls`) and compared as the seven values.
public struct TLSDetails: Codable, Hashable, Sendable {
    /// `TLSv1.2` or `TLSv1.3`.
    public var version: String? {
        get { values.version }
        set { unique().version = newValue }
    }
    /// The negotiated cipher suite, OpenSSL's name (`TLS_AES_128_GCM_SHA256`).
    public var cipher: String? {
        get { values.cipher }
        set { unique().cipher = newValue }
    }
    /// The server name the client asked for (SNI), as sent; bytes that are
    /// not visible ASCII written `\xHH`.
    public var sni: String? {
        get { values.sni }
        set { unique().sni = newValue }
    }
    /// Why that SNI is not a valid host name (an IP address, `host:port`, a
    /// NUL…), when the client sent such a name; nil for a valid one or none.
    public var sniIssue: String? {
        get { values.sniIssue }
        set { unique().sniIssue = newValue }
    }
    /// The negotiated application protocol (`h2`, `http/1.1`).
    public var alpn: String? {
        get { values.alpn }
        set { unique().alpn = newValue }
    }
    /// SHA-256 of the peer's leaf certificate (DER), hex.
    public var peerCertificateSHA256: String? {
        get { values.peerCertificateSHA256 }
        set { unique().peerCertificateSHA256 = newValue }
    }
    /// The subject of the client certificate, when one was presented.
    public var clientCertificateSubject: String? {
        get { values.clientCertificateSubject }
        set { unique().clientCertificateSubject = newValue }
    }

    /// The seven values. Invariant: a `Values` object is changed only
    /// through `unique()`, by the one `TLSDetails` that holds it (a shared
    /// one is copied first), so no object another copy or another thread
    /// can reach ever changes: hence `@unchecked Sendable`.
    private final class Values: @unchecked Sendable {
        var version, cipher, sni, sniIssue, alpn, peerCertificateSHA256, clientCertificateSubject: String?

        init(version: String?, cipher: String?, sni: String?, sniIssue: String?, alpn: String?,
             peerCertificateSHA256: String?, clientCertificateSubject: String?) {
            self.version = version
            self.cipher = cipher
            self.sni = sni
            self.sniIssue = sniIssue
            self.alpn = alpn
            self.peerCertificateSHA256 = peerCertificateSHA256
            self.clientCertificateSubject = clientCertificateSubject
        }

        func copy() -> Values {
            Values(version: version, cipher: cipher, sni: sni, sniIssue: sniIssue, alpn: alpn,
                   peerCertificateSHA256: peerCertificateSHA256, clientCertificateSubject: clientCertificateSubject)
        }
    }

    private var values: Values

    /// `values`, made this copy's own first when another copy shares it.
    private mutating func unique() -> Values {
        if !isKnownUniquelyReferenced(&values) { values = values.copy() }
        return values
    }

    public init(version: String? = nil, cipher: String? = nil, sni: String? = nil, alpn: String? = nil,
                peerCertificateSHA256: String? = nil, clientCertificateSubject: String? = nil,
                sniIssue: String? = nil) {
        values = Values(version: version, cipher: cipher, sni: sni, sniIssue: sniIssue, alpn: alpn,
                        peerCertificateSHA256: peerCertificateSHA256, clientCertificateSubject: clientCertificateSubject)
    }

    // MARK: Codable and Hashable, as the seven values

    private enum CodingKeys: String, CodingKey {
        case version, cipher, sni, sniIssue, alpn, peerCertificateSHA256, clientCertificateSubject
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(version: try container.decodeIfPresent(String.self, forKey: .version),
                  cipher: try container.decodeIfPresent(String.self, forKey: .cipher),
                  sni: try container.decodeIfPresent(String.self, forKey: .sni),
                  alpn: try container.decodeIfPresent(String.self, forKey: .alpn),
                  peerCertificateSHA256: try container.decodeIfPresent(String.self, forKey: .peerCertificateSHA256),
                  clientCertificateSubject: try container.decodeIfPresent(String.self, forKey: .clientCertificateSubject),
                  sniIssue: try container.decodeIfPresent(String.self, forKey: .sniIssue))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(version, forKey: .version)
        try container.encodeIfPresent(cipher, forKey: .cipher)
        try container.encodeIfPresent(sni, forKey: .sni)
        try container.encodeIfPresent(sniIssue, forKey: .sniIssue)
        try container.encodeIfPresent(alpn, forKey: .alpn)
        try container.encodeIfPresent(peerCertificateSHA256, forKey: .peerCertificateSHA256)
        try container.encodeIfPresent(clientCertificateSubject, forKey: .clientCertificateSubject)
    }

    public static func == (lhs: TLSDetails, rhs: TLSDetails) -> Bool {
        if lhs.values === rhs.values { return true }
        let (left, right) = (lhs.values, rhs.values)
        return left.version == right.version && left.cipher == right.cipher && left.sni == right.sni
            && left.sniIssue == right.sniIssue && left.alpn == right.alpn
            && left.peerCertificateSHA256 == right.peerCertificateSHA256
            && left.clientCertificateSubject == right.clientCertificateSubject
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(version)
        hasher.combine(cipher)
        hasher.combine(sni)
        hasher.combine(sniIssue)
        hasher.combine(alpn)
        hasher.combine(peerCertificateSHA256)
        hasher.combine(clientCertificateSubject)
    }
}
