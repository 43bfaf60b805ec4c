import Evidence
import Foundation
import Glibc
import IntactTestSupport
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
        for _ in 0..<250 where origin.connectionsClosedAfterHead < origin.requestHeads.filter({ !$0.isEmpty }).count { usleep(20_000) }
        XCTAssertEqual(origin.connectionsClosedAfterHead, origin.requestHeads.filter { !$0.isEmpty }.count, "the upstream connection was closed too")
        let record = try XCTUnwrap(proxy.stopAndRead().records.first)
        XCTAssertEqual(record.error?.kind, .timeout)
        XCTAssertTrue(record.error?.message.contains("--body-timeout") == true, "\(String(describing: record.error))")
    }

    /// The frame types in `bytes`, read as the server's side of an HTTP/2 connection, with each payload.
    private func http2Frames(_ bytes: [UInt8]) -> [(type: UInt8, payload: ArraySlice<UInt8>)] {
        var frames: [(type: UInt8, payload: ArraySlice<UInt8>)] = []
        var at = 0
        while at + 9 <= bytes.count {
            let length = Int(bytes[at]) << 16 | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2])
            guard at + 9 + length <= bytes.count else { break }
            frames.append((bytes[at + 3], bytes[(at + 9)..<(at + 9 + length)]))
            at += 9 + length
        }
        return frames
    }

    func testAnIdleHTTP2ConnectionGetsGoAwayThenIsClosed() throws {
        let upstream = try XCTUnwrap(UpstreamTarget(scheme: .http, host: "127.0.0.1", port: 1))
        let proxy = try ProxyHarness(mode: .reverse(upstream)) { $0.clientTimeouts.idle = .seconds(1) }
        // A raw HTTP/2 client: the preface and an empty SETTINGS frame, then no stream at all.
        let output = proxy.directory + "/h2-idle"
        let started = Date()
        let run = try ToolRun.run("/bin/sh", ["-c", "printf 'PRI * HTTP/2.0\\r\\n\\r\\nSM\\r\\n\\r\\n\\000\\000\\000\\004\\000\\000\\000\\000\\000'"
                                              + " | openssl s_client -quiet -alpn h2 -connect 127.0.0.1:\(proxy.port) -servername localhost"
                                              + " -CAfile '\(proxy.caFile)' > '\(output)'"], timeout: 20)
        let seconds = Date().timeIntervalSince(started)
        XCTAssertGreaterThanOrEqual(seconds, 0.9, run.error)
        XCTAssertLessThan(seconds, 10, "closed after the GOAWAY")
        let frames = http2Frames(Array(try Data(contentsOf: URL(fileURLWithPath: output))))
        let goAway = try XCTUnwrap(frames.first { $0.type == 0x7 }, "frame types \(frames.map(\.type)) \(run.error)")
        XCTAssertEqual(Array(goAway.payload.dropFirst(4).prefix(4)), [0, 0, 0, 0], "NO_ERROR")
        XCTAssertEqual(frames.last?.type, 0x7, "nothing after the GOAWAY")
    }

    func testAStalledHTTP2StreamIsResetWhileItsSiblingCompletes() throws {
        let origin = try RawOrigin(.answerUnless(stallOn: "/slow", text: "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nfast"))
        defer { origin.stop() }
        let upstream = try XCTUnwrap(UpstreamTarget(scheme: .http, host: "127.0.0.1", port: origin.port))
        let proxy = try ProxyHarness(mode: .reverse(upstream)) { $0.clientTimeouts.body = .seconds(1) }
        let base = "https://127.0.0.1:\(proxy.port)"
        let run = try ToolRun.run("/bin/sh", ["-c", "nghttp -v --no-verify-peer '\(base)/slow' '\(base)/fast'"], timeout: 30)
        XCTAssertTrue(run.output.contains("recv RST_STREAM frame") && run.output.contains("(error_code=CANCEL(0x08))"),
                      run.output)
        XCTAssertTrue(run.output.contains("fast"), "the sibling completed: \(run.output)")
        XCTAssertFalse(run.output.contains("recv GOAWAY"), "the connection went on")
        let records = try proxy.stopAndRead().records.filter { $0.connection == nil }
        XCTAssertEqual(records.count, 2, "\(records)")
        let slow = try XCTUnwrap(records.first { $0.leg(.downstream)?.request?.path == "/slow" }, "\(records)")
        XCTAssertEqual(slow.error?.kind, .timeout)
        XCTAssertTrue(slow.error?.message.contains("--body-timeout") == true, "\(String(describing: slow.error))")
        let fast = try XCTUnwrap(records.first { $0.leg(.downstream)?.request?.path == "/fast" })
        XCTAssertNil(fast.error)
        XCTAssertEqual(fast.leg(.downstream)?.response?.status, 200)
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
