internal import COpenSSL
import Glibc

/// What one side of a TLS connection presents: a leaf certificate, the
/// intermediate chain to send after it, and the leaf's private key.
///
/// Invariant: the private key matches the leaf certificate (checked at
/// construction). `@unchecked Sendable`: the parts are immutable and each is
/// itself safe to share (see `TLSCertificate`, `TLSPrivateKey`).
public final class TLSIdentity: @unchecked Sendable {
    public let certificate: TLSCertificate
    /// Intermediates sent after the leaf, leaf-most first; usually not the root.
    public let chain: [TLSCertificate]
    public let privateKey: TLSPrivateKey

    /// Builds an identity from parts, checking that the key belongs to the certificate.
    public init(certificate: TLSCertificate, chain: [TLSCertificate], privateKey: TLSPrivateKey) throws(TLSError) {
        let check = OpenSSLErrorQueue.run { X509_check_private_key(certificate.pointer, privateKey.pointer) }
        guard check.result == 1 else {
            throw TLSError(kind: .invalidIdentity,
                           explanation: "private key does not belong to certificate \(certificate.subject)",
                           openSSLReason: OpenSSLErrorQueue.summary(check.errors))
        }
        self.certificate = certificate
        self.chain = chain
        self.privateKey = privateKey
    }

    /// Builds an identity from PEM text: the leaf (the first certificate of
    /// `certificatePEM`; any further certificates there join the chain), an
    /// optional separate chain, and the private key.
    public convenience init(certificatePEM: [UInt8], chainPEM: [UInt8]?, privateKeyPEM: [UInt8]) throws(TLSError) {
        var certificates = try TLSCertificate.certificates(pem: certificatePEM)
        guard !certificates.isEmpty else {
            throw TLSError(kind: .invalidIdentity, explanation: "no PEM certificate found")
        }
        let leaf = certificates.removeFirst()
        if let chainPEM {
            let chain = try TLSCertificate.certificates(pem: chainPEM)
            guard !chain.isEmpty || chainPEM.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) else {
                throw TLSError(kind: .invalidIdentity, explanation: "chain PEM holds no PEM certificate")
            }
            certificates += chain
        }
        try self.init(certificate: leaf, chain: certificates, privateKey: TLSPrivateKey(pem: privateKeyPEM))
    }

    /// Loads an identity from PEM files: `certificateFile` holds the leaf,
    /// optionally followed by its chain; `keyFile` the private key.
    /// Blocks on disk I/O: never call on a loop queue.
    public convenience init(certificateFile: String, keyFile: String) throws(TLSError) {
        try self.init(certificatePEM: readFile(certificateFile, what: "certificate file"), chainPEM: nil,
                      privateKeyPEM: readFile(keyFile, what: "private key file"))
    }

    /// Wraps OpenSSL objects, taking ownership of one reference to each
    /// (`certificate` is an `X509 *`, each of `chain` an `X509 *`, `key` an
    /// `EVP_PKEY *`): the caller must not free them. The caller guarantees
    /// that the key belongs to the certificate (the CA, which just signed it,
    /// or a PKCS#12 archive OpenSSL already matched).
    init(certificate: OpaquePointer, chain: [OpaquePointer], key: OpaquePointer) {
        self.certificate = TLSCertificate(taking: certificate)
        self.chain = chain.map { TLSCertificate(taking: $0) }
        self.privateKey = TLSPrivateKey(taking: key)
    }

    /// The leaf certificate's subject on one line, RFC 2253 form ("CN=example.test").
    public var subject: String { certificate.subject }

    /// SHA-256 of the leaf certificate's DER encoding, lowercase hex without colons.
    public var sha256Fingerprint: String { certificate.sha256Fingerprint }

    /// The leaf certificate in PEM form.
    public var certificatePEM: String {
        // Encoding a parsed certificate into a memory BIO fails only when allocation fails.
        String(decoding: (try? X509Codec.pem(certificate: certificate.pointer)) ?? [], as: UTF8.self)
    }
}

/// Reads a whole file; a failure is a `kind` error naming `what` and `path`. Blocks on disk I/O.
func readFile(_ path: String, what: String, kind: TLSError.Kind = .invalidIdentity) throws(TLSError) -> [UInt8] {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else {
        throw TLSError(kind: kind, explanation: "cannot open \(what) \(path): \(String(cString: strerror(errno)))")
    }
    defer { close(descriptor) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 16 * 1024)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count == 0 { return bytes }
        if count < 0 {
            if errno == EINTR { continue }
            throw TLSError(kind: kind, explanation: "cannot read \(what) \(path): \(String(cString: strerror(errno)))")
        }
        bytes += chunk[0..<count]
    }
}
