import Foundation
import XCTest
import IntactTestSupport
import Synchronization
@testable import TLS

/// The per-user default directory, publishing a CA atomically, and the
/// half-written CA a creation can leave behind.
final class CertificateAuthorityHomeTests: XCTestCase {
    func testDefaultDirectoryFollowsXDGDataHomeThenHome() {
        XCTAssertEqual(CertificateAuthority.defaultDirectory(environment: ["XDG_DATA_HOME": "/d/data", "HOME": "/h"]),
                       "/d/data/intact")
        XCTAssertEqual(CertificateAuthority.defaultDirectory(environment: ["XDG_DATA_HOME": "/d/data/", "HOME": "/h"]),
                       "/d/data/intact")
        // A relative XDG_DATA_HOME is invalid by the specification and ignored.
        XCTAssertEqual(CertificateAuthority.defaultDirectory(environment: ["XDG_DATA_HOME": "data", "HOME": "/home/ann"]),
                       "/home/ann/.local/share/intact")
        XCTAssertEqual(CertificateAuthority.defaultDirectory(environment: ["HOME": "/home/ann"]),
                       "/home/ann/.local/share/intact")
        // No HOME: the password database's home directory of this user.
        XCTAssertTrue(CertificateAuthority.defaultDirectory(environment: [:]).hasSuffix("/.local/share/intact"))
    }

    func testCreateMakesMissingParentsPrivateAndLeavesNoTemporaryDirectory() throws {
        let base = makeTemporaryDirectory()
        let directory = base + "/data/intact"
        _ = try CertificateAuthority.create(in: directory)
        XCTAssertEqual(try mode(of: base + "/data"), 0o700)
        XCTAssertEqual(try mode(of: directory), 0o700)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: base + "/data"), ["intact"])
        XCTAssertEqual(Set(try FileManager.default.contentsOfDirectory(atPath: directory)),
                       ["ca-cert.pem", "ca-key.pem", "leaf-key.pem"])
    }

    /// A second CA trusted beside the first gets a name of its own; loaded again, it keeps it.
    func testACAMayBeGivenANameOfItsOwn() throws {
        let directory = makeTemporaryDirectory() + "/bump"
        let (made, created) = try CertificateAuthority.loadOrCreate(in: directory, commonName: "Intact scenario: Squid's inspection CA")
        XCTAssertTrue(created)
        XCTAssertEqual(made.commonName, "Intact scenario: Squid's inspection CA")
        XCTAssertEqual(try CertificateAuthority.load(from: directory).commonName, "Intact scenario: Squid's inspection CA")
        XCTAssertTrue(try CertificateAuthority.create(in: makeTemporaryDirectory() + "/ca").commonName
            .hasPrefix("Intact Development CA ("))
    }

    func testAnEmptyExistingDirectoryIsReplacedByTheNewCA() throws {
        let directory = makeTemporaryDirectory() + "/ca"
        XCTAssertEqual(mkdir(directory, 0o755), 0)
        let (authority, created) = try CertificateAuthority.loadOrCreate(in: directory)
        XCTAssertTrue(created)
        XCTAssertEqual(try mode(of: directory), 0o700)
        XCTAssertEqual(try CertificateAuthority.load(from: directory).sha256Fingerprint, authority.sha256Fingerprint)
    }

    func testADirectoryWithOtherFilesIsFilledInPlaceUnderItsLock() throws {
        let directory = makeTemporaryDirectory() + "/certs"
        XCTAssertEqual(mkdir(directory, 0o700), 0)
        try Data("notes\n".utf8).write(to: URL(fileURLWithPath: directory + "/README.md"))
        let (authority, created) = try CertificateAuthority.loadOrCreate(in: directory)
        XCTAssertTrue(created)
        XCTAssertEqual(Set(try FileManager.default.contentsOfDirectory(atPath: directory)),
                       ["README.md", ".intact-ca.lock", "ca-cert.pem", "ca-key.pem", "leaf-key.pem"])
        let again = try CertificateAuthority.loadOrCreate(in: directory)
        XCTAssertFalse(again.created)
        XCTAssertEqual(again.authority.sha256Fingerprint, authority.sha256Fingerprint)
    }

    func testThreadsCreatingOneNewDirectoryAtOnceAllGetTheSameCA() throws {
        let directory = makeTemporaryDirectory() + "/shared/intact"
        let results = Mutex<[(String, Bool)]>([])
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            do {
                let (authority, created) = try CertificateAuthority.loadOrCreate(in: directory)
                results.withLock { $0.append((authority.sha256Fingerprint, created)) }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        XCTAssertEqual(failures.withLock { $0 }, [])
        let all = results.withLock { $0 }
        XCTAssertEqual(all.count, 8)
        XCTAssertEqual(all.filter(\.1).count, 1, "exactly one creates")
        XCTAssertEqual(Set(all.map(\.0)), [try CertificateAuthority.load(from: directory).sha256Fingerprint])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory + "/.."), ["intact"])
    }

    func testAHalfWrittenCAIsWaitedForThenNamedWithTheFix() throws {
        let directory = makeTemporaryDirectory() + "/ca"
        let source = makeTemporaryDirectory() + "/source"
        _ = try CertificateAuthority.create(in: source)
        XCTAssertEqual(mkdir(directory, 0o700), 0)
        XCTAssertNoThrow(try FileManager.default.copyItem(atPath: source + "/ca-key.pem", toPath: directory + "/ca-key.pem"))
        let start = ContinuousClock.now
        XCTAssertThrowsError(try CertificateAuthority.loadOrCreate(in: directory)) { error in
            XCTAssertEqual(error as? CertificateError, .incompleteAuthority(
                directory: directory, missing: ["ca-cert.pem", "leaf-key.pem"], present: ["ca-key.pem"]))
            XCTAssertEqual("\(error)", "\(directory) holds a half-written CA: ca-cert.pem, leaf-key.pem missing next to "
                + "ca-key.pem (an interrupted creation?); remove \(directory)/ca-key.pem and run again to make a new CA, "
                + "or restore the missing file")
        }
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - start, CertificateAuthority.halfWrittenWait)
    }

    func testAHalfWrittenCAThatCompletesWhileWaitedForLoads() throws {
        let directory = makeTemporaryDirectory() + "/ca"
        let source = makeTemporaryDirectory() + "/source"
        let original = try CertificateAuthority.create(in: source)
        XCTAssertEqual(mkdir(directory, 0o700), 0)
        for name in ["leaf-key.pem", "ca-key.pem"] {
            try FileManager.default.copyItem(atPath: source + "/" + name, toPath: directory + "/" + name)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(300)) {
            try? FileManager.default.copyItem(atPath: source + "/ca-cert.pem", toPath: directory + "/ca-cert.pem")
        }
        let (loaded, created) = try CertificateAuthority.loadOrCreate(in: directory)
        XCTAssertFalse(created)
        XCTAssertEqual(loaded.sha256Fingerprint, original.sha256Fingerprint)
    }

    func testAKeyFromAnotherCAIsNamedWithTheFix() throws {
        let directory = makeTemporaryDirectory() + "/ca"
        let other = makeTemporaryDirectory() + "/other"
        _ = try CertificateAuthority.create(in: directory)
        _ = try CertificateAuthority.create(in: other)
        XCTAssertEqual(unlink(directory + "/ca-key.pem"), 0)
        try FileManager.default.copyItem(atPath: other + "/ca-key.pem", toPath: directory + "/ca-key.pem")
        XCTAssertThrowsError(try CertificateAuthority.loadOrCreate(in: directory)) { error in
            let text = "\(error)"
            XCTAssertTrue(text.hasPrefix("\(directory)/ca-key.pem is not the private key of the certificate in "
                                         + "\(directory)/ca-cert.pem: the files come from different CAs"), text)
            XCTAssertTrue(text.contains("move the directory away so a new CA is made"), text)
        }
    }
}
