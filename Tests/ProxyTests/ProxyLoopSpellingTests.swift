import Evidence
import IntactTestSupport
import XCTest

/// The hardening issue's loop spellings through the forward proxy, on the
/// playbook (listening at 127.0.0.1:8080 of its network): every CONNECT and
/// absolute-form request naming the proxy itself, however written, is
/// answered 502 `proxy_loop_detected` and never reaches it again (nothing is dialled).
final class ProxyLoopSpellingTests: XCTestCase {
    /// As the issue wrote them, in authority form (IPv6 in brackets).
    static let authorities = ["127.0.0.1", "localhost", "127.1", "2130706433", "0x7f000001", "0.0.0.0",
                              "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[::127.0.0.1]"]

    func testEverySpellingOfTheProxyItselfIsRefusedAsALoop() throws {
        let playbook = try ProxyPlaybook()
        for host in Self.authorities {
            let authority = "\(host):\(playbook.address.port)"
            for request in ["CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n\r\n",
                            "GET http://\(authority)/x HTTP/1.1\r\nHost: \(authority)\r\nConnection: close\r\n\r\n"] {
                let client = try playbook.connectClient()
                client.send(request)
                playbook.run()
                let answer = client.readText()
                let line = request.components(separatedBy: " HTTP/1.1")[0]
                XCTAssertTrue(answer.hasPrefix("HTTP/1.1 502 "), "\(line): \(answer)")
                XCTAssertTrue(answer.contains("error=proxy_loop_detected"), "\(line): \(answer)")
            }
        }
        XCTAssertTrue(playbook.network.dials.isEmpty, "nothing was dialled")
        let records = playbook.records
        XCTAssertEqual(records.count, 2 * Self.authorities.count, "no looped request reached the proxy again")
        XCTAssertTrue(records.allSatisfy { $0.leg(.upstream) == nil })
        XCTAssertTrue(records.allSatisfy { $0.error?.message.contains("refused to avoid a loop") == true })
    }
}
