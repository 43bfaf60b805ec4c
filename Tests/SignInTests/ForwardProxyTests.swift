import XCTest
@testable import SignIn

final class ForwardProxyTests: XCTestCase {
    func testParsesTheFormsHTTPSProxyTakes() {
        XCTAssertEqual(ForwardProxy("http://127.0.0.1:8080"), ForwardProxy(host: "127.0.0.1", port: 8080))
        XCTAssertEqual(ForwardProxy("HTTP://proxy.test:3128/"), ForwardProxy(host: "proxy.test", port: 3128))
        XCTAssertEqual(ForwardProxy("proxy.test:1"), ForwardProxy(host: "proxy.test", port: 1))
        XCTAssertEqual(ForwardProxy("http://[::1]:8080"), ForwardProxy(host: "::1", port: 8080))
        XCTAssertEqual(ForwardProxy(host: "::1", port: 8080).description, "http://[::1]:8080")
    }

    func testRejectsWhatItCannotUse() {
        for text in ["https://p.test:1", "socks5://p.test:1", "p.test", "http://p.test", "http://u:pw@p.test:1",
                     "http://p.test:1/path", "http://p.test:0", "http://p.test:70000", "::1:8080", ":8080"] {
            XCTAssertNil(ForwardProxy(text), text)
        }
    }

    func testNoProxyMatchesHostsAndDomainSuffixes() {
        XCTAssertTrue(ForwardProxy.isExempt(host: "127.0.0.1", noProxy: "localhost,127.0.0.1"))
        XCTAssertTrue(ForwardProxy.isExempt(host: "api.mysite.test", noProxy: ".mysite.test"))
        XCTAssertTrue(ForwardProxy.isExempt(host: "api.mysite.test", noProxy: "mysite.test:443"))
        XCTAssertTrue(ForwardProxy.isExempt(host: "anything", noProxy: "*"))
        XCTAssertTrue(ForwardProxy.isExempt(host: "::1", noProxy: "[::1]"))
        XCTAssertFalse(ForwardProxy.isExempt(host: "notmysite.test", noProxy: "mysite.test"))
        XCTAssertFalse(ForwardProxy.isExempt(host: "mysite.test", noProxy: ""))
    }
}
