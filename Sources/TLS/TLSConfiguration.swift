/// Which side of the handshake a context or engine plays.
public enum TLSRole: String, Sendable, Hashable, Codable {
    case server
    case client
}

/// The certificates a peer's chain must lead to.
public enum TLSTrustRoots: Sendable, Hashable {
    /// The operating system's store (`SSL_CTX_set_default_verify_paths`).
    case systemStore
    /// Every certificate in a PEM file. Read when the context is created.
    case caFile(String)
    /// Every certificate in PEM text (for example the development CA held in memory).
    case caPEM([UInt8])
    /// The system's store and every certificate in a PEM file besides (a
    /// TLS-inspecting proxy's CA added to the public roots).
    case systemStoreAndCAFile(String)
}

/// How a client checks the server's certificate.
public enum TLSServerVerification: Sendable, Hashable {
    /// The chain must lead to `roots`, and the certificate must name the host the
    /// engine was created for (DNS name or IP address).
    case verify(TLSTrustRoots)
    /// No check at all. The outcome is still recorded in `TLSConnectionInfo.verifyResult`.
    case insecureNoVerification
}

/// Whether a server asks for a client certificate.
public enum TLSClientCertificatePolicy: Sendable, Hashable {
    /// Never ask.
    case none
    /// Ask; a client may decline, but a certificate it does present must lead to `trustedBy`.
    case request(trustedBy: TLSTrustRoots)
    /// Ask and fail the handshake without a certificate that leads to `trustedBy`.
    /// TLS 1.3 clients then receive "certificate required", TLS 1.2 clients "handshake failure".
    case require(trustedBy: TLSTrustRoots)
}

/// What a server does when the client offers ALPN protocols and none is in its preference list.
public enum TLSALPNMismatchPolicy: Sendable, Hashable {
    /// Complete the handshake without ALPN: the connection speaks HTTP/1.1.
    /// The client's offer stays visible in `TLSConnectionInfo.offeredALPN`.
    case proceedWithoutALPN
    /// Abort with the "no application protocol" alert (RFC 7301 §3.2).
    case fail
}

/// Settings of a server context.
public struct TLSServerConfiguration: Sendable {
    /// Presented when there is no `certificateProvider` or it returns `nil`.
    public var identity: TLSIdentity?
    /// Called synchronously during each handshake with the SNI the client sent
    /// (`nil` without SNI); the identity it returns is presented on that connection.
    /// Runs on the engine's caller's thread, inside `TLSEngine.handshake()`.
    public var certificateProvider: (@Sendable (_ serverName: String?) -> TLSIdentity?)?
    public var minimumVersion: TLSVersion = .tls1_2
    /// `nil`: the newest version OpenSSL speaks.
    public var maximumVersion: TLSVersion?
    /// ALPN protocols in the server's order of preference, e.g. `["h2", "http/1.1"]`.
    /// Empty: never select one, whatever the client offers.
    public var alpnPreference: [String] = []
    public var alpnMismatch: TLSALPNMismatchPolicy = .proceedWithoutALPN
    public var clientCertificate: TLSClientCertificatePolicy = .none
    public var keyLog: TLSKeyLogSetting = .environment
    /// Sessions the server cache holds for resumption (TLS 1.2 session IDs; TLS 1.3 tickets are stateless).
    public var sessionCacheSize: Int = 20_000
    /// How long a session may be resumed.
    public var sessionLifetimeSeconds: Int = 300

    public init(identity: TLSIdentity? = nil,
                certificateProvider: (@Sendable (_ serverName: String?) -> TLSIdentity?)? = nil) {
        self.identity = identity
        self.certificateProvider = certificateProvider
    }
}

/// Settings of a client context.
public struct TLSClientConfiguration: Sendable {
    public var verification: TLSServerVerification
    /// Presented when the server asks for a client certificate.
    public var identity: TLSIdentity?
    /// ALPN protocols offered, in order, e.g. `["h2", "http/1.1"]`. Empty: no ALPN extension.
    public var alpnOffer: [String] = []
    public var minimumVersion: TLSVersion = .tls1_2
    /// `nil`: the newest version OpenSSL speaks.
    public var maximumVersion: TLSVersion?
    public var keyLog: TLSKeyLogSetting = .environment

    public init(verification: TLSServerVerification = .verify(.systemStore), identity: TLSIdentity? = nil) {
        self.verification = verification
        self.identity = identity
    }
}
