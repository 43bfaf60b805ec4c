import Foundation
import IntactTestSupport
import XCTest
@testable import TLS

final class PKCS12Tests: XCTestCase {
    private var directory = ""
    private var authority: CertificateAuthority!

    override func setUpWithError() throws {
        directory = makeTemporaryDirectory()
        authority = try CertificateAuthority.create(in: directory)
    }

    func testClientCertificateRoundTripsThroughPKCS12() throws {
        let issued = try authority.issueClient(commonName: "alice", validityDays: 30, password: "s3cret")
        XCTAssertEqual(issued.identity.subject, "CN=alice")
        XCTAssertEqual(issued.identity.issuer, authority.subject)
        let days = issued.identity.notAfter.timeIntervalSince(issued.identity.notBefore) / 86_400
        XCTAssertEqual(days, 30, accuracy: 0.01)

        let imported = try PKCS12.importIdentity(issued.pkcs12, password: "s3cret")
        XCTAssertEqual(imported.sha256Fingerprint, issued.identity.sha256Fingerprint)
        XCTAssertEqual(imported.subject, "CN=alice")
        XCTAssertEqual(imported.chainPEM, [authority.certificatePEM])
    }

    func testClientCertificateVerifiesForClientAuthentication() throws {
        let issued = try authority.issueClient(commonName: "bob", password: "pw")
        let file = directory + "/bob.pem"
        try issued.identity.certificatePEM.write(toFile: file, atomically: false, encoding: .utf8)
        let verify = try runOpenSSL(["verify", "-CAfile", authority.certificatePath, "-purpose", "sslclient", file])
        XCTAssertEqual(verify.output, "\(file): OK\n")
        let text = try runOpenSSL(["x509", "-in", file, "-noout", "-text"])
        XCTAssertTrue(text.output.contains("TLS Web Client Authentication"), text.output)
        XCTAssertFalse(text.output.contains("TLS Web Server Authentication"), text.output)
    }

    func testOpenSSLReadsTheExportedFileWithModernAlgorithms() throws {
        let issued = try authority.issueClient(commonName: "carol", password: "pass phrase")
        let file = directory + "/carol.p12"
        try Data(issued.pkcs12).write(to: URL(fileURLWithPath: file))

        let certificates = try runOpenSSL(["pkcs12", "-in", file, "-passin", "pass:pass phrase", "-nokeys"])
        XCTAssertEqual(certificates.status, 0, certificates.output)
        XCTAssertTrue(certificates.output.contains("subject=CN = carol"), certificates.output)
        XCTAssertTrue(certificates.output.contains("friendlyName: carol"), certificates.output)
        XCTAssertTrue(certificates.output.contains("BEGIN CERTIFICATE"), certificates.output)

        let info = try runOpenSSL(["pkcs12", "-in", file, "-passin", "pass:pass phrase", "-info", "-noout"])
        XCTAssertEqual(info.status, 0, info.output)
        XCTAssertTrue(info.output.contains("MAC: sha256"), info.output)
        XCTAssertTrue(info.output.contains("PBES2, PBKDF2, AES-256-CBC"), info.output)
        XCTAssertFalse(info.output.contains("RC2"), info.output)

        let wrong = try runOpenSSL(["pkcs12", "-in", file, "-passin", "pass:nope", "-nokeys"])
        XCTAssertNotEqual(wrong.status, 0)
    }

    func testImportReadsAFileMadeByOpenSSL() throws {
        let leaf = try authority.leaf(for: "server.example")
        let certificateFile = directory + "/server.pem"
        try leaf.certificatePEM.write(toFile: certificateFile, atomically: false, encoding: .utf8)
        let file = directory + "/server.p12"
        let export = try runOpenSSL(["pkcs12", "-export", "-in", certificateFile, "-inkey", authority.leafKeyPath,
                                     "-out", file, "-passout", "pass:x"])
        XCTAssertEqual(export.status, 0, export.output)
        let imported = try PKCS12.importIdentity(file: file, password: "x")
        XCTAssertEqual(imported.sha256Fingerprint, leaf.sha256Fingerprint)
        XCTAssertTrue(imported.chainPEM.isEmpty)
    }

    func testWrongPasswordAndCorruptDataAreNamedErrors() throws {
        let issued = try authority.issueClient(commonName: "dave", password: "right")
        let file = directory + "/dave.p12"
        try Data(issued.pkcs12).write(to: URL(fileURLWithPath: file))

        XCTAssertThrowsError(try PKCS12.importIdentity(file: file, password: "wrong")) { error in
            XCTAssertEqual(error as? CertificateError, .wrongPassword(source: file))
            XCTAssertEqual("\(error)", "\(file): wrong password (the PKCS#12 integrity check failed)")
        }
        XCTAssertThrowsError(try PKCS12.importIdentity(issued.pkcs12, password: "")) { error in
            XCTAssertEqual(error as? CertificateError, .wrongPassword(source: "PKCS#12 data"))
        }
        XCTAssertThrowsError(try PKCS12.importIdentity(Array("not pkcs12".utf8), password: "right")) { error in
            guard case .notPKCS12(source: "PKCS#12 data", reason: _)? = error as? CertificateError else {
                return XCTFail("\(error)")
            }
        }
        XCTAssertThrowsError(try PKCS12.importIdentity([], password: "right")) { error in
            guard case .notPKCS12? = error as? CertificateError else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try PKCS12.importIdentity(Array(issued.pkcs12.prefix(100)), password: "right")) { error in
            guard case .notPKCS12? = error as? CertificateError else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try PKCS12.importIdentity(file: directory + "/absent.p12", password: "right")) { error in
            XCTAssertEqual("\(error)", "cannot read \(directory)/absent.p12: No such file or directory")
        }
    }

    func testEmptyPasswordRoundTrips() throws {
        let leaf = try authority.leaf(for: "empty.example")
        let bytes = try PKCS12.export(identity: leaf, password: "")
        XCTAssertEqual(try PKCS12.importIdentity(bytes, password: "").sha256Fingerprint, leaf.sha256Fingerprint)
        XCTAssertThrowsError(try PKCS12.importIdentity(bytes, password: "x")) { error in
            XCTAssertEqual(error as? CertificateError, .wrongPassword(source: "PKCS#12 data"))
        }
    }

    func testClientCertificateInputsAreValidated() {
        XCTAssertThrowsError(try authority.issueClient(commonName: "eve", validityDays: 0, password: "p")) { error in
            XCTAssertEqual(error as? CertificateError, .invalidValidity(days: 0, allowed: 1...3650))
        }
        XCTAssertThrowsError(try authority.issueClient(commonName: "", password: "p")) { error in
            guard case .invalidName? = error as? CertificateError else { return XCTFail("\(error)") }
        }
    }
}
