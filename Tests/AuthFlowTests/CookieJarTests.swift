import Foundation
import HTTP
import XCTest
@testable import AuthFlow

final class CookieJarTests: XCTestCase {
    private let now = Date(timeIntervalSince1970: 1_700_000_000)
    private let suite = AbsoluteURL("https://mysite.test:8443/suite/mobileAuthTokenConsumer")!

    func testParsesEveryAttribute() throws {
        let c = try XCTUnwrap(SetCookie(parsing: " JSESSIONID = abc ; path=/suite; DOMAIN=.Example.test; Max-Age=60; Expires=Wed, 21 Oct 2015 07:28:00 GMT; secure; HttpOnly; SameSite=Lax; Partitioned"))
        XCTAssertEqual(c.name, "JSESSIONID")
        XCTAssertEqual(c.value, "abc")
        XCTAssertEqual(c.path, "/suite")
        XCTAssertEqual(c.domain, "example.test")
        XCTAssertEqual(c.maxAge, 60)
        XCTAssertEqual(c.expires, Date(timeIntervalSince1970: 1_445_412_480))
        XCTAssertTrue(c.secure)
        XCTAssertTrue(c.httpOnly)
        XCTAssertEqual(c.sameSite, "Lax")
        XCTAssertEqual(c.otherAttributes, ["Partitioned"])
        // Max-Age wins over Expires.
        XCTAssertEqual(c.expiry(receivedAt: now), now.addingTimeInterval(60))
    }

    func testRejectsFieldsWithoutACookieAndIgnoresBadAttributes() {
        XCTAssertNil(SetCookie(parsing: "novalue"))
        XCTAssertNil(SetCookie(parsing: "=x; Path=/"))
        let c = SetCookie(parsing: "a=b; Max-Age=soon; Expires=never; Path=relative")
        XCTAssertNotNil(c)
        XCTAssertNil(c?.maxAge)
        XCTAssertNil(c?.expires)
        XCTAssertNil(c?.path)
        XCTAssertEqual(SetCookie(parsing: "a=")?.value, "")
    }

    func testCookieDatesInTheUsualForms() {
        let expected = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT
        XCTAssertEqual(CookieDate.parse("Sun, 06 Nov 1994 08:49:37 GMT"), expected)
        XCTAssertEqual(CookieDate.parse("Sunday, 06-Nov-94 08:49:37 GMT"), expected)
        XCTAssertEqual(CookieDate.parse("Sun Nov  6 08:49:37 1994"), expected)
        XCTAssertEqual(CookieDate.format(expected), "Sun, 06 Nov 1994 08:49:37 GMT")
        XCTAssertNil(CookieDate.parse("Sun, 32 Nov 1994 08:49:37 GMT"))
        XCTAssertNil(CookieDate.parse("yesterday"))
    }

    func testSerializedRoundTrips() {
        let c = SetCookie(name: "JSESSIONID", value: "x", path: "/suite", maxAge: 0, secure: true, httpOnly: true)
        XCTAssertEqual(c.serialized, "JSESSIONID=x; Path=/suite; Max-Age=0; Secure; HttpOnly")
        XCTAssertEqual(SetCookie(parsing: c.serialized), c)
    }

    func testStoresAndSendsByPathAndHost() {
        var jar = CookieJar()
        XCTAssertEqual(jar.receive(setCookie: "JSESSIONID=s1; Path=/suite; Secure; HttpOnly", from: suite, now: now), .stored(name: "JSESSIONID"))
        jar.receive(setCookie: "root=r; Path=/", from: suite, now: now)
        jar.receive(setCookie: "deflt=d", from: suite, now: now)  // default path: /suite
        XCTAssertEqual(jar.cookies.first { $0.name == "deflt" }?.path, "/suite")
        XCTAssertEqual(jar.cookieHeader(for: AbsoluteURL("https://mysite.test:8443/suite/rest/x")!, now: now), "JSESSIONID=s1; deflt=d; root=r")
        XCTAssertEqual(jar.cookieHeader(for: AbsoluteURL("https://mysite.test/suite")!, now: now), "JSESSIONID=s1; deflt=d; root=r",
                       "cookies ignore the port")
        XCTAssertEqual(jar.cookieHeader(for: AbsoluteURL("https://mysite.test/suitex")!, now: now), "root=r")
        XCTAssertNil(jar.cookieHeader(for: AbsoluteURL("https://other.test/suite/rest")!, now: now))
        XCTAssertNil(jar.cookieHeader(for: AbsoluteURL("https://sub.mysite.test/suite")!, now: now), "host-only")
        XCTAssertEqual(jar.cookieHeader(for: AbsoluteURL("http://mysite.test/suite")!, now: now), "deflt=d; root=r", "Secure needs https")
    }

    func testDomainCookiesAndDomainMismatch() {
        var jar = CookieJar()
        let url = AbsoluteURL("https://app.example.test/suite")!
        XCTAssertEqual(jar.receive(setCookie: "d=1; Domain=example.test; Path=/", from: url, now: now), .stored(name: "d"))
        XCTAssertEqual(jar.cookieHeader(for: AbsoluteURL("https://other.example.test/")!, now: now), "d=1")
        XCTAssertEqual(jar.receive(setCookie: "x=1; Domain=evil.test", from: url, now: now),
                       .rejected(name: "x", reason: "Domain=evil.test does not match host app.example.test"))
        XCTAssertEqual(jar.receive(setCookie: "s=1; Secure", from: AbsoluteURL("http://app.example.test/")!, now: now),
                       .rejected(name: "s", reason: "Secure cookie set over http"))
        XCTAssertEqual(jar.receive(setCookie: "garbage", from: url, now: now), .unparsable(field: "garbage"))
        XCTAssertEqual(jar.cookies.map(\.name), ["d"])
    }

    func testMaxAgeZeroDeletesAndExpiryIsHonoured() {
        var jar = CookieJar()
        jar.receive(setCookie: "JSESSIONID=s1; Path=/suite", from: suite, now: now)
        jar.receive(setCookie: "short=1; Path=/suite; Max-Age=10", from: suite, now: now)
        XCTAssertEqual(jar.receive(setCookie: "JSESSIONID=; Max-Age=0; Path=/suite", from: suite, now: now), .deleted(name: "JSESSIONID"))
        XCTAssertEqual(jar.cookies.map(\.name), ["short"])
        XCTAssertEqual(jar.cookieHeader(for: suite, now: now.addingTimeInterval(9)), "short=1")
        XCTAssertNil(jar.cookieHeader(for: suite, now: now.addingTimeInterval(10)))
        jar.receive(setCookie: "old=1; Path=/suite; Expires=Wed, 21 Oct 2015 07:28:00 GMT", from: suite, now: now)
        XCTAssertFalse(jar.cookies.contains { $0.name == "old" })
    }

    func testReplacingKeepsCreationTimeAndOrder() {
        var jar = CookieJar()
        jar.receive(setCookie: "a=1; Path=/", from: suite, now: now)
        jar.receive(setCookie: "b=1; Path=/", from: suite, now: now.addingTimeInterval(1))
        jar.receive(setCookie: "a=2; Path=/", from: suite, now: now.addingTimeInterval(2))
        XCTAssertEqual(jar.cookieHeader(for: suite, now: now.addingTimeInterval(3)), "a=2; b=1")
        XCTAssertEqual(jar.value(of: "a", for: suite, now: now), "2")
        jar.removeAll()
        XCTAssertTrue(jar.cookies.isEmpty)
    }

    func testReceivesEveryFieldOfAResponse() {
        var jar = CookieJar()
        let head = HTTPResponseHead(status: 200, fields: ["Set-Cookie": "a=1; Path=/suite", "set-cookie": "b=2; Path=/suite"])
        XCTAssertEqual(jar.receive(head, from: suite, now: now), [.stored(name: "a"), .stored(name: "b")])
    }

    func testParsesRequestCookieFieldsAndCrumbs() {
        let fields: HTTPFields = ["Cookie": "a=1; b = 2", "cookie": "c=3;noeq; d="]
        let pairs = CookieJar.parseCookieHeader(fields)
        XCTAssertEqual(pairs.map(\.name), ["a", "b", "c", "d"])
        XCTAssertEqual(pairs.map(\.value), ["1", "2", "3", ""])
    }
}
