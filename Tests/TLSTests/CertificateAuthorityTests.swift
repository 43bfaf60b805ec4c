import Foundation
import XCTest
import IntactTestSupport
@testable import TLS

extension XCTestCase {
    /// Permission bits of `path`.
    func mode(of path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? Int) ?? -1
    }
}

final class CertificateAuthorityTests: XCTestCase {
    func testCreateWritesFilesWithTheirModesAndLoadReadsTheSameCA() throws {
        let directory = makeTemporaryDirectory() + "/nested/certs"
        let created = try CertificateAuthority.create(in: directory)

        XCTAssertEqual(try mode(of: directory), 0o700)
        XCTAssertEqual(try mode(of: directory + "/ca-key.pem"), 0o600)
        XCTAssertEqual(try mode(of: directory + "/leaf-key.pem"), 0o600)
        XCTAssertEqual(try mode(of: directory + "/ca-cert.pem"), 0o644)
        XCTAssertEqual(created.certificatePath, directory + "/ca-cert.pem")
        XCTAssertTrue(created.subject.hasPrefix("CN=Intact Development CA ("), created.subject)
        XCTAssertTrue(created.subject.hasSuffix(",O=Intact"), created.subject)
        XCTAssertEqual(created.sha256Fingerprint.count, 64)

        let loaded = try CertificateAuthority.load(from: directory)
        XCTAssertEqual(loaded.sha256Fingerprint, created.sha256Fingerprint)
        XCTAssertEqual(loaded.subject, created.subject)
        XCTAssertEqual(loaded.certificatePEM, created.certificatePEM)
        let days = loaded.notAfter.timeIntervalSince(loaded.notBefore) / 86_400
        XCTAssertEqual(days, Double(CertificateAuthority.validityDays), accuracy: 0.01)
    }

    func testCACertificateHasCriticalCABasicConstraintsAndSigningKeyUsage() throws {
        let directory = makeTemporaryDirectory()
        let authority = try CertificateAuthority.create(in: directory)
        let text = try runOpenSSL(["x509", "-in", authority.certificatePath, "-noout", "-text"])
        XCTAssertEqual(text.status, 0, text.output)
        XCTAssertTrue(text.output.contains("X509v3 Basic Constraints: critical\n                CA:TRUE"), text.output)
        XCTAssertTrue(text.output.contains("Certificate Sign, CRL Sign"), text.output)
        XCTAssertTrue(text.output.contains("X509v3 Subject Key Identifier"), text.output)
        XCTAssertTrue(text.output.contains("ASN1 OID: prime256v1"), text.output)
        XCTAssertTrue(text.output.contains("ecdsa-with-SHA256"), text.output)
        let fingerprint = try runOpenSSL(["x509", "-in", authority.certificatePath, "-noout", "-fingerprint", "-sha256"])
        let expected = fingerprint.output.split(separator: "=").last.map {
            $0.replacingOccurrences(of: ":", with: "").lowercased().trimmingCharacters(in: .whitespacesAndNewlines)
        }
        XCTAssertEqual(authority.sha256Fingerprint, expected)
    }

    func testCreateRefusesToOverwriteAnExistingCA() throws {
        let directory = makeTemporaryDirectory()
        let first = try CertificateAuthority.create(in: directory)
        XCTAssertThrowsError(try CertificateAuthority.create(in: directory)) { error in
            XCTAssertEqual(error as? CertificateError, .alreadyExists(file: directory + "/ca-cert.pem"))
        }
        XCTAssertEqual(try CertificateAuthority.load(from: directory).sha256Fingerprint, first.sha256Fingerprint)
    }

    func testCreateTightensAnExistingDirectory() throws {
        let directory = makeTemporaryDirectory() + "/certs"
        XCTAssertEqual(mkdir(directory, 0o755), 0)
        _ = try CertificateAuthority.create(in: directory + "/")
        XCTAssertEqual(try mode(of: directory), 0o700)
        XCTAssertNoThrow(try CertificateAuthority.load(from: directory))
    }

    func testLoadOrCreateCreatesOnceThenLoads() throws {
        let directory = makeTemporaryDirectory() + "/certs"
        let first = try CertificateAuthority.loadOrCreate(in: directory)
        let second = try CertificateAuthority.loadOrCreate(in: directory)
        XCTAssertTrue(first.created)
        XCTAssertFalse(second.created)
        XCTAssertEqual(first.authority.sha256Fingerprint, second.authority.sha256Fingerprint)
    }

    func testLoadRefusesADirectoryOthersCanRead() throws {
        let directory = makeTemporaryDirectory() + "/certs"
        _ = try CertificateAuthority.create(in: directory)
        XCTAssertEqual(chmod(directory, 0o755), 0)
        XCTAssertThrowsError(try CertificateAuthority.load(from: directory)) { error in
            XCTAssertEqual("\(error)",
                           "\(directory) is readable by group or others (mode 0755); run chmod 700 \(directory)")
        }
    }

    func testLoadRefusesAKeyFileOthersCanRead() throws {
        let directory = makeTemporaryDirectory() + "/certs"
        _ = try CertificateAuthority.create(in: directory)
        XCTAssertEqual(chmod(directory + "/ca-key.pem", 0o644), 0)
        XCTAssertThrowsError(try CertificateAuthority.load(from: directory)) { error in
            XCTAssertEqual("\(error)", "\(directory)/ca-key.pem is readable by group or others (mode 0644); "
                + "run chmod 600 \(directory)/ca-key.pem")
        }
        XCTAssertEqual(chmod(directory + "/ca-key.pem", 0o600), 0)
        XCTAssertEqual(chmod(directory + "/leaf-key.pem", 0o620), 0)
        XCTAssertThrowsError(try CertificateAuthority.load(from: directory)) { error in
            XCTAssertEqual(error as? CertificateError,
                           .insecurePermissions(path: directory + "/leaf-key.pem", mode: 0o620, fixMode: 0o600))
            XCTAssertTrue("\(error)".contains("is writable by group or others (mode 0620)"), "\(error)")
        }
    }

    func testLoadNamesACorruptCertificateFile() throws {
        let directory = makeTemporaryDirectory() + "/certs"
        _ = try CertificateAuthority.create(in: directory)
        let path = directory + "/ca-cert.pem"
        try "-----BEGIN CERTIFICATE-----\nnot base64 at all!\n-----END CERTIFICATE-----\n"
            .write(toFile: path, atomically: false, encoding: .utf8)
        XCTAssertThrowsError(try CertificateAuthority.load(from: directory)) { error in
            XCTAssertTrue("\(error)".hasPrefix("\(path): not a PEM certificate ("), "\(error)")
        }
        for content in ["hello\n", ""] {
            try content.write(toFile: path, atomically: false, encoding: .utf8)
            XCTAssertThrowsError(try CertificateAuthority.load(from: directory)) { error in
                XCTAssertEqual("\(error)", "\(path): not a PEM certificate (no start line)")
            }
        }
    }

    func testLoadNamesACorruptKeyFile() throws {
        let directory = makeTemporaryDirectory() + "/certs"
        _ = try CertificateAuthority.create(in: directory)
        let path = directory + "/leaf-key.pem"
        XCTAssertEqual(truncate(path, 40), 0)
        XCTAssertThrowsError(try CertificateAuthority.load(from: directory)) { error in
            XCTAssertTrue("\(error)".hasPrefix("\(path): not a PEM private key ("), "\(error)")
        }
    }

    func testLoadRefusesAKeyThatIsNotTheCAsKey() throws {
        let directory = makeTemporaryDirectory() + "/certs"
        _ = try CertificateAuthority.create(in: directory)
        let keyPath = directory + "/ca-key.pem"
        let leafKey = try Data(contentsOf: URL(fileURLWithPath: directory + "/leaf-key.pem"))
        try leafKey.write(to: URL(fileURLWithPath: keyPath))
        XCTAssertThrowsError(try CertificateAuthority.load(from: directory)) { error in
            XCTAssertEqual(error as? CertificateError,
                           .keyMismatch(certificate: directory + "/ca-cert.pem", key: keyPath))
        }
    }

    func testLoadNamesAMissingDirectoryAndRefusesANonCACertificate() throws {
        let missing = makeTemporaryDirectory() + "/absent"
        XCTAssertThrowsError(try CertificateAuthority.load(from: missing)) { error in
            XCTAssertEqual("\(error)", "cannot read \(missing): No such file or directory")
        }
        // A leaf certificate with its own key in place of the CA's.
        let directory = makeTemporaryDirectory() + "/certs"
        let authority = try CertificateAuthority.create(in: directory)
        let leaf = try authority.leaf(for: "example.test")
        XCTAssertEqual(unlink(directory + "/ca-cert.pem"), 0)
        try leaf.certificatePEM.write(toFile: directory + "/ca-cert.pem", atomically: false, encoding: .utf8)
        try Data(contentsOf: URL(fileURLWithPath: directory + "/leaf-key.pem"))
            .write(to: URL(fileURLWithPath: directory + "/ca-key.pem"))
        XCTAssertThrowsError(try CertificateAuthority.load(from: directory)) { error in
            XCTAssertEqual(error as? CertificateError, .notACertificateAuthority(source: directory + "/ca-cert.pem"))
        }
    }

    func testIdentityFromPEMBytesAndFilesAgree() throws {
        let directory = makeTemporaryDirectory()
        let authority = try CertificateAuthority.create(in: directory)
        let leaf = try authority.leaf(for: "files.example")
        let keyPEM = try Array(Data(contentsOf: URL(fileURLWithPath: authority.leafKeyPath)))
        let fromBytes = try TLSIdentity(certificatePEM: Array(leaf.certificatePEM.utf8),
                                        chainPEM: Array(authority.certificatePEM.utf8), privateKeyPEM: keyPEM)
        XCTAssertEqual(fromBytes.sha256Fingerprint, leaf.sha256Fingerprint)
        XCTAssertEqual(fromBytes.subject, "CN=files.example")
        XCTAssertEqual(fromBytes.issuer, authority.subject)
        XCTAssertEqual(fromBytes.chainPEM, [authority.certificatePEM])

        let certificateFile = directory + "/leaf.pem"
        try (leaf.certificatePEM + authority.certificatePEM).write(toFile: certificateFile, atomically: false, encoding: .utf8)
        let fromFiles = try TLSIdentity(certificateFile: certificateFile, keyFile: authority.leafKeyPath)
        XCTAssertEqual(fromFiles.sha256Fingerprint, leaf.sha256Fingerprint)
        XCTAssertEqual(fromFiles.chainPEM.count, 1)

        XCTAssertThrowsError(try TLSIdentity(certificatePEM: Array(leaf.certificatePEM.utf8), chainPEM: Array("junk".utf8),
                                             privateKeyPEM: keyPEM)) { error in
            XCTAssertEqual((error as? TLSError)?.kind, .invalidIdentity)
            XCTAssertTrue("\(error)".contains("chain PEM holds no PEM certificate"), "\(error)")
        }
        XCTAssertThrowsError(try TLSIdentity(certificateFile: authority.certificatePath, keyFile: authority.leafKeyPath)) {
            XCTAssertEqual(($0 as? TLSError)?.kind, .invalidIdentity)
            XCTAssertTrue("\($0)".contains("private key does not belong to certificate"), "\($0)")
        }
    }
}
