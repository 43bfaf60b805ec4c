internal import COpenSSL
import Hashing

/// An X.509 certificate: owns one reference to an OpenSSL `X509`.
///
/// `@unchecked Sendable`: the certificate is never mutated after construction,
/// and OpenSSL's reference counting and read accessors are thread-safe, so one
/// instance may be shared between contexts and loops.
public final class TLSCertificate: @unchecked Sendable {
    /// The `X509 *`. Owned: freed in `deinit`. Borrowers that keep it must `X509_up_ref`.
    let pointer: OpaquePointer

    /// Takes ownership of one reference to `x509` (the caller must not free it).
    init(taking x509: OpaquePointer) {
        pointer = x509
    }

    deinit {
        X509_free(pointer)
    }

    /// Parses the first certificate in PEM text.
    public convenience init(pem: [UInt8]) throws(TLSError) {
        guard let first = try TLSCertificate.certificates(pem: pem).first else {
            throw TLSError(kind: .invalidIdentity, explanation: "no PEM certificate found")
        }
        // `first` frees its own reference when it goes; this instance takes a second one.
        X509_up_ref(first.pointer)
        self.init(taking: first.pointer)
    }

    /// Parses every certificate in PEM text, in order. An empty input gives an empty list;
    /// text that contains a damaged certificate block throws.
    public static func certificates(pem: [UInt8]) throws(TLSError) -> [TLSCertificate] {
        let outcome: (certificates: [TLSCertificate], errors: [OpenSSLErrorEntry]) = pem.withUnsafeBytes { buffer in
            var certificates: [TLSCertificate] = []
            let parsed = OpenSSLErrorQueue.run { () -> Bool in
                guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return false }
                defer { BIO_free(bio) }
                while let x509 = PEM_read_bio_X509(bio, nil, nil, nil) {
                    certificates.append(TLSCertificate(taking: x509))
                }
                return true
            }
            // Reading stops with "no start line" at the end of the text; anything else is damage.
            let damage = parsed.errors.filter { !($0.library == ERR_LIB_PEM && $0.reason == PEM_R_NO_START_LINE) }
            return (parsed.result ? certificates : [], damage)
        }
        guard outcome.errors.isEmpty else {
            throw TLSError(kind: .invalidIdentity, explanation: "PEM certificate text is damaged",
                           openSSLReason: OpenSSLErrorQueue.summary(outcome.errors))
        }
        return outcome.certificates
    }

    /// The DER encoding.
    public var derBytes: [UInt8] {
        let length = i2d_X509(pointer, nil)
        guard length > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: Int(length)) { buffer, count in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            count = Int(max(0, i2d_X509(pointer, &cursor)))
        }
    }

    /// The SHA-256 of the DER encoding, lowercase hex (64 characters).
    public var sha256Fingerprint: String {
        Encoding.hex(SHA256.hash(derBytes))
    }

    /// The subject distinguished name in RFC 2253 form, e.g. "CN=example.test,O=Intact".
    public var subject: String {
        Self.distinguishedName(X509_get_subject_name(pointer))
    }

    /// The issuer distinguished name in RFC 2253 form.
    public var issuer: String {
        Self.distinguishedName(X509_get_issuer_name(pointer))
    }

    /// The values recorded about a peer certificate.
    public var summary: TLSCertificateSummary {
        TLSCertificateSummary(subject: subject, issuer: issuer, sha256Fingerprint: sha256Fingerprint)
    }

    private static func distinguishedName(_ name: OpaquePointer?) -> String {
        guard let name, let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        guard X509_NAME_print_ex(bio, name, 0, intact_XN_FLAG_RFC2253_UTF8()) >= 0 else { return "" }
        return MemoryBIO.drainString(bio)
    }
}

/// What is recorded about a certificate seen on a connection.
public struct TLSCertificateSummary: Sendable, Hashable, Codable {
    /// RFC 2253 subject, e.g. "CN=example.test".
    public var subject: String
    /// RFC 2253 issuer.
    public var issuer: String
    /// SHA-256 of the DER certificate, lowercase hex.
    public var sha256Fingerprint: String

    public init(subject: String, issuer: String, sha256Fingerprint: String) {
        self.subject = subject
        self.issuer = issuer
        self.sha256Fingerprint = sha256Fingerprint
    }
}
