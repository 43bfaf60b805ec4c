import Evidence
import HTTP
import XCTest
@testable import Proxy

/// The flow's resend of a request the upstream never processed, scripted
/// with no sockets: what goes upstream again, when it does not, and what the
/// record and the client see.
final class ExchangeRetryTests: XCTestCase {
    static let goAway = ProxyError.transport(.goAway(lastStreamID: 1, code: .noError), at: .upstream(Script.origin))
    static let reusedClose = ProxyError.transport(.peerClosed(during: .responseOnReusedConnection), at: .upstream(Script.origin))

    func testAGetAboveTheGoAwayIsSentAgainAndRecordedOnce() throws {
        var script = FlowScript()
        let request = Script.get("/again")
        let open = ExchangeCommand.openUpstream(Script.origin, head: Script.shaped(request), framing: .none)
        XCTAssertEqual(script.start(request), [open])
        script.send(.requestEnd(trailers: nil))
        script.open(streamID: 3)
        XCTAssertEqual(script.send(.upstreamFailed(Self.goAway)), [open], "the same head, on a fresh stream")
        script.open(streamID: 1)
        script.send(.responseHead(Script.ok(length: 2), wire: Script.wire(Script.ok(length: 2))))
        script.send(.responseBody([0x6F, 0x6B]))
        script.send(.responseEnd(trailers: nil))
        let record = try XCTUnwrap(script.record)
        XCTAssertNil(record.error)
        XCTAssertEqual(record.retries?.count, 1)
        XCTAssertTrue(record.retries?.first?.message.contains("GOAWAY") == true)
        XCTAssertEqual(record.legs.filter { $0.role == .upstream }.count, 1)
        XCTAssertEqual(record.leg(.upstream)?.streamID, 1)
        XCTAssertEqual(script.sentToClient, [0x6F, 0x6B])
    }

    func testAnUploadHeldInFullIsReplayedWithItsBody() throws {
        var script = FlowScript(framing: .contentLength(10))
        let request = Script.post(length: 10)
        script.start(request)
        script.open()
        script.send(.requestBody(Script.bytes(10)))
        script.send(.requestEnd(trailers: nil))
        let before = script.sentUpstream
        XCTAssertEqual(script.send(.upstreamFailed(Self.goAway)).count, 1)
        script.open()
        XCTAssertEqual(script.sentUpstream, before + Script.bytes(10), "the body goes again after the head")
        XCTAssertTrue(script.log.contains(.endRequest(trailers: nil)))
    }

    func testAnUploadNoLongerHeldIsAnswered502NamingTheGoAway() throws {
        let size = UpstreamReplay.bodyLimit + 1
        var script = FlowScript(framing: .contentLength(size))
        script.start(Script.post(length: size))
        script.open()
        script.send(.requestBody(Script.bytes(size)))
        let commands = script.send(.upstreamFailed(Self.goAway))
        XCTAssertFalse(commands.contains { if case .openUpstream = $0 { return true } else { return false } })
        guard case .sendResponse(.head(let head))? = commands.first(where: {
            if case .sendResponse(.head) = $0 { return true } else { return false } }) else {
            return XCTFail("\(commands)")
        }
        XCTAssertEqual(head.status, 502)
        let status = head.fields["proxy-status"] ?? ""
        XCTAssertTrue(status.contains("connection_terminated") && status.contains("GOAWAY"), status)
    }

    func testAPostOnAReusedConnectionThatClosedIsNotResent() throws {
        var script = FlowScript(framing: .contentLength(2))
        script.start(Script.post(length: 2))
        script.open()
        script.send(.requestBody([1, 2]))
        script.send(.requestEnd(trailers: nil))
        let commands = script.send(.upstreamFailed(Self.reusedClose))
        XCTAssertFalse(commands.contains { if case .openUpstream = $0 { return true } else { return false } })
        XCTAssertNil(script.record?.retries)
    }

    func testOnlyOneRetryAfterALikelyUnprocessedFailure() throws {
        var script = FlowScript()
        script.start(Script.get())
        script.send(.requestEnd(trailers: nil))
        script.open()
        XCTAssertEqual(script.send(.upstreamFailed(Self.reusedClose)).count, 1)
        script.open()
        let second = script.send(.upstreamFailed(Self.reusedClose))
        XCTAssertFalse(second.contains { if case .openUpstream = $0 { return true } else { return false } })
        XCTAssertEqual(script.record?.retries?.count, 1)
        XCTAssertNotNil(script.record?.error)
    }

    /// A server with a fixed budget of requests per connection refuses, under a
    /// burst wider than it, some retries on the fresh connection too: a request
    /// refused each time it is sent goes out up to five times, then fails.
    func testUpToFourRetriesWhileEveryFailureWasCertainlyUnprocessed() throws {
        var script = FlowScript()
        script.start(Script.get())
        script.send(.requestEnd(trailers: nil))
        for attempt in 1..<UpstreamReplay.maximumUnprocessedAttempts {
            script.open()
            let commands = script.send(.upstreamFailed(Self.goAway))
            XCTAssertTrue(commands.contains { if case .openUpstream = $0 { return true } else { return false } },
                          "attempt \(attempt) is sent again")
        }
        script.open()
        let last = script.send(.upstreamFailed(Self.goAway))
        XCTAssertFalse(last.contains { if case .openUpstream = $0 { return true } else { return false } })
        XCTAssertEqual(script.record?.retries?.count, UpstreamReplay.maximumUnprocessedAttempts - 1)
        XCTAssertEqual(script.record?.error, Self.goAway.failure)
    }
}
