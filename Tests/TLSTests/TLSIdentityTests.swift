import Hashing
import TLS
import XCTest

/// Loading certificates, chains and keys.
final class TLSIdentityTests: XCTestCase {
    func testLoadsFromFilesAndFromPEM() throws {
        let certificates = try certificates()
        let fromFiles = try certificates.serverIdentity
        let fromPEM = try TLSIdentity(certificatePEM: certificates.bytes("server.pem"),
                                      chainPEM: certificates.bytes("ca.pem"),
                                      privateKeyPEM: certificates.bytes("server.key"))
        XCTAssertEqual(fromFiles.certificate.sha256Fingerprint, fromPEM.certificate.sha256Fingerprint)
        XCTAssertEqual(fromFiles.chain.count, 0)
        XCTAssertEqual(fromPEM.chain.map(\.subject), ["CN=Intact Test CA"])
        XCTAssertEqual(fromPEM.certificate.issuer, "CN=Intact Test CA")
    }

    func testCertificateFileWithChainFollowingTheLeaf() throws {
        let certificates = try certificates()
        let bundle = try certificates.bytes("server.pem") + certificates.bytes("ca.pem")
        let identity = try TLSIdentity(certificatePEM: bundle, chainPEM: nil, privateKeyPEM: certificates.bytes("server.key"))
        XCTAssertEqual(identity.certificate.subject, "CN=example.test")
        XCTAssertEqual(identity.chain.map(\.subject), ["CN=Intact Test CA"])
    }

    func testKeyOfAnotherCertificateIsRefused() throws {
        let certificates = try certificates()
        XCTAssertThrowsError(try TLSIdentity(certificateFile: certificates.serverCertificateFile,
                                             keyFile: certificates.clientKeyFile)) { error in
            XCTAssertEqual((error as? TLSError)?.kind, .invalidIdentity)
            XCTAssertTrue("\(error)".contains("does not belong to certificate CN=example.test"), "\(error)")
        }
    }

    func testDamagedPEMIsRefused() throws {
        let damaged = Array("-----BEGIN CERTIFICATE-----\nnot base64 at all!\n-----END CERTIFICATE-----\n".utf8)
        XCTAssertThrowsError(try TLSCertificate(pem: damaged)) { error in
            XCTAssertEqual((error as? TLSError)?.kind, .invalidIdentity)
        }
        XCTAssertThrowsError(try TLSPrivateKey(pem: Array("hello".utf8)))
        XCTAssertEqual(try TLSCertificate.certificates(pem: []).count, 0)
    }

    func testMissingFileIsNamed() {
        XCTAssertThrowsError(try TLSIdentity(certificateFile: "/nonexistent/cert.pem", keyFile: "/nonexistent/key.pem")) { error in
            XCTAssertTrue("\(error)".contains("/nonexistent/cert.pem"), "\(error)")
        }
    }

    func testDERAndFingerprintAgree() throws {
        let certificate = try certificates().serverIdentity.certificate
        let der = certificate.derBytes
        XCTAssertEqual(der.first, 0x30)  // a DER SEQUENCE
        XCTAssertEqual(certificate.sha256Fingerprint, Encoding.hex(SHA256.hash(der)))
    }
}
