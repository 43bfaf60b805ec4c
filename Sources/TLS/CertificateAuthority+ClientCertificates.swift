internal import COpenSSL

/// Client certificates for tests of gateways that issue certificate
/// challenges (AUTH_FLOW.md, "Client certificates").
extension CertificateAuthority {
    /// Accepted validity of a client certificate, in days (capped in any
    /// case at the CA certificate's own end).
    public static let clientValidityRange = 1...3650

    /// Issues a client certificate: a fresh P-256 key, subject
    /// CN=`commonName`, clientAuth, signed by the CA; the CA certificate is
    /// its chain. Returns the identity and the same as PKCS#12 bytes
    /// protected by `password` (see `PKCS12.export`), with `commonName` as
    /// friendly name.
    /// Blocks on key generation: never call on a loop queue.
    public func issueClient(commonName: String, validityDays: Int = 365, password: String) throws
        -> (identity: TLSIdentity, pkcs12: [UInt8])
    {
        guard !commonName.isEmpty, commonName.utf8.count <= 64 else {
            throw CertificateError.invalidName(commonName, reason: "a common name has 1 to 64 characters")
        }
        guard Self.clientValidityRange.contains(validityDays) else {
            throw CertificateError.invalidValidity(days: validityDays, allowed: Self.clientValidityRange)
        }
        let builder = X509Builder(
            subject: [("CN", commonName)],
            extensions: [
                (NID_basic_constraints, "critical,CA:FALSE"),
                (NID_key_usage, "critical,digitalSignature"),
                (NID_ext_key_usage, "clientAuth"),
                (NID_subject_key_identifier, "hash"),
                (NID_authority_key_identifier, "keyid:always"),
            ],
            validityDays: validityDays)
        let key = try X509Codec.generateP256Key()
        let certificate: OpaquePointer
        do {
            certificate = try builder.sign(publicKey: key, issuer: authority.certificate.pointer, issuerKey: authority.privateKey.pointer)
        } catch {
            EVP_PKEY_free(key)
            throw error
        }
        X509_up_ref(authority.certificate.pointer)
        let identity = TLSIdentity(certificate: certificate, chain: [authority.certificate.pointer], key: key)
        let pkcs12 = try PKCS12.export(identity: identity, password: password, friendlyName: commonName)
        return (identity, pkcs12)
    }
}
