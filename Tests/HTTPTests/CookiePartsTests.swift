import XCTest
import HTTP

final class CookiePartsTests: XCTestCase {
    func testSetCookieSplitsIntoNameValueAndAttributes() {
        let parts = CookieParts.setCookie("JSESSIONID=abc; Path=/suite; Secure; HttpOnly; ")
        XCTAssertEqual(parts, CookieParts(name: "JSESSIONID", value: "abc", attributes: ["Path=/suite", "Secure", "HttpOnly"]))
        XCTAssertFalse(parts.isOpaque)
    }

    func testMalformedSetCookieIsOneOpaquePartKeptVerbatim() {
        for line in ["JSESSIONID=abc; Path=/suite; =bad", "JSESSIONID=abc;; Secure", "JSESSIONID=abc; Max Age=3",
                     "noequals; Path=/", "=abc; Path=/"] {
            let parts = CookieParts.setCookie(line)
            XCTAssertTrue(parts.isOpaque, line)
            XCTAssertEqual(parts.value, line, "kept verbatim")
            XCTAssertEqual(parts.attributes, [])
        }
        XCTAssertEqual(CookieParts.setCookie("JSESSIONID=abc; =bad").name, "JSESSIONID")
        XCTAssertEqual(CookieParts.setCookie("secretwithoutname; Path=/").name, "", "a pair without = is never taken as a name")
    }

    func testCookieFieldSplitsIntoCrumbs() {
        XCTAssertEqual(CookieParts.cookie("JSESSIONID=a; SERVERID=s1;lb=x"),
                       [CookieParts(name: "JSESSIONID", value: "a"), CookieParts(name: "SERVERID", value: "s1"),
                        CookieParts(name: "lb", value: "x")])
        XCTAssertEqual(CookieParts.cookie("flag").first?.isOpaque, true)
    }

    func testRedactedKeepsNameAndAttributesInClear() {
        let parts = CookieParts.setCookie("JSESSIONID=abc; Path=/suite").redacted { "digest(\($0))" }
        XCTAssertEqual(parts, CookieParts(name: "JSESSIONID", value: "digest(abc)", attributes: ["Path=/suite"]))
    }

    private func compare(_ before: [String], _ after: [String], secret: Bool = false) -> [String] {
        CookieChange.compare(before.map(CookieParts.setCookie), after.map(CookieParts.setCookie)) { _ in secret }.map(\.description)
    }

    func testEachPartIsComparedByName() {
        let jsession = "JSESSIONID=abc; Path=/suite; Secure; HttpOnly"
        XCTAssertEqual(compare([jsession], [jsession]), [])
        XCTAssertEqual(compare([jsession], [jsession + "; SameSite=None"]), ["JSESSIONID: attribute SameSite=None added"])
        XCTAssertEqual(compare([jsession], ["JSESSIONID=abc; Path=/; Secure; HttpOnly"]), ["JSESSIONID: Path changed (/suite → /)"])
        XCTAssertEqual(compare([jsession], ["JSESSIONID=abc; Path=/suite; Secure"]), ["JSESSIONID: attribute HttpOnly removed"])
        XCTAssertEqual(compare([jsession], ["JSESSIONID=xyz; Path=/suite; Secure; HttpOnly"], secret: true),
                       ["JSESSIONID: value changed (secret)"])
        XCTAssertEqual(compare([jsession], ["JSESSIONID=xyz; Path=/suite; Secure; HttpOnly"]),
                       ["JSESSIONID: value changed (abc → xyz)"])
        XCTAssertEqual(compare([jsession], [jsession, "SERVERID=s1; path=/"]), ["SERVERID added"])
        XCTAssertEqual(compare([jsession, "lb=1"], [jsession]), ["lb removed"])
        XCTAssertEqual(compare(["a=1", "b=2"], ["b=2", "a=1"]), [], "compared as a set by name")
        XCTAssertEqual(compare([jsession], ["JSESSIONID=abc; Path=/suite; Secure; HttpOnly; =x"]),
                       ["JSESSIONID changed (malformed Set-Cookie, kept verbatim and compared as one opaque part)"])
    }
}
