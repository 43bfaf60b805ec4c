import Evidence
import HTTP
import IntactTestSupport
import Proxy
import XCTest

/// The hardening issue's stuck upstream, on the playbook: a chunked POST
/// whose invalid chunk size arrives after its head went to an HTTP/1.1
/// origin (which now waits for the body) is refused (400), and the upstream
/// connection must be closed, not left busy in the pool: eight of them used
/// to fill the pool (8 per target) and hang every later request.
final class StuckUpstreamTests: XCTestCase {
    static let head = "POST http://origin.test/upload HTTP/1.1\r\nHost: origin.test\r\nTransfer-Encoding: chunked\r\n\r\n"
    static let badChunk = "ffffffffffffffffff\r\n"

    func testRefusedChunkedRequestsCloseTheirUpstreamConnections() throws {
        let playbook = try ProxyPlaybook()
        let attempts = 10 // more than the pool's 8 connections per target
        for n in 0..<attempts {
            let client = try playbook.connectClient()
            client.send(Self.head)
            // Each attempt dials: a connection left busy by an earlier one would leave the pool full.
            let origin = try playbook.acceptDial(host: "origin.test", port: 80)
            XCTAssertTrue(origin.readText().hasPrefix("POST /upload HTTP/1.1\r\n"), "request \(n): the head went upstream")
            client.send(Self.badChunk)
            playbook.run()
            let answer = client.readText()
            XCTAssertTrue(answer.hasPrefix("HTTP/1.1 400 "), "request \(n): \(answer)")
            XCTAssertTrue(origin.isClosed, "request \(n): the upstream connection waiting for a body was left open")
        }
        // Head and bad chunk in one write: refused before the upstream connection is
        // there; the connection dialled for it carries no head and joins the pool clean.
        let client = try playbook.connectClient()
        client.send(Self.head + Self.badChunk)
        playbook.run()
        let answer = client.readText()
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 400 "), answer)
        if playbook.network.dials.isEmpty == false {
            let origin = try playbook.acceptDial(host: "origin.test", port: 80)
            XCTAssertEqual(origin.read(), [], "no head went out on the connection")
        }

        // Each refused request: the malformed-request record (the 400) and its exchange, ended by the error.
        let records = playbook.records
        XCTAssertEqual(records.count, 2 * (attempts + 1))
        XCTAssertEqual(records.filter { $0.leg(.downstream)?.response?.status == 400 }.count, attempts + 1)
        for record in records {
            XCTAssertEqual(record.error?.kind, .protocolError, "\(record.exchangeID)")
            XCTAssertTrue(record.error?.message.contains("chunk size") == true, "\(record.exchangeID)")
            if let sent = record.leg(.upstream)?.request {
                XCTAssertFalse(sent.complete, "the upstream leg shows the request was cut off")
            }
        }
    }
}
