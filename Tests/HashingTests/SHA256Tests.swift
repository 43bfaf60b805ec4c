import XCTest
import Hashing

final class SHA256Tests: XCTestCase {
    func testKnownVectors() {
        XCTAssertEqual(Encoding.hex(SHA256.hash("")),
                       "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertEqual(Encoding.hex(SHA256.hash("abc")),
                       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    func testIncrementalEqualsOneShotAndCopiesFork() {
        var hasher = SHA256()
        hasher.update(Array("a".utf8))
        var fork = hasher
        hasher.update(Array("bc".utf8))
        XCTAssertEqual(hasher.finalize(), SHA256.hash("abc"))
        fork.update("b")
        XCTAssertEqual(fork.finalize(), SHA256.hash("ab"))
    }

    func testHexRoundTripAndRejects() {
        XCTAssertEqual(Encoding.fromHex("00ff10"), [0, 255, 16])
        XCTAssertEqual(Encoding.fromHex("ABcd"), [0xab, 0xcd])
        XCTAssertNil(Encoding.fromHex("abc"))
        XCTAssertNil(Encoding.fromHex("zz"))
    }

    func testBase64URLMatchesRFC7636AppendixB() {
        // RFC 7636 Appendix B: the verifier's octets and the resulting challenge.
        let octets: [UInt8] = [116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173,
                               187, 186, 22, 212, 37, 77, 105, 214, 191, 240, 91, 88, 5, 88, 83,
                               132, 141, 121]
        let verifier = Encoding.base64URL(octets)
        XCTAssertEqual(verifier, "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        XCTAssertEqual(Encoding.base64URL(SHA256.hash(verifier)), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        XCTAssertEqual(Encoding.base64URL([0xfb]), "-w")
        XCTAssertEqual(Encoding.base64URL([0xfb, 0xff]), "-_8")
    }

    func testSecureRandomLengthAndVariety() {
        XCTAssertEqual(SecureRandom.bytes(32).count, 32)
        XCTAssertNotEqual(SecureRandom.bytes(32), SecureRandom.bytes(32))
    }
}
