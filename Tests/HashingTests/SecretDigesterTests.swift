import Hashing
import XCTest

/// HMAC-SHA-256 against RFC 4231's test vectors, and what a recording relies on.
final class SecretDigesterTests: XCTestCase {
    private func hex(_ digester: SecretDigester, _ message: [UInt8]) -> String {
        Encoding.hex(digester.authenticate(message))
    }

    func testRFC4231Vectors() {
        // Test case 1: 20-byte key.
        XCTAssertEqual(hex(SecretDigester(key: [UInt8](repeating: 0x0b, count: 20)), Array("Hi There".utf8)),
                       "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        // Test case 2: a key shorter than the digest.
        XCTAssertEqual(hex(SecretDigester(key: Array("Jefe".utf8)), Array("what do ya want for nothing?".utf8)),
                       "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        // Test case 6: a key longer than a block is hashed first.
        XCTAssertEqual(hex(SecretDigester(key: [UInt8](repeating: 0xaa, count: 131)),
                           Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)),
                       "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }

    func testSameKeySameDigestOtherKeyOtherDigestAndFingerprint() {
        let key = [UInt8](repeating: 7, count: SecretDigester.keyByteCount)
        let a = SecretDigester(key: key), b = SecretDigester(key: key)
        let other = SecretDigester(key: [UInt8](repeating: 8, count: SecretDigester.keyByteCount))
        let secret = Array("pw=hunter2".utf8)
        XCTAssertEqual(a.digest(secret), b.digest(secret))
        XCTAssertNotEqual(a.digest(secret), other.digest(secret))
        XCTAssertTrue(a.digest(secret).hasPrefix("hmac-sha256:"))
        XCTAssertEqual(a.digest(secret).count, "hmac-sha256:".count + 64)
        XCTAssertNotEqual(a.digest(secret), "hmac-sha256:" + Encoding.hex(SHA256.hash(secret)), "not a plain digest")
        XCTAssertEqual(a.fingerprint, b.fingerprint)
        XCTAssertNotEqual(a.fingerprint, other.fingerprint)
        XCTAssertEqual(a.fingerprint.count, 16)
        XCTAssertEqual(a, b)
        XCTAssertNotEqual(a, other)
    }

    func testDigestingIsRepeatableFromManyThreads() {
        let digester = SecretDigester(key: SecureRandom.bytes(32))
        let expected = digester.digest(Array("token".utf8))
        DispatchQueue.concurrentPerform(iterations: 64) { _ in
            XCTAssertEqual(digester.digest(Array("token".utf8)), expected)
        }
    }
}
