@testable import Transport
import HTTP
import XCTest

/// The CONNECT exchange with a forward proxy, without sockets.
final class ProxyConnectHandshakeTests: XCTestCase {
    func testRequestNamesTheAuthority() throws {
        let handshake = try ProxyConnectHandshake(authority: "example.test:443")
        XCTAssertEqual(String(decoding: handshake.request, as: UTF8.self),
                       "CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\n\r\n")
    }

    func testCredentialsGoInProxyAuthorization() throws {
        let proxy = try XCTUnwrap(HTTPProxyAddress(url: "http://ann:p%40ss@127.0.0.1:3128/"))
        XCTAssertEqual(proxy.description, "http://127.0.0.1:3128", "credentials never shown")
        let handshake = try ProxyConnectHandshake(authority: "example.test:443", authorization: proxy.authorization)
        XCTAssertEqual(String(decoding: handshake.request, as: UTF8.self),
                       "CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\n"
                       + "Proxy-Authorization: Basic YW5uOnBAc3M=\r\n\r\n")
    }

    func testProxyURLsParseStrictly() {
        XCTAssertEqual(HTTPProxyAddress(url: "[::1]:8080"), HTTPProxyAddress(host: "::1", port: 8080))
        XCTAssertEqual(HTTPProxyAddress(url: "http://proxy.test:3128"), HTTPProxyAddress(host: "proxy.test", port: 3128))
        for bad in ["https://p.test:3128", "http://p.test", "http://p.test:0", "http://p.test:3128/path", "http://user@p.test:1",
                    "http://:pw@p.test:1", "::1:8080", "socks5://p.test:1080"] {
            XCTAssertNil(HTTPProxyAddress(url: bad), bad)
        }
        XCTAssertTrue(HTTPProxyAddress.isExempt(host: "api.corp.test", noProxy: "localhost, .corp.test"))
        XCTAssertFalse(HTTPProxyAddress.isExempt(host: "corp.test.evil", noProxy: ".corp.test"))
    }

    func testTwoHundredOpensTheTunnelWithTheBytesAfterTheHead() throws {
        var handshake = try ProxyConnectHandshake(authority: "example.test:443")
        XCTAssertEqual(handshake.receive(Array("HTTP/1.1 200 Connection est".utf8)), .needMoreBytes)
        XCTAssertEqual(handshake.receive(Array("ablished\r\nVia: test\r\n\r\n\u{16}\u{3}".utf8)),
                       .tunnel(leftover: [0x16, 0x03]))
    }

    func testOtherStatusesRefuse() throws {
        var handshake = try ProxyConnectHandshake(authority: "example.test:443")
        guard case .refused(let head) = handshake.receive(Array("HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n".utf8)) else {
            return XCTFail("expected a refusal")
        }
        XCTAssertEqual(head.status, 407)
    }

    func testGarbageIsMalformedAndBadAuthoritiesAreRejected() throws {
        var handshake = try ProxyConnectHandshake(authority: "example.test:443")
        guard case .malformed = handshake.receive(Array("SSH-2.0-OpenSSH\r\n\r\n".utf8)) else {
            return XCTFail("expected a parse error")
        }
        XCTAssertThrowsError(try ProxyConnectHandshake(authority: "bad host:1"))
    }
}
