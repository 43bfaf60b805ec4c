import Evidence
import Foundation
import HTTP
import Proxy
import XCTest

/// The hardening issue's stuck upstream: a chunked POST whose head and
/// invalid chunk size arrive in one write is refused (400) after its head
/// went to an HTTP/1.1 origin that now waits for the body. The upstream
/// connection must be closed, not left busy in the pool: eight of them used
/// to fill the pool (8 per target) and hang every later request.
final class StuckUpstreamTests: XCTestCase {
    /// The refused request, head and bad chunk size in one write, through a forward proxy to `port`.
    static func badChunk(to port: Int) -> String {
        "POST http://127.0.0.1:\(port)/upload HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "ffffffffffffffffff\r\n"
    }

    func testRefusedChunkedRequestsCloseTheirUpstreamConnections() throws {
        let origin = try RawOrigin(.swallow)
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let attempts = 10 // more than the pool's 8 connections per target
        for n in 0..<attempts {
            let started = Date()
            let answer = try XCTUnwrap(RawSocket.exchange(port: proxy.port, Self.badChunk(to: origin.port)), "request \(n)")
            XCTAssertTrue(answer.hasPrefix("HTTP/1.1 400 "), "request \(n): \(answer)")
            XCTAssertLessThan(Date().timeIntervalSince(started), 5, "request \(n) waited for the pool")
        }
        // Every connection that carried a head was closed: none waits for a body. (Others may stay idle in the pool.)
        for _ in 0..<250 where origin.connectionsClosedAfterHead < origin.requestHeads.filter({ !$0.isEmpty }).count { usleep(20_000) }
        // (Whether a head reached the origin depends on the race between the upstream connect and the
        // refusal; before the fix every head did, and all eight connections stayed busy.)
        XCTAssertEqual(origin.connectionsClosedAfterHead, origin.requestHeads.filter { !$0.isEmpty }.count, "an upstream connection was left busy")

        // Each refused request: the malformed-request record (the 400) and its exchange, ended by the error.
        let records = try proxy.stopAndRead().records
        XCTAssertEqual(records.count, 2 * attempts)
        XCTAssertEqual(records.filter { $0.leg(.downstream)?.response?.status == 400 }.count, attempts)
        for record in records {
            XCTAssertEqual(record.error?.kind, .protocolError, "\(record.exchangeID)")
            XCTAssertTrue(record.error?.message.contains("chunk size") == true, "\(record.exchangeID)")
            if let sent = record.leg(.upstream)?.request {
                XCTAssertFalse(sent.complete, "the upstream leg shows the request was cut off")
            }
        }
    }
}
