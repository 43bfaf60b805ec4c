internal import COpenSSL
import Foundation

/// Read-only views of an identity's certificate beyond the core shape:
/// what `intact ca show` and client-certificate diagnoses print.
extension TLSIdentity {
    /// The certificate's issuer on one line, RFC 2253 form.
    public var issuer: String {
        X509Codec.line(name: X509_get_issuer_name(certificate.pointer))
    }

    /// Start of the certificate's validity (UTC).
    public var notBefore: Date {
        // A certificate OpenSSL parsed has well-formed times.
        X509Codec.date(X509_get0_notBefore(certificate.pointer)) ?? .distantPast
    }

    /// End of the certificate's validity (UTC).
    public var notAfter: Date {
        X509Codec.date(X509_get0_notAfter(certificate.pointer)) ?? .distantPast
    }

    /// The chain certificates in PEM form, leaf side first.
    public var chainPEM: [String] {
        chain.map { String(decoding: (try? X509Codec.pem(certificate: $0.pointer)) ?? [], as: UTF8.self) }
    }
}
