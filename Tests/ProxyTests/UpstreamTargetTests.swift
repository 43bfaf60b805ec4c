import HTTP
import XCTest
@testable import Proxy

final class UpstreamTargetTests: XCTestCase {
    func testAuthoritiesParseWithDefaultPortsAndIPv6Brackets() throws {
        let plain = try XCTUnwrap(UpstreamTarget(authority: "Example.TEST", scheme: .https))
        XCTAssertEqual(plain.host, "example.test")
        XCTAssertEqual(plain.port, 443)
        XCTAssertEqual(plain.hostField, "example.test")
        let v6 = try XCTUnwrap(UpstreamTarget(authority: "[::1]:8443", scheme: .https))
        XCTAssertEqual(v6.host, "::1")
        XCTAssertEqual(v6.authority, "[::1]:8443")
        XCTAssertEqual(UpstreamTarget(authority: "h:80", scheme: .http)?.hostField, "h")
    }

    func testBadAuthoritiesAreRejected() {
        for text in ["", "h:", "h:0", "h:65536", "h:x", "user@h:1", "::1:443", "[::1", "h/p", "h:99999999999999999999"] {
            XCTAssertNil(UpstreamTarget(authority: text, scheme: .https), text)
        }
    }

    func testURLsAndModes() throws {
        XCTAssertEqual(UpstreamTarget(url: "https://origin.test:9443/")?.description, "https://origin.test:9443")
        XCTAssertNil(UpstreamTarget(url: "ftp://origin.test"))
        XCTAssertNil(UpstreamTarget(url: "https://origin.test/path"))
        XCTAssertEqual(try ProxyMode(parsing: "forward"), .forward)
        XCTAssertEqual(try ProxyMode(parsing: "reverse:https://127.0.0.1:9443").description, "reverse:https://127.0.0.1:9443")
        XCTAssertThrowsError(try ProxyMode(parsing: "reverse:origin")) { error in
            XCTAssertTrue("\(error)".contains("reverse:https://HOST:PORT"))
        }
        XCTAssertThrowsError(try ProxyMode(parsing: "sideways"))
    }

    func testTheLoopGuardComparesWithTheBoundAddress() {
        let loopback = LoopGuard(listenIP: "127.0.0.1", port: 40000)
        XCTAssertTrue(loopback.refuses(UpstreamTarget(scheme: .https, host: "127.0.0.1", port: 40000)!))
        XCTAssertTrue(loopback.refuses(UpstreamTarget(scheme: .http, host: "localhost", port: 40000)!))
        XCTAssertFalse(loopback.refuses(UpstreamTarget(scheme: .https, host: "127.0.0.1", port: 40001)!))
        XCTAssertFalse(loopback.refuses(UpstreamTarget(scheme: .https, host: "example.test", port: 40000)!))
        let wildcard = LoopGuard(listenIP: "0.0.0.0", port: 8080)
        XCTAssertTrue(wildcard.refuses(UpstreamTarget(scheme: .https, host: "127.0.0.5", port: 8080)!))
        XCTAssertTrue(wildcard.refuses(peerIP: "127.0.0.1", port: 8080))
        XCTAssertFalse(wildcard.refuses(peerIP: "127.0.0.1", port: 8081))
        // A name bound on several addresses (localhost): each of them is the proxy.
        let named = LoopGuard(listenIP: "127.0.0.1", port: 8080, otherListenIPs: ["::1"])
        XCTAssertTrue(named.refuses(UpstreamTarget(scheme: .http, host: "[::1]", port: 8080)!))
        XCTAssertTrue(named.refuses(peerIP: "::1", port: 8080))
        XCTAssertFalse(LoopGuard(listenIP: "127.0.0.1", port: 8080).refuses(peerIP: "::1", port: 8080))
    }

    func testLocalResponsesNameTheErrorInProxyStatus() {
        let error = ProxyError(.tls, at: .upstream(UpstreamTarget(scheme: .https, host: "x", port: 443)!), "certificate \"x\" untrusted\u{1}",
                               status: .tlsCertificateError)
        let answer = LocalResponse(status: 502, error: error)
        XCTAssertEqual(answer.head.fields["Proxy-Status"],
                       "intact; error=tls_certificate_error; details=\"certificate \\\"x\\\" untrusted?\"")
        XCTAssertEqual(answer.head.fields["Content-Length"], String(answer.body.count))
        XCTAssertEqual(answer.parts.count, 3)
    }

    func testHopByHopStripKeepsFramingAndTrailersTE() {
        let fields: HTTPFields = ["Connection": "close, X-A", "X-A": "1", "TE": "trailers", "Keep-Alive": "5",
                                  "Transfer-Encoding": "chunked", "Accept": "*/*"]
        XCTAssertEqual(HopByHop.strip(fields).map(\.name), ["TE", "Transfer-Encoding", "Accept"])
    }
}
