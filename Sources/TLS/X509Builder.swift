internal import COpenSSL
import Hashing

/// Describes an X.509 v3 certificate and signs it with ECDSA-SHA256 (or the
/// issuer key's matching signature).
///
/// Every certificate gets a random positive 128-bit serial number (126 bits
/// of entropy, well above the 64 the CA/Browser Forum asks for) and a
/// `notBefore` one hour in the past, so a client whose clock runs a little
/// slow still accepts a certificate minted a moment ago.
struct X509Builder {
    /// Subject attributes in order, e.g. `[("CN", "example.com")]`. May be
    /// empty only when a critical subjectAltName is among `extensions`.
    var subject: [(field: String, value: String)]
    /// Extensions in OpenSSL configuration syntax, in the order they are
    /// added (a subjectKeyIdentifier must precede an authorityKeyIdentifier
    /// on a self-signed certificate).
    var extensions: [(nid: Int32, value: String)]
    /// Days from `notBefore` to `notAfter`.
    var validityDays: Int

    /// How far before "now" `notBefore` is set.
    static let backdateSeconds = 3600

    /// Builds and signs the certificate for `publicKey` (an `EVP_PKEY`
    /// whose public half is certified). A `nil` issuer makes it
    /// self-signed; otherwise the issuer's subject becomes the issuer name
    /// and `notAfter` is capped at the issuer's `notAfter`, so no
    /// certificate outlives the CA that signed it.
    /// Returns an owned `X509 *`.
    func sign(publicKey: OpaquePointer, issuer: OpaquePointer?, issuerKey: OpaquePointer) throws -> OpaquePointer {
        CertificateError.clearOpenSSLErrors()
        guard let certificate = X509_new() else { throw CertificateError.openSSLFailure("allocate a certificate") }
        do {
            try build(certificate, publicKey: publicKey, issuer: issuer)
            CertificateError.clearOpenSSLErrors()
            guard X509_sign(certificate, issuerKey, EVP_sha256()) > 0 else {
                throw CertificateError.openSSLFailure("sign a certificate")
            }
            return certificate
        } catch {
            X509_free(certificate)
            throw error
        }
    }

    private func build(_ certificate: OpaquePointer, publicKey: OpaquePointer, issuer: OpaquePointer?) throws {
        guard X509_set_version(certificate, Int(X509_VERSION_3)) == 1 else {
            throw CertificateError.openSSLFailure("set the certificate version")
        }
        try setRandomSerial(certificate)
        try setNames(certificate, issuer: issuer)
        try setValidity(certificate, issuer: issuer)
        guard X509_set_pubkey(certificate, publicKey) == 1 else {
            throw CertificateError.openSSLFailure("set the certificate's public key")
        }
        try addExtensions(certificate, issuer: issuer ?? certificate)
    }

    private func setRandomSerial(_ certificate: OpaquePointer) throws {
        var serial = SecureRandom.bytes(16)
        // Positive (top bit clear) and full length (second bit set), so the DER form is always 16 bytes.
        serial[0] = serial[0] & 0x7f | 0x40
        guard let number = BN_bin2bn(serial, Int32(serial.count), nil) else {
            throw CertificateError.openSSLFailure("make a serial number")
        }
        defer { BN_free(number) }
        guard BN_to_ASN1_INTEGER(number, X509_get_serialNumber(certificate)) != nil else {
            throw CertificateError.openSSLFailure("set the serial number")
        }
    }

    private func setNames(_ certificate: OpaquePointer, issuer: OpaquePointer?) throws {
        guard let name = X509_NAME_new() else { throw CertificateError.openSSLFailure("allocate a name") }
        defer { X509_NAME_free(name) }
        for (field, value) in subject {
            let added = Array(value.utf8).withUnsafeBufferPointer { utf8 in
                X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8, utf8.baseAddress, Int32(utf8.count), -1, 0)
            }
            guard added == 1 else { throw CertificateError.openSSLFailure("set subject \(field)=\(value)") }
        }
        guard X509_set_subject_name(certificate, name) == 1,
              X509_set_issuer_name(certificate, issuer.map { X509_get_subject_name($0) } ?? name) == 1
        else {
            throw CertificateError.openSSLFailure("set the subject and issuer names")
        }
    }

    private func setValidity(_ certificate: OpaquePointer, issuer: OpaquePointer?) throws {
        let backdate = -Self.backdateSeconds
        guard X509_time_adj_ex(X509_getm_notBefore(certificate), 0, backdate, nil) != nil,
              X509_time_adj_ex(X509_getm_notAfter(certificate), Int32(validityDays), backdate, nil) != nil
        else {
            throw CertificateError.openSSLFailure("set the validity period")
        }
        if let issuer, let issuerEnd = X509_get0_notAfter(issuer),
           ASN1_TIME_compare(X509_get0_notAfter(certificate), issuerEnd) > 0 {
            guard X509_set1_notAfter(certificate, issuerEnd) == 1 else {
                throw CertificateError.openSSLFailure("cap the validity at the issuer's")
            }
        }
    }

    private func addExtensions(_ certificate: OpaquePointer, issuer: OpaquePointer) throws {
        var context = X509V3_CTX()
        X509V3_set_ctx(&context, issuer, certificate, nil, nil, 0)
        for (nid, value) in extensions {
            guard let extensionValue = X509V3_EXT_conf_nid(nil, &context, nid, value) else {
                throw CertificateError.openSSLFailure("make extension \(String(cString: OBJ_nid2sn(nid))) = \(value)")
            }
            defer { X509_EXTENSION_free(extensionValue) }
            guard X509_add_ext(certificate, extensionValue, -1) == 1 else {
                throw CertificateError.openSSLFailure("add extension \(String(cString: OBJ_nid2sn(nid)))")
            }
        }
    }
}
