import Foundation
import IntactTestSupport
import XCTest
@testable import TLS

/// A client certificate in one file, PEM or PKCS#12, and what each bad file is told.
final class IdentityFileTests: XCTestCase {
    private func write(_ bytes: [UInt8], _ name: String) -> String {
        let path = makeTemporaryDirectory(prefix: "intact-identity-file") + "/" + name
        FileManager.default.createFile(atPath: path, contents: Data(bytes))
        return path
    }

    private func message(_ file: String, password: String = "") -> String {
        do {
            _ = try IdentityFile.read(file, password: password)
            return "no error"
        } catch {
            return "\(error)"
        }
    }

    func testPEMWithCertificateAndKeyAndPKCS12AreRead() throws {
        let c = try certificates()
        let pem = write(try c.bytes("client.pem") + c.bytes("client.key"), "both.pem")
        let keyFirst = write(try c.bytes("client.key") + c.bytes("client.pem"), "key-first.pem")
        let expected = try c.clientIdentity.sha256Fingerprint
        XCTAssertEqual(try IdentityFile.read(pem, password: "").sha256Fingerprint, expected)
        XCTAssertEqual(try IdentityFile.read(keyFirst, password: "").sha256Fingerprint, expected)
        let p12 = write(try PKCS12.export(identity: c.clientIdentity, password: "secret"), "client.p12")
        XCTAssertEqual(try IdentityFile.read(p12, password: "secret").sha256Fingerprint, expected)
    }

    func testEachBadFileIsNamed() throws {
        let c = try certificates()
        let directory = makeTemporaryDirectory(prefix: "intact-identity-file")
        XCTAssertTrue(message(directory + "/missing.pem").contains("missing.pem"), message(directory + "/missing.pem"))
        XCTAssertTrue(message(directory + "/missing.pem").contains("No such file or directory"))
        // A directory cannot be read as a file (as root, a mode-0 file still can).
        XCTAssertTrue(message(directory).contains(directory), message(directory))
        let text = write(Array("just some text\n".utf8), "notes.txt")
        XCTAssertEqual(message(text), "\(text): neither PEM (a certificate and its private key) nor PKCS#12")
        let certificateOnly = write(try c.bytes("client.pem"), "certificate-only.pem")
        XCTAssertEqual(message(certificateOnly), "\(certificateOnly): not a PEM private key (no private key block beside the certificate)")
        let keyOnly = write(try c.bytes("client.key"), "key-only.pem")
        XCTAssertTrue(message(keyOnly).hasPrefix("\(keyOnly): not a PEM certificate"), message(keyOnly))
        let mismatched = write(try c.bytes("client.pem") + c.bytes("server.key"), "mismatched.pem")
        XCTAssertTrue(message(mismatched).contains("private key does not belong to certificate"), message(mismatched))
        let p12 = write(try PKCS12.export(identity: c.clientIdentity, password: "secret"), "client.p12")
        XCTAssertEqual(message(p12, password: "wrong"), "\(p12): wrong password (the PKCS#12 integrity check failed)")
    }
}
