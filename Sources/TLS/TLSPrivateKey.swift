internal import COpenSSL

/// A private key: owns one reference to an OpenSSL `EVP_PKEY`.
///
/// `@unchecked Sendable`: the key is never mutated after construction and
/// OpenSSL allows concurrent signing with one `EVP_PKEY`, so one instance may
/// be shared between contexts (the forward proxy signs every leaf with one key).
public final class TLSPrivateKey: @unchecked Sendable {
    /// The `EVP_PKEY *`. Owned: freed in `deinit`. Borrowers that keep it must `EVP_PKEY_up_ref`.
    let pointer: OpaquePointer

    /// Takes ownership of one reference to `key` (the caller must not free it).
    init(taking key: OpaquePointer) {
        pointer = key
    }

    deinit {
        EVP_PKEY_free(pointer)
    }

    /// Parses an unencrypted PEM private key (PKCS#8 "PRIVATE KEY", "EC PRIVATE KEY" or
    /// "RSA PRIVATE KEY"). An encrypted key is refused rather than prompting for a passphrase.
    public convenience init(pem: [UInt8]) throws(TLSError) {
        let parsed = pem.withUnsafeBytes { buffer in
            OpenSSLErrorQueue.run { () -> OpaquePointer? in
                guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
                defer { BIO_free(bio) }
                // A passphrase callback that supplies none: never prompt on a terminal.
                return PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in -1 }, nil)
            }
        }
        guard let key = parsed.result else {
            throw TLSError(kind: .invalidIdentity,
                           explanation: "no usable PEM private key found (encrypted keys are not supported)",
                           openSSLReason: OpenSSLErrorQueue.summary(parsed.errors))
        }
        self.init(taking: key)
    }
}
