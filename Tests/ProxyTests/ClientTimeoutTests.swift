import Evidence
import Foundation
import Glibc
import Proxy
import XCTest

/// The client timeouts and the per-address connection limit through a real
/// proxy, with small values.
final class ClientTimeoutTests: XCTestCase {
    /// Seconds until the proxy closes `fd` (reading what it sends meanwhile), at most `limit`.
    private func secondsUntilClosed(_ fd: Int32, limit: Int = 10) -> (seconds: Double, received: String) {
        var timeout = timeval(tv_sec: limit, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let started = Date()
        let bytes = RawSocket.readAll(fd)
        return (Date().timeIntervalSince(started), String(decoding: bytes, as: UTF8.self))
    }

    func testASlowHeadIsAnswered408AndRecorded() throws {
        let proxy = try ProxyHarness { $0.clientTimeouts.head = .seconds(1) }
        let fd = try XCTUnwrap(RawSocket.connect(port: proxy.port))
        defer { close(fd) }
        RawSocket.send(fd, Array("GET http://127.0.0.1:1/slow HTTP/1.1\r\nHo".utf8))
        let (seconds, answer) = secondsUntilClosed(fd)
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 408 "), answer)
        XCTAssertTrue(answer.contains("did not complete within 1 s"), answer)
        XCTAssertLessThan(seconds, 5)
        let record = try XCTUnwrap(proxy.stopAndRead().records.first)
        XCTAssertEqual(record.leg(.downstream)?.response?.status, 408)
        XCTAssertEqual(record.error?.message, "the request head did not complete within 1 s")
    }

    func testAnIdleConnectionIsClosedAfterTheIdleTimeout() throws {
        let proxy = try ProxyHarness { $0.clientTimeouts.idle = .seconds(1) }
        let fd = try XCTUnwrap(RawSocket.connect(port: proxy.port))
        defer { close(fd) }
        let (seconds, answer) = secondsUntilClosed(fd)
        XCTAssertEqual(answer, "")
        XCTAssertGreaterThanOrEqual(seconds, 0.9)
        XCTAssertLessThan(seconds, 5)
        // A keep-alive connection after its exchange goes the same way.
        let origin = try RawOrigin(.answer("HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n"))
        defer { origin.stop() }
        let again = try XCTUnwrap(RawSocket.connect(port: proxy.port))
        defer { close(again) }
        RawSocket.send(again, Array("GET http://127.0.0.1:\(origin.port)/ HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\r\n".utf8))
        let (afterExchange, text) = secondsUntilClosed(again)
        XCTAssertTrue(text.hasPrefix("HTTP/1.1 204 "), text)
        XCTAssertLessThan(afterExchange, 5)
    }

    func testABodyThatStopsCutsTheConnectionAndRecordsWhy() throws {
        let origin = try RawOrigin(.swallow)
        defer { origin.stop() }
        let proxy = try ProxyHarness { $0.clientTimeouts.body = .seconds(1) }
        let fd = try XCTUnwrap(RawSocket.connect(port: proxy.port))
        defer { close(fd) }
        RawSocket.send(fd, Array(("POST http://127.0.0.1:\(origin.port)/upload HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n"
                                  + "Content-Length: 10\r\n\r\nhello").utf8))
        let (seconds, _) = secondsUntilClosed(fd)
        XCTAssertLessThan(seconds, 5)
        for _ in 0..<250 where origin.connectionsClosedAfterHead < origin.requestHeads.filter { !$0.isEmpty }.count { usleep(20_000) }
        XCTAssertEqual(origin.connectionsClosedAfterHead, origin.requestHeads.filter { !$0.isEmpty }.count, "the upstream connection was closed too")
        let record = try XCTUnwrap(proxy.stopAndRead().records.first)
        XCTAssertEqual(record.error?.kind, .timeout)
        XCTAssertTrue(record.error?.message.contains("--body-timeout") == true, "\(String(describing: record.error))")
    }

    func testConnectionsBeyondThePerClientLimitAreRefused() throws {
        let proxy = try ProxyHarness { $0.maxClientConnections = 2 }
        let first = try XCTUnwrap(RawSocket.connect(port: proxy.port))
        let second = try XCTUnwrap(RawSocket.connect(port: proxy.port))
        defer { close(second) }
        usleep(200_000)
        let third = try XCTUnwrap(RawSocket.connect(port: proxy.port))
        defer { close(third) }
        let (seconds, answer) = secondsUntilClosed(third, limit: 5)
        XCTAssertEqual(answer, "")
        XCTAssertLessThan(seconds, 2, "refused at once")
        close(first)
        usleep(300_000)
        let fourth = try XCTUnwrap(RawSocket.connect(port: proxy.port))
        defer { close(fourth) }
        RawSocket.send(fourth, Array("GET http://127.0.0.1:\(proxy.port)/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
        let (_, served) = secondsUntilClosed(fourth, limit: 5)
        XCTAssertTrue(served.hasPrefix("HTTP/1.1 "), "a slot freed up: \(served)")
    }
}
