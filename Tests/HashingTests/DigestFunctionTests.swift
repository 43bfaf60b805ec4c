import Foundation
import Hashing
import XCTest

/// The function recordings digest message content with: plain SHA-256 or
/// HMAC-SHA-256, in one go or in pieces, giving the same bytes either way.
final class DigestFunctionTests: XCTestCase {
    private let key = [UInt8](repeating: 0x0b, count: 20)
    private let message = Array("Hi There".utf8)
    /// RFC 4231 test case 1.
    private let rfc4231Case1 = "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"

    func testPlainIsSHA256() {
        let bytes = Array("user=alice&pw=hunter2".utf8)
        XCTAssertEqual(DigestFunction.sha256.digest(bytes), SHA256.hash(bytes))
        XCTAssertEqual(DigestFunction.sha256.digest([UInt8]()), SHA256.hash([UInt8]()))
        XCTAssertEqual(DigestFunction.sha256.algorithm, .sha256)
        XCTAssertNil(DigestFunction.sha256.keyFingerprint)
    }

    func testKeyedIsHMACSHA256InOneGoAndInPieces() {
        let function = SecretDigester(key: key).digests
        XCTAssertEqual(function.algorithm, .hmacSHA256)
        XCTAssertEqual(function.keyFingerprint, SecretDigester(key: key).fingerprint)
        XCTAssertEqual(Encoding.hex(function.digest(message)), rfc4231Case1)
        var running = function.begin()
        running.update(message.prefix(3))
        running.update([UInt8]())
        running.update(message.dropFirst(3))
        XCTAssertEqual(Encoding.hex(running.finish()), rfc4231Case1)
        // A longer message crossing block boundaries, fed in uneven pieces.
        let long = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        var pieces = function.begin()
        var offset = 0
        for size in [1, 63, 64, 65, 300, 507] {
            pieces.update(long[offset..<offset + size])
            offset += size
        }
        XCTAssertEqual(pieces.finish(), function.digest(long))
    }

    /// Every message length from 0 to 200 bytes (each position of the last
    /// block's padding, one block or two) against OpenSSL's EVP SHA-256, and
    /// HMAC-SHA-256 (RFC 2104) built here from it: the shim finishes digests
    /// itself, so it is checked against a path that does not.
    func testEveryTailLengthMatchesEVPSHA256AndRFC2104() {
        let hmacKey = (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 11) }
        let keyed = SecretDigester(key: hmacKey).digests
        func evp(_ bytes: [UInt8]) -> [UInt8] {
            var sha = SHA256()
            sha.update(bytes)
            return sha.finalize()
        }
        let block = hmacKey + [UInt8](repeating: 0, count: 64 - hmacKey.count)
        for length in 0...200 {
            let message = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ length) }
            XCTAssertEqual(DigestFunction.sha256.digest(message), evp(message), "length \(length)")
            let inner = evp(block.map { $0 ^ 0x36 } + message)
            XCTAssertEqual(keyed.digest(message), evp(block.map { $0 ^ 0x5c } + inner), "length \(length)")
            var running = keyed.begin()
            running.update(message.prefix(length / 3))
            running.update(message.dropFirst(length / 3))
            XCTAssertEqual(running.finish(), keyed.digest(message), "length \(length), in pieces")
        }
    }

    func testACopiedRunningDigestGoesOnIndependently() {
        let function = SecretDigester(key: key).digests
        var first = function.begin()
        first.update(Array("Hi ".utf8))
        var fork = first
        fork.update(Array("There".utf8))
        first.update(Array("Thor".utf8))
        XCTAssertEqual(Encoding.hex(fork.finish()), rfc4231Case1)
        XCTAssertEqual(first.finish(), function.digest(Array("Hi Thor".utf8)))
    }

    func testARunningDigestFedNothingIsTheDigestOfNothing() {
        for function in [DigestFunction.sha256, SecretDigester(key: key).digests] {
            var running = function.begin()
            running.update([UInt8]())
            XCTAssertEqual(running.finish(), function.digest([UInt8]()), function.description)
        }
    }

    func testFinishingASharedRunningDigestLeavesTheOtherCopyGoingOn() {
        let function = SecretDigester(key: key).digests
        var first = function.begin()
        first.update(Array("Hi ".utf8))
        let shared = first
        var adopter = shared
        // Finished while `shared` and `adopter` still hold the same state.
        XCTAssertEqual(first.finish(), function.digest(Array("Hi ".utf8)))
        adopter.update(Array("There".utf8))
        XCTAssertEqual(Encoding.hex(adopter.finish()), rfc4231Case1)
        var again = shared
        XCTAssertEqual(again.finish(), function.digest(Array("Hi ".utf8)))
    }

    func testSameKeySameDigestsOtherKeyOtherDigests() {
        let a = SecretDigester(key: [UInt8](repeating: 1, count: 32)).digests
        let b = SecretDigester(key: [UInt8](repeating: 1, count: 32)).digests
        let other = SecretDigester(key: [UInt8](repeating: 2, count: 32)).digests
        XCTAssertEqual(a, b)
        XCTAssertNotEqual(a, other)
        XCTAssertNotEqual(a, .sha256)
        XCTAssertEqual(a.digest(message), b.digest(message))
        XCTAssertNotEqual(a.digest(message), other.digest(message))
        XCTAssertNotEqual(a.digest(message), SHA256.hash(message))
    }

    func testOneValueDigestsFromManyThreads() {
        let function = SecretDigester(key: key).digests
        let message = message, expected = rfc4231Case1
        DispatchQueue.concurrentPerform(iterations: 64) { index in
            var running = function.begin()
            running.update(message)
            XCTAssertEqual(Encoding.hex(running.finish()), expected)
            XCTAssertEqual(Encoding.hex(function.digest(message)), expected, "iteration \(index)")
        }
    }
}
