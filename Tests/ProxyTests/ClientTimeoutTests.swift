import Evidence
import HTTP
import IntactTestSupport
import Proxy
import XCTest

/// The client timeouts and the per-address connection limit through a real
/// proxy, with small values, on the playbook (the clock moved by hand):
/// HTTP/1.1 clients, and HTTP/2 clients with a session of their own.
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

    /// A reverse proxy in front of a plaintext origin, its client timeouts set by `timeouts`.
    private func reverse(_ timeouts: (inout ClientTimeouts) -> Void) throws -> ProxyPlaybook {
        let upstream = try XCTUnwrap(UpstreamTarget(scheme: .http, host: "origin.test", port: 80))
        return try ProxyPlaybook(mode: .reverse(upstream)) { timeouts(&$0.clientTimeouts) }
    }

    func testAnIdleHTTP2ConnectionGetsGoAwayThenIsClosed() throws {
        let playbook = try reverse { $0.idle = .seconds(1) }
        // The preface and SETTINGS, then no stream at all.
        let client = try playbook.connectHTTP2Client(tls: "origin.test")
        XCTAssertEqual(client.peer.negotiated?.alpn, "h2")
        playbook.advance(by: .milliseconds(999))
        XCTAssertTrue(client.takeEvents().goAways.isEmpty, "not before the idle timeout")
        XCTAssertFalse(client.peer.receivedEOF)
        playbook.advance(by: .milliseconds(1))
        let events = client.takeEvents()
        let goAway = try XCTUnwrap(events.goAways.first, "\(events)")
        XCTAssertEqual(goAway.code, .noError)
        XCTAssertEqual(goAway.lastStreamID, 0)
        // The proxy lingers for the client's end, then closes; nothing follows the GOAWAY.
        playbook.advance(by: .seconds(5))
        XCTAssertTrue(client.peer.receivedEOF, "closed after the GOAWAY")
        XCTAssertEqual(client.takeEvents(), [])
        XCTAssertTrue(playbook.records.allSatisfy { $0.error == nil }, "\(playbook.records.compactMap(\.error))")
    }

    func testAStalledHTTP2StreamIsResetWhileItsSiblingCompletes() throws {
        let playbook = try reverse { $0.body = .seconds(1) }
        let client = try playbook.connectHTTP2Client(tls: "origin.test")
        let slow = try XCTUnwrap(client.request(HTTPRequestHead(method: "GET", authority: "origin.test", path: "/slow")))
        let fast = try XCTUnwrap(client.request(HTTPRequestHead(method: "GET", authority: "origin.test", path: "/fast")))
        // One HTTP/1.1 upstream connection per stream; the one for /slow never answers.
        let origins = [try playbook.acceptDial(host: "origin.test", port: 80),
                       try playbook.acceptDial(host: "origin.test", port: 80)]
        let heads = origins.map { $0.readText() }
        let fastOrigin = try XCTUnwrap(zip(origins, heads).first { $0.1.hasPrefix("GET /fast ") }?.0, "\(heads)")
        XCTAssertTrue(heads.contains { $0.hasPrefix("GET /slow ") }, "\(heads)")
        fastOrigin.send("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nfast")
        playbook.run()
        playbook.advance(by: .milliseconds(900))
        XCTAssertTrue(client.events.resets.isEmpty, "not before the body timeout: \(client.events.resets)")
        // Checked every quarter of the timeout: cut at most 25 % late.
        playbook.advance(by: .milliseconds(350))
        let events = client.takeEvents()
        XCTAssertEqual(events.resets.map(\.stream), [slow], "\(events)")
        XCTAssertEqual(events.resets.first?.code, .cancel)
        XCTAssertEqual(events.statuses[fast], 200)
        XCTAssertEqual(events.bodies[fast].map { String(decoding: $0, as: UTF8.self) }, "fast", "the sibling completed")
        XCTAssertTrue(events.goAways.isEmpty, "the connection went on")
        XCTAssertFalse(client.peer.receivedEOF)

        let records = playbook.records.filter { $0.connection == nil }
        XCTAssertEqual(records.count, 2, "\(records)")
        let stalled = try XCTUnwrap(records.first { $0.leg(.downstream)?.request?.path == "/slow" }, "\(records)")
        XCTAssertEqual(stalled.error?.kind, .timeout)
        XCTAssertTrue(stalled.error?.message.contains("--body-timeout") == true, "\(String(describing: stalled.error))")
        let sibling = try XCTUnwrap(records.first { $0.leg(.downstream)?.request?.path == "/fast" })
        XCTAssertNil(sibling.error)
        XCTAssertEqual(sibling.leg(.downstream)?.response?.status, 200)
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
