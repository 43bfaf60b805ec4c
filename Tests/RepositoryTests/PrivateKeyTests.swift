import Foundation
import IntactTestSupport
import XCTest

/// No private key is committed: every tracked file outside test fixtures is
/// searched for a PEM private key block (`-----BEGIN … PRIVATE KEY-----`).
/// Keys a test needs are generated at run time or live under a `Fixtures/`
/// directory of a test target.
final class PrivateKeyTests: XCTestCase {
    /// The marker is assembled so this file does not contain it.
    private static let begin = Array(("-----" + "BEGIN ").utf8)
    private static let end = Array(("PRIVATE " + "KEY-----").utf8)

    /// Whether `bytes` hold a PEM private key block of any kind (PKCS#8,
    /// encrypted PKCS#8, RSA, EC, DSA, OpenSSH).
    static func containsPrivateKey(_ bytes: [UInt8]) -> Bool {
        var index = 0
        while let start = firstIndex(of: begin, in: bytes, from: index) {
            // The label: uppercase letters, digits and spaces (as PEM labels are), then the closing dashes.
            var cursor = start + begin.count
            while cursor < bytes.count, cursor - start < 64,
                  (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(bytes[cursor])
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[cursor]) || bytes[cursor] == UInt8(ascii: " ") {
                cursor += 1
            }
            let label = Array(bytes[(start + begin.count)..<cursor]) + Array(bytes[cursor..<min(bytes.count, cursor + 5)])
            if label.count >= end.count, Array(label.suffix(end.count)) == end { return true }
            index = start + 1
        }
        return false
    }

    private static func firstIndex(of needle: [UInt8], in bytes: [UInt8], from: Int) -> Int? {
        guard needle.count <= bytes.count else { return nil }
        var index = from
        while index <= bytes.count - needle.count {
            if bytes[index] == needle[0], Array(bytes[index..<(index + needle.count)]) == needle { return index }
            index += 1
        }
        return nil
    }

    /// A path inside a test fixture directory, where a throwaway key may live.
    static func isTestFixture(_ path: String) -> Bool {
        path.hasPrefix("Tests/") && path.split(separator: "/").contains("Fixtures")
    }

    func testNoTrackedFileOutsideTestFixturesHoldsAPrivateKey() throws {
        let files = try RepositoryFiles.tracked()
        XCTAssertGreaterThan(files.count, 100, "the tracked files were found")
        var offenders: [String] = []
        for path in files where !Self.isTestFixture(path) {
            guard let data = FileManager.default.contents(atPath: RepositoryFiles.root.appendingPathComponent(path).path) else {
                continue  // deleted in the working tree, not yet committed
            }
            if Self.containsPrivateKey(Array(data)) { offenders.append(path) }
        }
        XCTAssertEqual(offenders, [], "tracked files holding a PEM private key (remove them, rotate the key, "
                       + "and generate keys at run time): \(offenders.joined(separator: ", "))")
    }

    func testTheDetectorFindsEveryKindOfPrivateKeyAndNothingElse() throws {
        for label in ["", "RSA ", "EC ", "DSA ", "ENCRYPTED ", "OPENSSH "] {
            let pem = "text\n-----" + "BEGIN \(label)PRIVATE KEY-----\nMIIEvQ==\n-----END \(label)PRIVATE KEY-----\n"
            XCTAssertTrue(Self.containsPrivateKey(Array(pem.utf8)), label)
        }
        let certificate = "-----" + "BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
        XCTAssertFalse(Self.containsPrivateKey(Array(certificate.utf8)))
        XCTAssertFalse(Self.containsPrivateKey(Array("-----BEGIN ".utf8)))
        XCTAssertFalse(Self.containsPrivateKey(Array("a PRIVATE KEY is mentioned".utf8)))
        XCTAssertFalse(Self.containsPrivateKey(Array("prose: `-----BEGIN … PRIVATE KEY-----`".utf8)), "labels are uppercase")
        XCTAssertTrue(Self.isTestFixture("Tests/TLSTests/Fixtures/leaf-key.pem"))
        XCTAssertFalse(Self.isTestFixture("ca/leaf-key.pem"))
        XCTAssertFalse(Self.isTestFixture("Examples/Fixtures/key.pem"), "only test targets hold fixtures")
    }
}
