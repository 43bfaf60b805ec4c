import Evidence
import HTTP
import XCTest
@testable import Proxy

/// Delays and throttling in a scripted exchange: what is held back, the
/// timers asked for, and the order in which parts go out once they fire.
/// Effects are asserted by order and presence; no clock is read.
final class ExchangePacingTests: XCTestCase {
    /// Puts fixed outputs before the response head, and passes the rest on.
    final class BeforeResponseHead: ExchangeHook {
        let outputs: [HookOutput<HTTPResponsePart>]
        init(_ outputs: [HookOutput<HTTPResponsePart>]) { self.outputs = outputs }
        func response(_ part: HTTPResponsePart) -> [HookOutput<HTTPResponsePart>] {
            if case .head = part { return outputs + [.forward(part)] }
            return [.forward(part)]
        }
    }

    /// Puts fixed outputs before the request head.
    final class BeforeRequestHead: ExchangeHook {
        let outputs: [HookOutput<HTTPRequestPart>]
        init(_ outputs: [HookOutput<HTTPRequestPart>]) { self.outputs = outputs }
        func request(_ part: HTTPRequestPart) -> [HookOutput<HTTPRequestPart>] {
            if case .head = part { return outputs + [.forward(part)] }
            return [.forward(part)]
        }
    }

    /// A started exchange whose request went upstream and whose upstream stream is open.
    func opened(_ hook: any ExchangeHook) -> FlowScript {
        var script = FlowScript(hooks: [hook])
        script.start(Script.get())
        script.send(.requestEnd(trailers: nil))
        script.open()
        return script
    }

    func testADelayedResponseHeadWaitsForItsTimerAndReadingPausesMeanwhile() throws {
        var script = opened(BeforeResponseHead([.delay(.milliseconds(200))]))
        let atHead = script.send(.responseHead(Script.ok(length: 3), wire: Script.wire(Script.ok(length: 3))))
        XCTAssertEqual(atHead, [.startTimer(.response, after: .milliseconds(200)), .pauseResponseBody])
        let whileHeld = script.send(.responseBody(Array("abc".utf8))) + script.send(.responseEnd(trailers: nil))
        XCTAssertFalse(whileHeld.contains { if case .sendResponse = $0 { return true }; return false },
                       "nothing reaches the client before the timer fires")
        let fired = script.send(.timerFired(.response))
        let sent = fired.compactMap { command -> String? in
            guard case .sendResponse(let part) = command else { return nil }
            switch part {
            case .head: return "head"
            case .body(let chunk): return "body \(chunk.count)"
            case .end: return "end"
            }
        }
        XCTAssertEqual(sent, ["head", "body 3", "end"], "held parts go out in their order")
        XCTAssertEqual(script.sentToClient, Array("abc".utf8))
        XCTAssertNotNil(script.record, "the exchange finishes once the held response went out")
    }

    func testATimerFiringLateAfterTheExchangeIsIgnored() {
        var script = opened(BeforeResponseHead([.delay(.seconds(1))]))
        script.send(.responseHead(Script.ok(length: 0), wire: Script.wire(Script.ok(length: 0))))
        script.send(.clientGone(ProxyError(.closedEarly, at: .downstream, "gone", status: .connectionTerminated)))
        XCTAssertNotNil(script.record)
        XCTAssertEqual(script.send(.timerFired(.response)), [])
    }

    func testAThrottledBodyGoesOutInSlicesEachFollowedByAPause() {
        // 100 bytes/s: slices of 10 bytes, 100 ms apart.
        var script = opened(BeforeResponseHead([.throttle(bytesPerSecond: 100)]))
        let head = Script.ok(length: 25)
        script.send(.responseHead(head, wire: Script.wire(head)))
        var steps = script.send(.responseBody(Script.bytes(25)))
        steps += script.send(.responseEnd(trailers: nil))
        for _ in 0..<3 { steps += script.send(.timerFired(.response)) }
        let order = steps.compactMap { command -> String? in
            switch command {
            case .sendResponse(.body(let chunk)): return "body \(chunk.count)"
            case .sendResponse(.end): return "end"
            case .startTimer(.response, let after): return "wait \(after.components.attoseconds / 1_000_000_000_000_000) ms"
            default: return nil
            }
        }
        XCTAssertEqual(order, ["body 10", "wait 100 ms", "body 10", "wait 100 ms", "body 5", "wait 50 ms", "end"])
        XCTAssertEqual(script.sentToClient, Script.bytes(25), "slices add up to the body, in order")
    }

    func testADelayedRequestHeadOpensTheUpstreamOnlyWhenTheTimerFires() {
        var script = FlowScript(hooks: [BeforeRequestHead([.delay(.milliseconds(50))])])
        let started = script.start(Script.post(length: 4))
        XCTAssertEqual(started, [.startTimer(.request, after: .milliseconds(50)), .pauseRequestBody])
        XCTAssertNil(script.openedHead)
        let fired = script.send(.timerFired(.request))
        guard case .openUpstream(_, let head, _)? = fired.first else { return XCTFail("no upstream opened: \(fired)") }
        XCTAssertEqual(head.path, "/upload")
        XCTAssertTrue(fired.contains(.resumeRequestBody))
    }

    func testACloseEndsTheClientConnectionWithoutAnswerAndAbandonsTheUpstream() throws {
        var script = opened(BeforeResponseHead([.close(reason: "closed by a test")]))
        let commands = script.send(.responseHead(Script.ok(length: 3), wire: Script.wire(Script.ok(length: 3))))
        XCTAssertEqual(Array(commands.prefix(2)), [.abandonUpstream, .closeClientConnection])
        XCTAssertTrue(script.clientHeads.isEmpty)
        let record = try XCTUnwrap(script.record)
        XCTAssertEqual(record.error?.kind, .closedEarly)
        XCTAssertEqual(record.error?.message, "closed by a test")
        XCTAssertNil(record.leg(.downstream)?.response)
    }

    func testAStallSendsNothingAndEndsOnlyWhenTheClientGivesUp() throws {
        var script = FlowScript(hooks: [BeforeRequestHead([.stall(reason: "stalled by a test")])])
        let started = script.start(Script.get())
        XCTAssertFalse(started.contains { if case .openUpstream = $0 { return true }; return false })
        script.send(.requestEnd(trailers: nil))
        XCTAssertNil(script.record, "a stalled exchange stays open")
        XCTAssertTrue(script.clientHeads.isEmpty)
        script.send(.clientGone(ProxyError(.closedEarly, at: .downstream, "the client timed out", status: .connectionTerminated)))
        let record = try XCTUnwrap(script.record)
        XCTAssertEqual(record.error?.kind, .timeout, "the stall is the recorded cause, not the client leaving")
        XCTAssertEqual(record.error?.message, "stalled by a test")
        XCTAssertNil(record.leg(.upstream))
    }

    func testAStallOnTheResponseDropsTheServersResponseAndAbandonsTheUpstream() throws {
        var script = opened(BeforeResponseHead([.stall(reason: "stalled")]))
        let commands = script.send(.responseHead(Script.ok(length: 3), wire: Script.wire(Script.ok(length: 3))))
        XCTAssertEqual(commands, [.abandonUpstream])
        XCTAssertEqual(script.send(.responseBody(Array("abc".utf8))), [])
        XCTAssertNil(script.record)
        script.send(.clientGone(ProxyError(.timeout, at: .downstream, "gone", status: .connectionTimeout)))
        let record = try XCTUnwrap(script.record)
        XCTAssertEqual(record.leg(.upstream)?.response?.status, 200, "what the server sent is recorded")
        XCTAssertNil(record.leg(.downstream)?.response, "nothing reached the client")
    }
}
