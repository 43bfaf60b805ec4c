internal import COpenSSL

/// A configured `SSL_CTX`, from which `TLSEngine`s are made: one per
/// listener or upstream destination, shared by all its connections.
///
/// Invariants: the `SSL_CTX` is configured only inside `init` and freed in
/// `deinit`; every engine keeps its context alive, so callbacks installed here
/// never outlive it. `@unchecked Sendable`: after `init` the context is only
/// read, and OpenSSL locks what it mutates internally (session cache,
/// reference counts), so engines on different loops may share it.
public final class TLSContext: @unchecked Sendable {
    /// Role-specific settings the callbacks consult during handshakes.
    enum Settings {
        case server(TLSServerConfiguration)
        case client(TLSClientConfiguration)
    }

    /// The `SSL_CTX *`, owned.
    let pointer: OpaquePointer
    let settings: Settings
    /// Where secrets go, when key logging is on.
    let keyLog: TLSKeyLogFile?

    public var role: TLSRole {
        switch settings {
        case .server: .server
        case .client: .client
        }
    }

    /// A server context. Needs an `identity`, a `certificateProvider`, or both.
    /// Blocks on disk I/O when trust roots or the key log name files: create contexts off the loop.
    public convenience init(server configuration: TLSServerConfiguration) throws(TLSError) {
        guard configuration.identity != nil || configuration.certificateProvider != nil else {
            throw TLSError(kind: .configuration, explanation: "a TLS server needs an identity or a certificate provider")
        }
        try self.init(settings: .server(configuration), method: TLS_server_method(),
                      versions: (configuration.minimumVersion, configuration.maximumVersion),
                      keyLog: configuration.keyLog)
        try configureServer(configuration)
    }

    /// A client context. Blocks on disk I/O when trust roots or the key log name files.
    public convenience init(client configuration: TLSClientConfiguration) throws(TLSError) {
        try self.init(settings: .client(configuration), method: TLS_client_method(),
                      versions: (configuration.minimumVersion, configuration.maximumVersion),
                      keyLog: configuration.keyLog)
        try configureClient(configuration)
    }

    private init(settings: Settings, method: OpaquePointer?,
                 versions: (minimum: TLSVersion, maximum: TLSVersion?),
                 keyLog: TLSKeyLogSetting) throws(TLSError) {
        let created = OpenSSLErrorQueue.run { SSL_CTX_new(method) }
        guard let pointer = created.result else {
            throw TLSError(kind: .configuration, explanation: "OpenSSL could not create a TLS context",
                           openSSLReason: OpenSSLErrorQueue.summary(created.errors))
        }
        self.pointer = pointer
        self.settings = settings
        if let path = keyLog.path {
            do {
                self.keyLog = try TLSKeyLogFile.shared(path: path)
            } catch {
                SSL_CTX_free(pointer)
                throw error
            }
        } else {
            self.keyLog = nil
        }
        try configureCommon(minimum: versions.minimum, maximum: versions.maximum)
    }

    deinit {
        SSL_CTX_free(pointer)
    }

    private func configureCommon(minimum: TLSVersion, maximum: TLSVersion?) throws(TLSError) {
        if let maximum, maximum.openSSLValue < minimum.openSSLValue {
            throw TLSError(kind: .configuration,
                           explanation: "maximum TLS version \(maximum.rawValue) is below the minimum \(minimum.rawValue)")
        }
        try check("set the TLS version range") {
            intact_SSL_CTX_set_min_proto_version(pointer, minimum.openSSLValue) == 1
                && intact_SSL_CTX_set_max_proto_version(pointer, maximum?.openSSLValue ?? 0) == 1
        }
        _ = OpenSSLErrorQueue.run {
            SSL_CTX_set_options(pointer, intact_SSL_OP_NO_RENEGOTIATION())
            // Give idle connections' record buffers back: most proxied connections idle.
            // A busy channel keeps its own for a while (`TLSEngine.keepRecordBuffers`,
            // Transport's `RecordBufferPolicy`).
            intact_SSL_CTX_set_mode(pointer, Int(SSL_MODE_RELEASE_BUFFERS))
        }
        installCommonCallbacks()
    }

    private func configureServer(_ configuration: TLSServerConfiguration) throws(TLSError) {
        if let identity = configuration.identity {
            try check("use the server certificate and key") { Self.use(identity, in: pointer) }
        }
        try check("enable the session cache") {
            intact_SSL_CTX_set_session_cache_mode(pointer, Int(SSL_SESS_CACHE_SERVER))
            intact_SSL_CTX_sess_set_cache_size(pointer, configuration.sessionCacheSize)
            SSL_CTX_set_timeout(pointer, configuration.sessionLifetimeSeconds)
            // Sessions must carry a context ID once client certificates are verified,
            // or OpenSSL refuses to resume them.
            let id = Array("intact".utf8)
            return SSL_CTX_set_session_id_context(pointer, id, UInt32(id.count)) == 1
        }
        switch configuration.clientCertificate {
        case .none:
            SSL_CTX_set_verify(pointer, SSL_VERIFY_NONE, nil)
        case .request(let roots):
            try trust(roots, announceToClients: true)
            SSL_CTX_set_verify(pointer, SSL_VERIFY_PEER, nil)
        case .require(let roots):
            try trust(roots, announceToClients: true)
            SSL_CTX_set_verify(pointer, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nil)
        }
        installServerCallbacks()
    }

    private func configureClient(_ configuration: TLSClientConfiguration) throws(TLSError) {
        switch configuration.verification {
        case .verify(let roots):
            try trust(roots, announceToClients: false)
            SSL_CTX_set_verify(pointer, SSL_VERIFY_PEER, nil)
        case .insecureNoVerification:
            SSL_CTX_set_verify(pointer, SSL_VERIFY_NONE, nil)
        }
        if let identity = configuration.identity {
            try check("use the client certificate and key") { Self.use(identity, in: pointer) }
        }
        if !configuration.alpnOffer.isEmpty {
            let wire = try ALPNWireFormat.encode(configuration.alpnOffer)
            // SSL_CTX_set_alpn_protos returns 0 on success.
            try check("set the ALPN offer") { SSL_CTX_set_alpn_protos(pointer, wire, UInt32(wire.count)) == 0 }
        }
        // Client sessions are not kept between connections: the upstream pool keeps connections instead.
        _ = OpenSSLErrorQueue.run { intact_SSL_CTX_set_session_cache_mode(pointer, Int(SSL_SESS_CACHE_OFF)) }
        installClientCallbacks(observeCertificateRequests: configuration.identity == nil)
    }

    /// Adds trust roots to the context's store; servers also name them in CertificateRequest.
    private func trust(_ roots: TLSTrustRoots, announceToClients: Bool) throws(TLSError) {
        let certificates: [TLSCertificate]
        switch roots {
        case .systemStore:
            try check("load the system trust store") { SSL_CTX_set_default_verify_paths(pointer) == 1 }
            return
        case .systemStoreAndCAFile(let path):
            try trust(.systemStore, announceToClients: announceToClients)
            return try trust(.caFile(path), announceToClients: announceToClients)
        case .caFile(let path):
            certificates = try TLSCertificate.certificates(pem: readFile(path, what: "CA file", kind: .configuration))
            guard !certificates.isEmpty else {
                throw TLSError(kind: .configuration, explanation: "CA file \(path) holds no PEM certificate")
            }
        case .caPEM(let pem):
            certificates = try TLSCertificate.certificates(pem: pem)
            guard !certificates.isEmpty else {
                throw TLSError(kind: .configuration, explanation: "CA PEM text holds no certificate")
            }
        }
        for certificate in certificates {
            try check("trust CA \(certificate.subject)") {
                X509_STORE_add_cert(SSL_CTX_get_cert_store(pointer), certificate.pointer) == 1
                    && (!announceToClients || SSL_CTX_add_client_CA(pointer, certificate.pointer) == 1)
            }
        }
    }

    /// Installs an identity on a context (`SSL_CTX`); see `TLSEngine.use(_:)` for one connection.
    private static func use(_ identity: TLSIdentity, in context: OpaquePointer) -> Bool {
        guard SSL_CTX_use_certificate(context, identity.certificate.pointer) == 1,
              SSL_CTX_use_PrivateKey(context, identity.privateKey.pointer) == 1 else { return false }
        return identity.chain.allSatisfy { intact_SSL_CTX_add1_chain_cert(context, $0.pointer) == 1 }
    }

    /// Runs a configuration step, turning failure into a `.configuration` error naming the step.
    private func check(_ step: String, _ body: () -> Bool) throws(TLSError) {
        let outcome = OpenSSLErrorQueue.run(body)
        guard outcome.result else {
            throw TLSError(kind: .configuration, explanation: "could not \(step)",
                           openSSLReason: OpenSSLErrorQueue.summary(outcome.errors))
        }
    }
}

/// ALPN protocol lists in their wire form: each name prefixed by its one-byte length (RFC 7301 §3.1).
enum ALPNWireFormat {
    static func encode(_ protocols: [String]) throws(TLSError) -> [UInt8] {
        var wire: [UInt8] = []
        for name in protocols {
            let bytes = Array(name.utf8)
            guard (1...255).contains(bytes.count) else {
                throw TLSError(kind: .configuration, explanation: "ALPN protocol name \"\(name)\" must be 1 to 255 bytes")
            }
            wire.append(UInt8(bytes.count))
            wire += bytes
        }
        return wire
    }

    /// Splits a wire-form list; `nil` when a length runs past the end or is zero.
    static func decode(_ wire: UnsafeBufferPointer<UInt8>) -> [(name: String, range: Range<Int>)]? {
        var entries: [(name: String, range: Range<Int>)] = []
        var index = 0
        while index < wire.count {
            let length = Int(wire[index])
            let range = (index + 1)..<(index + 1 + length)
            guard length > 0, range.upperBound <= wire.count else { return nil }
            entries.append((String(decoding: UnsafeBufferPointer(rebasing: wire[range]), as: UTF8.self), range))
            index = range.upperBound
        }
        return entries
    }
}
