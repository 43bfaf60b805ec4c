internal import COpenSSL

/// A certificate, its optional chain of intermediates, and the private key
/// that belongs to the certificate: what a TLS endpoint presents.
///
/// Owns one reference to each OpenSSL handle and frees them in `deinit`.
/// `@unchecked Sendable`: the handles are never mutated after `init` and
/// OpenSSL 3 allows concurrent read-only use of `X509` and `EVP_PKEY`
/// (several `SSL_CTX`s on several loops may present one identity).
public final class TLSIdentity: @unchecked Sendable {
    /// The end-entity certificate (`X509 *`), owned.
    let certificate: OpaquePointer
    /// Intermediate certificates (`X509 *`), leaf side first, owned.
    let chain: [OpaquePointer]
    /// The certificate's private key (`EVP_PKEY *`), owned.
    let privateKey: OpaquePointer

    /// Parses PEM bytes. The first certificate in `certificatePEM` is the
    /// end-entity certificate; any further certificates in it (a
    /// "fullchain" file), then those in `chainPEM`, form the chain.
    /// Throws `CertificateError` when a PEM block is missing or corrupt or
    /// when the key does not belong to the certificate.
    public convenience init(certificatePEM: [UInt8], chainPEM: [UInt8]?, privateKeyPEM: [UInt8]) throws {
        let parts = try Self.parse(certificatePEM: certificatePEM, certificateSource: "certificate PEM",
                                   chainPEM: chainPEM, chainSource: "chain PEM",
                                   privateKeyPEM: privateKeyPEM, keySource: "private key PEM")
        self.init(certificate: parts.certificate, chain: parts.chain, key: parts.key)
    }

    /// Reads a PEM certificate file (optionally followed by its chain) and a
    /// PEM key file. The key file must not be accessible by group or
    /// others. Blocks on disk I/O: never call on a loop queue.
    public convenience init(certificateFile: String, keyFile: String) throws {
        let certificatePEM = try CertificateFiles.read(certificateFile)
        let keyPEM = try CertificateFiles.readPrivate(keyFile)
        let parts = try Self.parse(certificatePEM: certificatePEM, certificateSource: certificateFile,
                                   chainPEM: nil, chainSource: certificateFile,
                                   privateKeyPEM: keyPEM, keySource: keyFile)
        self.init(certificate: parts.certificate, chain: parts.chain, key: parts.key)
    }

    /// Takes ownership of one reference to each handle (the caller must not
    /// free them). The caller guarantees the key belongs to the certificate.
    init(certificate: OpaquePointer, chain: [OpaquePointer], key: OpaquePointer) {
        self.certificate = certificate
        self.chain = chain
        self.privateKey = key
    }

    deinit {
        X509_free(certificate)
        chain.forEach { X509_free($0) }
        EVP_PKEY_free(privateKey)
    }

    /// The certificate's subject on one line, RFC 2253 form ("CN=example.com").
    public var subject: String {
        X509Codec.line(name: X509_get_subject_name(certificate))
    }

    /// SHA-256 of the certificate's DER encoding, lowercase hex without colons.
    public var sha256Fingerprint: String {
        X509Codec.sha256Fingerprint(certificate: certificate)
    }

    /// The end-entity certificate in PEM form.
    public var certificatePEM: String {
        // Encoding a parsed certificate into a memory BIO fails only when allocation fails.
        String(decoding: (try? X509Codec.pem(certificate: certificate)) ?? [], as: UTF8.self)
    }

    /// Parses and cross-checks the three PEM inputs; on any error frees
    /// what it parsed. Returned handles are owned by the caller.
    private static func parse(certificatePEM: [UInt8], certificateSource: String,
                              chainPEM: [UInt8]?, chainSource: String,
                              privateKeyPEM: [UInt8], keySource: String)
        throws -> (certificate: OpaquePointer, chain: [OpaquePointer], key: OpaquePointer)
    {
        var certificates = try X509Codec.certificates(pem: certificatePEM, source: certificateSource)
        do {
            if let chainPEM {
                certificates += try X509Codec.certificates(pem: chainPEM, source: chainSource)
            }
            let key = try X509Codec.privateKey(pem: privateKeyPEM, source: keySource)
            CertificateError.clearOpenSSLErrors()
            guard X509_check_private_key(certificates[0], key) == 1 else {
                CertificateError.clearOpenSSLErrors()
                EVP_PKEY_free(key)
                throw CertificateError.keyMismatch(certificate: certificateSource, key: keySource)
            }
            return (certificates[0], Array(certificates.dropFirst()), key)
        } catch {
            certificates.forEach { X509_free($0) }
            throw error
        }
    }
}
