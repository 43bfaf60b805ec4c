/// A client certificate given as one file in either form a user holds:
/// PEM (the certificate, optionally its chain, and its private key, as
/// `curl --cert` takes them in one file) or PKCS#12.
public enum IdentityFile {
    /// Reads the identity in `file`. PEM when the file holds a `-----BEGIN`
    /// line, else PKCS#12 opened with `password`. Throws
    /// `CertificateError.unreadable` for a missing or unreadable file,
    /// `.notPEMCertificate`/`.notPEMPrivateKey` for a PEM file without one of
    /// the two, `TLSError` (`invalidIdentity`) when its key belongs to another
    /// certificate, `.neitherPEMNorPKCS12` for anything else, and the
    /// PKCS#12 errors (`wrongPassword`, `unusablePKCS12`).
    /// Blocks on disk I/O: never call on a loop queue.
    public static func read(_ file: String, password: String) throws -> TLSIdentity {
        let bytes = try CertificateFiles.read(file)
        if isPEM(bytes) {
            let certificates: [TLSCertificate]
            do {
                certificates = try TLSCertificate.certificates(pem: bytes)
            } catch {
                throw CertificateError.notPEMCertificate(source: file, reason: "\(error)")
            }
            guard let leaf = certificates.first else {
                throw CertificateError.notPEMCertificate(source: file, reason: "no CERTIFICATE block")
            }
            let key: TLSPrivateKey
            do {
                key = try TLSPrivateKey(pem: bytes)
            } catch {
                throw CertificateError.notPEMPrivateKey(source: file, reason: "no private key block beside the certificate")
            }
            return try TLSIdentity(certificate: leaf, chain: Array(certificates.dropFirst()), privateKey: key)
        }
        do {
            return try PKCS12.importIdentity(bytes, password: password, source: file)
        } catch CertificateError.notPKCS12 {
            throw CertificateError.neitherPEMNorPKCS12(source: file)
        }
    }

    /// True when the text holds a PEM block's first line.
    static func isPEM(_ bytes: [UInt8]) -> Bool {
        let marker = Array("-----BEGIN ".utf8)
        guard bytes.count >= marker.count else { return false }
        return (0...(bytes.count - marker.count)).contains { bytes[$0..<$0 + marker.count].elementsEqual(marker) }
    }
}
