internal import COpenSSL
import Foundation
import Hashing

/// Conversions between PEM/DER bytes and OpenSSL's `X509` and `EVP_PKEY`
/// handles, plus the read-only views Intact prints (subject line,
/// fingerprint, validity dates).
///
/// Functions that return a handle return it retained: the caller owns it
/// and must free it (or hand it to an owner such as `TLSIdentity`).
/// Every function clears the OpenSSL error queue before its calls and drains
/// it into the error it throws.
enum X509Codec {
    // MARK: Memory BIOs

    /// Runs `body` with a read-only memory BIO over `bytes`.
    static func withReadBIO<T>(_ bytes: [UInt8], _ body: (OpaquePointer) throws -> T) throws -> T {
        // OpenSSL refuses a NULL buffer, which is what an empty array may give; an empty file must
        // still reach the parser and get its own error ("no start line").
        let storage = bytes.isEmpty ? [0] : bytes
        return try storage.withUnsafeBytes { buffer in
            CertificateError.clearOpenSSLErrors()
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(bytes.count)) else {
                throw CertificateError.openSSLFailure("allocate a memory BIO")
            }
            defer { BIO_free(bio) }
            return try body(bio)
        }
    }

    /// Runs `write` against a fresh memory BIO and returns what it wrote.
    /// `write` returns whether the OpenSSL call succeeded; `operation` names it for the error.
    static func collectBIO(_ operation: String, _ write: (OpaquePointer) -> Bool) throws -> [UInt8] {
        CertificateError.clearOpenSSLErrors()
        guard let bio = BIO_new(BIO_s_mem()) else {
            throw CertificateError.openSSLFailure("allocate a memory BIO")
        }
        defer { BIO_free(bio) }
        guard write(bio) else { throw CertificateError.openSSLFailure(operation) }
        let count = Int(BIO_ctrl_pending(bio))
        var out = [UInt8](repeating: 0, count: count)
        let read = out.withUnsafeMutableBytes { BIO_read(bio, $0.baseAddress, Int32(count)) }
        guard read == count else { throw CertificateError.openSSLFailure(operation) }
        return out
    }

    // MARK: Certificates

    /// Parses every PEM certificate in `pem`, in order (a leaf followed by
    /// its chain, as in a "fullchain" file). Throws `.notPEMCertificate`
    /// naming `source` when there is none or one is corrupt.
    static func certificates(pem: [UInt8], source: String) throws -> [OpaquePointer] {
        try withReadBIO(pem) { bio in
            var certificates: [OpaquePointer] = []
            while true {
                if let certificate = PEM_read_bio_X509(bio, nil, nil, nil) {
                    certificates.append(certificate)
                    continue
                }
                let last = ERR_peek_last_error()
                let endOfInput = ERR_GET_LIB(last) == ERR_LIB_PEM && ERR_GET_REASON(last) == PEM_R_NO_START_LINE
                if endOfInput && !certificates.isEmpty {
                    CertificateError.clearOpenSSLErrors()
                    return certificates
                }
                certificates.forEach { X509_free($0) }
                throw CertificateError.notPEMCertificate(source: source, reason: CertificateError.drainOpenSSLReason())
            }
        }
    }

    /// The PEM text of one certificate.
    static func pem(certificate: OpaquePointer) throws -> [UInt8] {
        try collectBIO("encode a certificate as PEM") { PEM_write_bio_X509($0, certificate) == 1 }
    }

    /// The DER encoding of one certificate.
    static func der(certificate: OpaquePointer) throws -> [UInt8] {
        try collectBIO("encode a certificate as DER") { i2d_X509_bio($0, certificate) == 1 }
    }

    // MARK: Private keys

    /// Parses a PEM private key (PKCS#8 or the traditional EC/RSA forms).
    /// An encrypted key is refused (decrypted with an empty passphrase, so
    /// OpenSSL never prompts on the terminal).
    static func privateKey(pem: [UInt8], source: String) throws -> OpaquePointer {
        try withReadBIO(pem) { bio in
            let key: OpaquePointer? = "".withCString { empty in
                PEM_read_bio_PrivateKey(bio, nil, nil, UnsafeMutableRawPointer(mutating: empty))
            }
            guard let key else {
                throw CertificateError.notPEMPrivateKey(source: source, reason: CertificateError.drainOpenSSLReason())
            }
            return key
        }
    }

    /// The unencrypted PKCS#8 PEM text of a private key.
    static func pem(privateKey: OpaquePointer) throws -> [UInt8] {
        try collectBIO("encode a private key as PEM") {
            PEM_write_bio_PrivateKey($0, privateKey, nil, nil, 0, nil, nil) == 1
        }
    }

    /// Generates a fresh ECDSA P-256 key. Blocks for the key generation
    /// (about a millisecond): never call on a loop queue.
    static func generateP256Key() throws -> OpaquePointer {
        CertificateError.clearOpenSSLErrors()
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else {
            throw CertificateError.openSSLFailure("create an EC key context")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1,
              EVP_PKEY_CTX_set_group_name(context, "P-256") == 1,
              EVP_PKEY_generate(context, &key) == 1,
              let key
        else {
            throw CertificateError.openSSLFailure("generate a P-256 key")
        }
        return key
    }

    // MARK: Read-only views

    /// The subject or issuer name on one line in RFC 2253 form
    /// ("CN=example.com,O=Intact"), UTF-8 kept as is rather than escaped.
    static func line(name: OpaquePointer) -> String {
        let bytes = try? collectBIO("print a name") {
            X509_NAME_print_ex($0, name, 0, intact_XN_FLAG_RFC2253_UTF8()) >= 0
        }
        return String(decoding: bytes ?? [], as: UTF8.self)
    }

    /// Lowercase hex SHA-256 of the certificate's DER encoding, no separators.
    static func sha256Fingerprint(certificate: OpaquePointer) -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = digest.withUnsafeMutableBufferPointer {
            X509_digest(certificate, EVP_sha256(), $0.baseAddress, &length)
        }
        precondition(ok == 1, "X509_digest with SHA-256 cannot fail on a parsed certificate")
        return Encoding.hex(digest.prefix(Int(length)))
    }

    /// An ASN.1 time as a `Date` (UTC). `nil` only for a malformed time.
    static func date(_ time: UnsafePointer<ASN1_TIME>) -> Date? {
        var parts = tm()
        guard ASN1_TIME_to_tm(time, &parts) == 1 else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(timegm(&parts)))
    }

    /// Whether the certificate carries basicConstraints `CA:TRUE`.
    static func isCertificateAuthority(_ certificate: OpaquePointer) -> Bool {
        X509_get_extension_flags(certificate) & UInt32(EXFLAG_CA) != 0
    }
}
