import Evidence
import XCTest

/// The hardening issue's loop spellings through a real forward proxy: every
/// CONNECT and absolute-form request naming the proxy itself, however
/// written, is answered 502 `proxy_loop_detected` and never reaches it again.
final class ProxyLoopSpellingTests: XCTestCase {
    /// As the issue wrote them, in authority form (IPv6 in brackets).
    static let authorities = ["127.0.0.1", "localhost", "127.1", "2130706433", "0x7f000001", "0.0.0.0",
                              "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[::127.0.0.1]"]

    func testEverySpellingOfTheProxyItselfIsRefusedAsALoop() throws {
        let proxy = try ProxyHarness()
        for host in Self.authorities {
            let authority = "\(host):\(proxy.port)"
            let tunnel = try XCTUnwrap(RawSocket.exchange(port: proxy.port,
                                                          "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n\r\n"))
            XCTAssertTrue(tunnel.hasPrefix("HTTP/1.1 502 "), "CONNECT \(authority): \(tunnel)")
            XCTAssertTrue(tunnel.contains("error=proxy_loop_detected"), "CONNECT \(authority): \(tunnel)")
            let plain = try XCTUnwrap(RawSocket.exchange(port: proxy.port,
                "GET http://\(authority)/x HTTP/1.1\r\nHost: \(authority)\r\nConnection: close\r\n\r\n"))
            XCTAssertTrue(plain.hasPrefix("HTTP/1.1 502 "), "GET http://\(authority)/x: \(plain)")
            XCTAssertTrue(plain.contains("error=proxy_loop_detected"), "GET http://\(authority)/x: \(plain)")
        }
        let records = try proxy.stopAndRead().records
        XCTAssertEqual(records.count, 2 * Self.authorities.count, "no looped request reached the proxy again")
        XCTAssertTrue(records.allSatisfy { $0.leg(.upstream) == nil })
        XCTAssertTrue(records.allSatisfy { $0.error?.message.contains("refused to avoid a loop") == true })
    }
}
