import Evidence
import Foundation
import Glibc
import IntactTestSupport
import Proxy
import XCTest

/// The client timeouts and the per-address connection limit through a real
/// proxy, with small values: HTTP/1.1 on the playbook (the clock moved by
/// hand), HTTP/2 over sockets with real clients (openssl, nghttp).
final class ClientTimeoutTests: XCTestCase {
    func testASlowHeadIsAnswered408AndRecorded() throws {
        let playbook = try ProxyPlaybook { $0.clientTimeouts.head = .seconds(1) }
        let client = try playbook.connectClient()
        client.send("GET http://127.0.0.1:1/slow HTTP/1.1\r\nHo")
        playbook.advance(by: .milliseconds(999))
        XCTAssertEqual(client.read(), [], "not before the head timeout")
        XCTAssertFalse(client.receivedEOF)
        // The head's first bytes are looked for every quarter of the head
        // timeout: it is cut at most 25 % late.
        playbook.advance(by: .milliseconds(251))
        let answer = client.readText()
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 408 "), answer)
        XCTAssertTrue(answer.contains("did not complete within 1 s"), answer)
        XCTAssertTrue(client.receivedEOF, "the connection ends with the answer")
        let record = try XCTUnwrap(playbook.records.first)
        XCTAssertEqual(record.leg(.downstream)?.response?.status, 408)
        XCTAssertEqual(record.error?.message, "the request head did not complete within 1 s")
    }

    func testAnIdleConnectionIsClosedAfterTheIdleTimeout() throws {
        let playbook = try ProxyPlaybook { $0.clientTimeouts.idle = .seconds(1) }
        let client = try playbook.connectClient()
        playbook.advance(by: .milliseconds(999))
        XCTAssertFalse(client.receivedEOF, "not before the idle timeout")
        playbook.advance(by: .milliseconds(1))
        XCTAssertTrue(client.receivedEOF, "closed: the proxy's FIN")
        XCTAssertEqual(client.read(), [])
        // A keep-alive connection after its exchange goes the same way.
        let again = try playbook.connectClient()
        again.send("GET http://origin.test/ HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        let origin = try playbook.acceptDial(host: "origin.test", port: 80)
        origin.send("HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
        playbook.run()
        let text = again.readText()
        XCTAssertTrue(text.hasPrefix("HTTP/1.1 204 "), text)
        XCTAssertFalse(again.receivedEOF, "kept alive after the exchange")
        playbook.advance(by: .seconds(1))
        XCTAssertTrue(again.receivedEOF)
    }

    func testABodyThatStopsCutsTheConnectionAndRecordsWhy() throws {
        let playbook = try ProxyPlaybook { $0.clientTimeouts.body = .seconds(1) }
        let client = try playbook.connectClient()
        client.send("POST http://origin.test/upload HTTP/1.1\r\nHost: origin.test\r\nContent-Length: 10\r\n\r\nhello")
        let origin = try playbook.acceptDial(host: "origin.test", port: 80)
        XCTAssertEqual(origin.readText(), "POST /upload HTTP/1.1\r\nHost: origin.test\r\nContent-Length: 10\r\n\r\nhello")
        playbook.advance(by: .milliseconds(999))
        XCTAssertFalse(client.isClosed, "not before the body timeout")
        playbook.advance(by: .milliseconds(1))
        XCTAssertTrue(client.isClosed)
        XCTAssertTrue(origin.isClosed, "the upstream connection was closed too")
        let record = try XCTUnwrap(playbook.records.first)
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
        let playbook = try ProxyPlaybook { $0.maxClientConnections = 2 }
        let first = try playbook.connectClient()
        let second = try playbook.connectClient()
        let third = try playbook.connectClient()
        XCTAssertTrue(third.isClosed, "refused at once")
        XCTAssertEqual(third.read(), [])
        XCTAssertFalse(first.isClosed)
        XCTAssertFalse(second.isClosed)
        first.finishSending()
        playbook.run()
        XCTAssertTrue(first.isClosed)
        let fourth = try playbook.connectClient()
        fourth.send("GET http://127.0.0.1:8080/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        playbook.run()
        let served = fourth.readText()
        XCTAssertTrue(served.hasPrefix("HTTP/1.1 "), "a slot freed up: \(served)")
    }
}
