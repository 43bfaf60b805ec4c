import Dispatch
import Foundation
import Synchronization
import IntactTestSupport
import XCTest
@testable import TLS

final class CertificateAuthorityLeafTests: XCTestCase {
    private var directory = ""
    private var authority: CertificateAuthority!

    override func setUpWithError() throws {
        directory = makeTemporaryDirectory()
        authority = try CertificateAuthority.create(in: directory, leafCacheCapacity: 3)
    }

    /// Writes the leaf, runs `openssl verify` against the CA with `extra`
    /// checks, and returns the certificate's text dump.
    private func verifyWithOpenSSL(_ leaf: TLSIdentity, extra: [String]) throws -> String {
        let file = directory + "/leaf-\(UUID().uuidString).pem"
        try leaf.certificatePEM.write(toFile: file, atomically: false, encoding: .utf8)
        let verify = try runOpenSSL(["verify", "-CAfile", authority.certificatePath] + extra + [file])
        XCTAssertEqual(verify.status, 0, verify.output)
        XCTAssertEqual(verify.output, "\(file): OK\n")
        let text = try runOpenSSL(["x509", "-in", file, "-noout", "-text"])
        XCTAssertEqual(text.status, 0, text.output)
        return text.output
    }

    private func assertValidityWithinLimits(_ leaf: TLSIdentity, file: StaticString = #filePath, line: UInt = #line) {
        let days = leaf.notAfter.timeIntervalSince(leaf.notBefore) / 86_400
        XCTAssertLessThanOrEqual(days, 397, file: file, line: line)
        XCTAssertGreaterThan(days, 396, file: file, line: line)
        XCTAssertLessThan(leaf.notBefore, Date().addingTimeInterval(-3000), "notBefore is backdated", file: file, line: line)
    }

    func testLeafForAHostNameVerifiesAndCarriesItsName() throws {
        let leaf = try authority.leaf(for: "login.example.test")
        let text = try verifyWithOpenSSL(leaf, extra: ["-purpose", "sslserver", "-verify_hostname", "login.example.test"])
        XCTAssertTrue(text.contains("DNS:login.example.test"), text)
        XCTAssertTrue(text.contains("TLS Web Server Authentication"), text)
        XCTAssertTrue(text.contains("CA:FALSE"), text)
        XCTAssertTrue(text.contains("ecdsa-with-SHA256"), text)
        XCTAssertEqual(leaf.subject, "CN=login.example.test")
        XCTAssertEqual(leaf.issuer, authority.subject)
        assertValidityWithinLimits(leaf)
    }

    func testLeafForIPAddressesHasAnIPSubjectAlternativeName() throws {
        let v4 = try authority.leaf(for: "127.0.0.1")
        let v4Text = try verifyWithOpenSSL(v4, extra: ["-purpose", "sslserver", "-verify_ip", "127.0.0.1"])
        XCTAssertTrue(v4Text.contains("IP Address:127.0.0.1"), v4Text)
        XCTAssertFalse(v4Text.contains("DNS:"), v4Text)
        assertValidityWithinLimits(v4)

        let v6 = try authority.leaf(for: "0:0::1")
        let v6Text = try verifyWithOpenSSL(v6, extra: ["-verify_ip", "::1"])
        XCTAssertTrue(v6Text.contains("IP Address:0:0:0:0:0:0:0:1"), v6Text)
        XCTAssertEqual(v6.subject, "CN=::1")
        XCTAssertTrue(try authority.leaf(for: "::1") === v6, "equal addresses share a certificate")
    }

    func testAHostTooLongForACommonNameGetsACriticalAlternativeName() throws {
        let host = String(repeating: "a", count: 40) + "." + String(repeating: "b", count: 40) + ".example"
        let leaf = try authority.leaf(for: host)
        let text = try verifyWithOpenSSL(leaf, extra: ["-verify_hostname", host])
        XCTAssertTrue(text.contains("X509v3 Subject Alternative Name: critical"), text)
        XCTAssertEqual(leaf.subject, "")
    }

    func testNamesAreCanonicalisedAndInvalidNamesRefused() throws {
        XCTAssertTrue(try authority.leaf(for: "Example.TEST.") === authority.leaf(for: "example.test"))
        let refused: [(String, String)] = [
            ("", "the name is empty"),
            ("a..b", "empty label"),
            ("-a.example", "starts or ends with a hyphen"),
            ("*.example", "wildcards are not issued"),
            ("a b.example", "character ' ' is not allowed"),
            ("[::1]", "without brackets"),
            ("fe80::1%eth0", "without brackets or zone"),
            ("999.1.1.1", "not a valid one"),
            (String(repeating: "x", count: 64) + ".example", "longer than 63"),
            ("bücher.example", "punycode"),
        ]
        for (name, reason) in refused {
            XCTAssertThrowsError(try authority.leaf(for: name), name) { error in
                guard case let .invalidName(reported, text)? = error as? CertificateError else {
                    return XCTFail("\(name): \(error)")
                }
                XCTAssertEqual(reported, name)
                XCTAssertTrue(text.contains(reason), "\(name): \(text)")
                XCTAssertTrue("\(error)".hasPrefix("cannot issue a certificate for '\(name)': "))
            }
        }
        XCTAssertEqual(authority.cachedLeafCount, 1)
    }

    func testCacheKeepsRecentLeavesAndEvictsTheLeastRecentlyUsed() throws {
        XCTAssertEqual(authority.leafCacheCapacity, 3)
        let a = try authority.leaf(for: "a.example")
        let b = try authority.leaf(for: "b.example")
        let c = try authority.leaf(for: "c.example")
        XCTAssertTrue(try authority.leaf(for: "a.example") === a)
        _ = try authority.leaf(for: "d.example") // evicts b, the least recently used
        XCTAssertEqual(authority.cachedLeafCount, 3)
        XCTAssertTrue(try authority.leaf(for: "a.example") === a)
        XCTAssertTrue(try authority.leaf(for: "c.example") === c)
        let newB = try authority.leaf(for: "b.example")
        XCTAssertFalse(newB === b, "an evicted name is minted again")
        XCTAssertNotEqual(newB.sha256Fingerprint, b.sha256Fingerprint, "a new serial number")
        XCTAssertEqual(authority.cachedLeafCount, 3)
    }

    func testConcurrentRequestsForOneNameAgreeOnOneIdentity() throws {
        let names = (0..<8).map { "host\($0 % 2).example" }
        let results = Mutex<[String: Set<ObjectIdentifier>]>([:])
        let authority = self.authority!
        DispatchQueue.concurrentPerform(iterations: names.count) { index in
            guard let leaf = try? authority.leaf(for: names[index]) else { return }
            _ = results.withLock { $0[names[index], default: []].insert(ObjectIdentifier(leaf)) }
        }
        let collected = results.withLock { $0 }
        XCTAssertEqual(collected.count, 2)
        for (name, identities) in collected {
            XCTAssertEqual(identities, [ObjectIdentifier(try authority.leaf(for: name))], name)
        }
    }

    func testLRUCacheOrder() {
        var cache = LRUCache<String, Int>(capacity: 2)
        cache.insert(1, for: "one")
        cache.insert(2, for: "two")
        XCTAssertEqual(cache.value(for: "one"), 1)
        cache.insert(3, for: "three")
        XCTAssertNil(cache.value(for: "two"))
        XCTAssertEqual(cache.value(for: "one"), 1)
        cache.insert(33, for: "three")
        cache.insert(4, for: "four")
        XCTAssertNil(cache.value(for: "one"))
        XCTAssertEqual(cache.value(for: "three"), 33)
        XCTAssertEqual(cache.value(for: "four"), 4)
        XCTAssertEqual(cache.count, 2)
    }
}
