import XCTest
@testable import AuthFlow

final class PKCETests: XCTestCase {
    func testRFC7636AppendixB() {
        XCTAssertEqual(PKCE.challenge(for: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
                       "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        XCTAssertTrue(PKCE.verify(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
                                  against: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"))
    }

    func testFreshVerifiersAre43Base64URLCharactersAndDiffer() {
        let a = PKCE.makeVerifier()
        let b = PKCE.makeVerifier()
        XCTAssertEqual(a.count, 43)
        XCTAssertNotEqual(a, b)
        XCTAssertTrue(PKCE.isWellFormedVerifier(a))
        XCTAssertTrue(PKCE.isWellFormedChallenge(PKCE.challenge(for: a)))
    }

    func testChallengeShape() {
        XCTAssertTrue(PKCE.isWellFormedChallenge("zWNaqbvS3TXav7Kq4TNtwT196dIIB3yS50JG2TrzKkQ"))
        XCTAssertFalse(PKCE.isWellFormedChallenge("zWNaqbvS3TXav7Kq4TNtwT196dIIB3yS50JG2TrzKk"))
        XCTAssertFalse(PKCE.isWellFormedChallenge("zWNaqbvS3TXav7Kq4TNtwT196dIIB3yS50JG2TrzKkQ="))
        XCTAssertFalse(PKCE.isWellFormedChallenge("zWNaqbvS3TXav7Kq4TNtwT196dIIB3yS50JG2Trz+/Q"))
        XCTAssertFalse(PKCE.isWellFormedChallenge(""))
    }

    func testVerifyRejectsMalformedOrWrongVerifiers() {
        let challenge = PKCE.challenge(for: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        XCTAssertFalse(PKCE.verify(verifier: PKCE.makeVerifier(), against: challenge))
        XCTAssertFalse(PKCE.verify(verifier: "short", against: PKCE.challenge(for: "short")))
        XCTAssertFalse(PKCE.isWellFormedVerifier(String(repeating: "a", count: 129)))
        XCTAssertTrue(PKCE.isWellFormedVerifier(String(repeating: "a.~", count: 15)))
    }
}
