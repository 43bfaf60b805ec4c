internal import COpenSSL

/// PKCS#12 (`.p12`, `.pfx`) files: the form in which a client certificate
/// and its key travel to a phone, a browser or `curl --cert file.p12:password`.
///
/// Export uses what OpenSSL 3, curl and current mobile platforms read:
/// AES-256-CBC with PBKDF2 for both the key and the certificates, and an
/// HMAC-SHA-256 integrity MAC, 2048 iterations each.
public enum PKCS12 {
    /// Encodes `identity` (certificate, chain and key) as PKCS#12 DER,
    /// encrypted with `password`. `friendlyName` is the label a keychain shows.
    public static func export(identity: TLSIdentity, password: String, friendlyName: String? = nil) throws -> [UInt8] {
        CertificateError.clearOpenSSLErrors()
        var chain: OpaquePointer?
        if !identity.chain.isEmpty {
            guard let stack = OPENSSL_sk_new_null() else {
                throw CertificateError.openSSLFailure("allocate a certificate stack")
            }
            chain = stack
            for certificate in identity.chain where OPENSSL_sk_push(stack, UnsafeRawPointer(certificate.pointer)) == 0 {
                OPENSSL_sk_free(stack)
                throw CertificateError.openSSLFailure("build the PKCS#12 chain")
            }
        }
        // The stack only borrows the certificates; freeing it leaves them to `identity`.
        defer { if let chain { OPENSSL_sk_free(chain) } }
        guard let archive = PKCS12_create(password, friendlyName, identity.privateKey.pointer, identity.certificate.pointer, chain,
                                          NID_aes_256_cbc, NID_aes_256_cbc,
                                          PKCS12_DEFAULT_ITER, PKCS12_DEFAULT_ITER, 0)
        else {
            throw CertificateError.openSSLFailure("create a PKCS#12 structure")
        }
        defer { PKCS12_free(archive) }
        return try X509Codec.collectBIO("encode PKCS#12") { i2d_PKCS12_bio($0, archive) == 1 }
    }

    /// Reads the identity in PKCS#12 `bytes`. `source` names the bytes in
    /// errors. Throws `.notPKCS12` for bytes that are not PKCS#12,
    /// `.wrongPassword` when the integrity MAC does not verify with
    /// `password`, and `.unusablePKCS12` when the contents cannot be
    /// decrypted or hold no certificate with its key.
    public static func importIdentity(_ bytes: [UInt8], password: String,
                                      source: String = "PKCS#12 data") throws -> TLSIdentity {
        try X509Codec.withReadBIO(bytes) { bio in
            guard let archive = d2i_PKCS12_bio(bio, nil) else {
                throw CertificateError.notPKCS12(source: source, reason: CertificateError.drainOpenSSLReason())
            }
            defer { PKCS12_free(archive) }
            if PKCS12_mac_present(archive) == 1 && !macVerifies(archive, password: password) {
                CertificateError.clearOpenSSLErrors()
                throw CertificateError.wrongPassword(source: source)
            }
            CertificateError.clearOpenSSLErrors()
            var key: OpaquePointer?
            var certificate: OpaquePointer?
            var stack: OpaquePointer?
            guard PKCS12_parse(archive, password, &key, &certificate, &stack) == 1 else {
                var reason = CertificateError.drainOpenSSLReason()
                if reason.contains("unsupported") {
                    reason += "; legacy RC2/3DES files need re-exporting with AES, e.g. with openssl pkcs12 -legacy"
                }
                throw CertificateError.unusablePKCS12(source: source, reason: reason)
            }
            var chain: [OpaquePointer] = []
            if let stack {
                for index in 0..<OPENSSL_sk_num(stack) {
                    if let element = OPENSSL_sk_value(stack, index) { chain.append(OpaquePointer(element)) }
                }
                OPENSSL_sk_free(stack)
            }
            guard let key, let certificate else {
                chain.forEach { X509_free($0) }
                if let key { EVP_PKEY_free(key) }
                if let certificate { X509_free(certificate) }
                throw CertificateError.unusablePKCS12(source: source, reason: "no certificate with its private key")
            }
            return TLSIdentity(certificate: certificate, chain: chain, key: key)
        }
    }

    /// Reads the identity in a PKCS#12 file; errors name `file`.
    /// Blocks on disk I/O: never call on a loop queue.
    public static func importIdentity(file: String, password: String) throws -> TLSIdentity {
        try importIdentity(CertificateFiles.read(file), password: password, source: file)
    }

    /// Writes PKCS#12 bytes to a new file with mode 0600 (it holds a private
    /// key); refuses to overwrite an existing file (`.alreadyExists`).
    /// Blocks on disk I/O: never call on a loop queue.
    public static func write(_ bytes: [UInt8], toFile path: String) throws {
        try CertificateFiles.writeNew(path, bytes, mode: 0o600)
    }

    /// Whether the integrity MAC verifies. An empty password is tried both
    /// as empty and as absent, as OpenSSL's own tools do.
    private static func macVerifies(_ archive: OpaquePointer, password: String) -> Bool {
        if password.isEmpty {
            return PKCS12_verify_mac(archive, nil, 0) == 1 || PKCS12_verify_mac(archive, "", 0) == 1
        }
        return PKCS12_verify_mac(archive, password, Int32(password.utf8.count)) == 1
    }
}
