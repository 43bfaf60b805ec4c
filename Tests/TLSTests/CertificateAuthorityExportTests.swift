import Foundation
import XCTest
import IntactTestSupport
@testable import TLS

/// Every export format, judged by OpenSSL (and Foundation's property list reader for the profile).
final class CertificateAuthorityExportTests: XCTestCase {
    private func authority() throws -> (CertificateAuthority, String) {
        let directory = makeTemporaryDirectory() + "/ca"
        return (try CertificateAuthority.create(in: directory), directory)
    }

    private func write(_ bytes: [UInt8], _ name: String) throws -> String {
        let path = makeTemporaryDirectory() + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    func testPEMIsTheCertificateFileAndDERIsItsEncoding() throws {
        let (ca, directory) = try authority()
        XCTAssertEqual(try ca.export(.pem), Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/ca-cert.pem"))))
        let der = try write(try ca.export(.der), "intact-ca.crt")
        let fingerprint = try ToolRun.openssl(["x509", "-inform", "DER", "-in", der, "-noout", "-fingerprint", "-sha256"])
        XCTAssertEqual(fingerprint.status, 0, fingerprint.error)
        let hex = fingerprint.output.split(separator: "=").last.map { $0.replacingOccurrences(of: ":", with: "") }
        XCTAssertEqual(hex?.trimmingCharacters(in: .whitespacesAndNewlines).lowercased(), ca.sha256Fingerprint)
        XCTAssertEqual(ca.exportFileName(.der), "intact-ca.crt")
    }

    func testAndroidSystemFileIsNamedByOpenSSLsOldSubjectHash() throws {
        let (ca, directory) = try authority()
        let hash = try ToolRun.openssl(["x509", "-in", directory + "/ca-cert.pem", "-noout", "-subject_hash_old"])
        XCTAssertEqual(hash.status, 0, hash.error)
        XCTAssertEqual(ca.subjectHashOld, hash.output.trimmingCharacters(in: .whitespacesAndNewlines))
        XCTAssertEqual(ca.exportFileName(.androidSystem), ca.subjectHashOld + ".0")
        XCTAssertEqual(try ca.export(.androidSystem), try ca.export(.pem))
    }

    func testPKCS12HoldsTheCertificateAloneWithoutPassword() throws {
        let (ca, _) = try authority()
        let file = try write(try ca.export(.p12), "intact-ca.p12")
        let info = try ToolRun.openssl(["pkcs12", "-in", file, "-passin", "pass:", "-nokeys", "-info"])
        XCTAssertEqual(info.status, 0, info.error)
        XCTAssertTrue(info.output.contains("-----BEGIN CERTIFICATE-----"), info.output)
        let keys = try ToolRun.openssl(["pkcs12", "-in", file, "-passin", "pass:", "-nocerts", "-nodes"])
        XCTAssertEqual(keys.status, 0, keys.error)
        XCTAssertFalse(keys.output.contains("PRIVATE KEY"), keys.output)
    }

    func testProfileHasOneRootPayloadWithTheCertificateAndStableUUIDs() throws {
        let (ca, directory) = try authority()
        let profile = try ca.export(.mobileconfig)
        let plist = try PropertyListSerialization.propertyList(from: Data(profile), format: nil) as? [String: Any]
        XCTAssertEqual(plist?["PayloadType"] as? String, "Configuration")
        let payloads = plist?["PayloadContent"] as? [[String: Any]]
        XCTAssertEqual(payloads?.count, 1)
        let root = try XCTUnwrap(payloads?.first)
        XCTAssertEqual(root["PayloadType"] as? String, "com.apple.security.root")
        XCTAssertEqual((root["PayloadContent"] as? Data).map { Array($0) }, ca.certificateDER)
        let uuid = try XCTUnwrap(root["PayloadUUID"] as? String)
        XCTAssertNotNil(UUID(uuidString: uuid))
        XCTAssertNotEqual(uuid, plist?["PayloadUUID"] as? String)
        // Stable: the same CA loaded again gives the same profile; another CA another UUID.
        XCTAssertEqual(try CertificateAuthority.load(from: directory).export(.mobileconfig), profile)
        let (other, _) = try authority()
        XCTAssertNotEqual(other.stableUUID("intact ca payload"), uuid)
    }

    func testSPKIHashesMatchOpenSSLs() throws {
        let (ca, directory) = try authority()
        func opensslSPKI(_ arguments: [String]) throws -> String {
            let der = makeTemporaryDirectory() + "/spki.der"
            let key = try ToolRun.openssl(arguments + ["-outform", "DER", "-out", der])
            XCTAssertEqual(key.status, 0, key.error)
            let digest = try ToolRun.openssl(["dgst", "-sha256", "-binary", "-out", der + ".sha", der])
            XCTAssertEqual(digest.status, 0, digest.error)
            return try Data(contentsOf: URL(fileURLWithPath: der + ".sha")).base64EncodedString()
        }
        XCTAssertEqual(ca.leafSPKIHash, try opensslSPKI(["pkey", "-in", directory + "/leaf-key.pem", "-pubout"]))
        let caKey = try ToolRun.openssl(["x509", "-in", directory + "/ca-cert.pem", "-noout", "-pubkey"])
        let caKeyFile = try write(Array(caKey.output.utf8), "ca-pub.pem")
        XCTAssertEqual(ca.certificateSPKIHash, try opensslSPKI(["pkey", "-pubin", "-in", caKeyFile]))
        XCTAssertNotEqual(ca.certificateSPKIHash, ca.leafSPKIHash)
    }
}
