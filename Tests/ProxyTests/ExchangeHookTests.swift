import AuthFlow
import Evidence
import HTTP
import Hashing
@testable import Proxy
import ProxyAddons
import XCTest

/// Hooks in a scripted exchange: what they change is sent and recorded on
/// the upstream leg; answers, failures and resets take the exchange's place.
final class ExchangeHookTests: XCTestCase {
    /// Adds a request field and uppercases response bodies; logs every call.
    final class Rewriter: ExchangeHook {
        var calls: [String] = []
        var failures: [ProxyError] = []
        var finished = 0

        func request(_ part: HTTPRequestPart) -> [HookOutput<HTTPRequestPart>] {
            switch part {
            case .head(var head):
                calls.append("request head")
                head.fields.append("X-Added", "1")
                return [.forward(.head(head))]
            case .body: calls.append("request body")
            case .end: calls.append("request end")
            }
            return [.forward(part)]
        }

        func response(_ part: HTTPResponsePart) -> [HookOutput<HTTPResponsePart>] {
            guard case .body(let chunk) = part else { return [.forward(part)] }
            calls.append("response body")
            return [.forward(.body(chunk.map { $0 >= 0x61 && $0 <= 0x7A ? $0 - 0x20 : $0 }))]
        }

        func failed(_ error: ProxyError) { failures.append(error) }

        func finish(_ record: inout ExchangeRecord) {
            finished += 1
            record.faults.append(ExchangeRecord.RecordedFault(name: "rewriter"))
        }
    }

    /// Answers every request itself.
    final class Answerer: ExchangeHook {
        func request(_ part: HTTPRequestPart) -> [HookOutput<HTTPRequestPart>] {
            let head = HTTPResponseHead(status: 503, fields: ["Content-Length": "4"])
            return [.answer([.head(head), .body(Array("down".utf8)), .end(trailers: nil)])]
        }
    }

    /// Resets or fails on the response head.
    final class Breaker: ExchangeHook {
        let output: HookOutput<HTTPResponsePart>
        init(_ output: HookOutput<HTTPResponsePart>) { self.output = output }
        func response(_ part: HTTPResponsePart) -> [HookOutput<HTTPResponsePart>] {
            if case .head = part { return [output] }
            return [.forward(part)]
        }
    }

    func testAChangedHeadAndBodyShowOnTheUpstreamAndDownstreamLegs() throws {
        let rewriter = Rewriter()
        var script = FlowScript(hooks: [rewriter])
        script.start(Script.get())
        script.send(.requestEnd(trailers: nil))
        script.open()
        XCTAssertEqual(script.openedHead?.fields["X-Added"], "1")
        script.send(.responseHead(Script.ok(length: 3), wire: Script.wire(Script.ok(length: 3))))
        script.send(.responseBody(Array("abc".utf8)))
        script.send(.responseEnd(trailers: nil))
        XCTAssertEqual(script.sentToClient, Array("ABC".utf8))
        XCTAssertEqual(rewriter.calls, ["request head", "request end", "response body"],
                       "the end of a bodiless request still reaches the hooks")
        XCTAssertEqual(rewriter.finished, 1)

        let record = try XCTUnwrap(script.record)
        XCTAssertEqual(record.faults.map(\.name), ["rewriter"])
        XCTAssertNotEqual(record.leg(.downstream)?.request?.digest.head.semantic,
                          record.leg(.upstream)?.request?.digest.head.semantic)
        XCTAssertNotEqual(record.leg(.downstream)?.response?.digest.body.sha256,
                          record.leg(.upstream)?.response?.digest.body.sha256)
        XCTAssertEqual(record.leg(.downstream)?.response?.digest.body.sha256,
                       SHA256Digest.of(Array("ABC".utf8), using: Script.settings.digests))
    }

    func testAHookAnswerReplacesTheServerAndNoUpstreamIsOpened() throws {
        var script = FlowScript(hooks: [Answerer()])
        let commands = script.start(Script.get())
        XCTAssertFalse(commands.contains { if case .openUpstream = $0 { return true }; return false })
        XCTAssertEqual(script.clientHeads.map(\.status), [503])
        XCTAssertEqual(script.sentToClient, Array("down".utf8))
        script.send(.requestEnd(trailers: nil))
        let record = try XCTUnwrap(script.record)
        XCTAssertNil(record.leg(.upstream))
        XCTAssertEqual(record.leg(.downstream)?.response?.status, 503)
        XCTAssertNil(record.error)
    }

    func testHooksRunInOrderEachSeeingThePreviousOutput() {
        let first = Rewriter(), second = Rewriter()
        var script = FlowScript(hooks: [first, second])
        script.start(Script.get())
        script.send(.requestEnd(trailers: nil))
        XCTAssertEqual(script.openedHead?.fields.values("X-Added"), ["1", "1"])
    }

    func testAResetOnTheResponseResetsTheClientAndAbandonsTheUpstream() throws {
        let observer = Rewriter()
        var script = FlowScript(hooks: [observer, Breaker(.reset(reason: "fault: reset before headers"))])
        script.start(Script.get())
        script.send(.requestEnd(trailers: nil))
        script.open()
        let commands = script.send(.responseHead(Script.ok(length: 3), wire: Script.wire(Script.ok(length: 3))))
        XCTAssertEqual(Array(commands.prefix(2)), [.abandonUpstream, .resetClientStream])
        let record = try XCTUnwrap(script.record)
        XCTAssertEqual(record.error?.kind, .reset)
        XCTAssertEqual(record.error?.message, "fault: reset before headers")
        XCTAssertEqual(observer.failures.count, 1)
    }

    func testAFailureOnTheResponseAnswers502() throws {
        var script = FlowScript(hooks: [Breaker(.fail(reason: "body over the buffer limit"))])
        script.start(Script.get())
        script.send(.requestEnd(trailers: nil))
        script.open()
        script.send(.responseHead(Script.ok(length: 3), wire: Script.wire(Script.ok(length: 3))))
        XCTAssertEqual(script.clientHeads.map(\.status), [502])
        XCTAssertEqual(script.send(.responseBody(Array("abc".utf8))), [], "the server's body is dropped")
        XCTAssertEqual(try XCTUnwrap(script.record).error?.kind, .internal)
    }

    func testTheAuthStepAddonLabelsSignInExchangesOnly() throws {
        let addon = AuthStepAddon(contextPath: "suite")
        func run(_ path: String, status: Int) throws -> ExchangeRecord {
            let request = Script.get(path)
            let context = ExchangeHookContext(id: Script.exchange(1), request: request, target: Script.origin, tap: "t")
            var script = FlowScript(hooks: [try XCTUnwrap(addon.hook(for: context))])
            script.start(request)
            script.send(.requestEnd(trailers: nil))
            script.open()
            let head = HTTPResponseHead(status: HTTPStatus(status), fields: ["Content-Length": "0"])
            script.send(.responseHead(head, wire: Script.wire(head)))
            script.send(.responseEnd(trailers: nil))
            return try XCTUnwrap(script.record)
        }
        XCTAssertEqual(try run("/suite/rest/a", status: 401).authFlowStep, AuthStep.challenge401.rawValue)
        XCTAssertEqual(try run("/suite/cors/ping", status: 200).authFlowStep, AuthStep.corsPing.rawValue)
        XCTAssertNil(try run("/elsewhere", status: 200).authFlowStep)
    }

    /// Watches every part (the default `request`/`response` forward them unchanged).
    final class Watcher: ExchangeHook {
        var seen: [String] = []
        var onlyWatches: Bool { true }
        func watchRequest(_ part: HTTPRequestPart) { seen.append("request \(part)") }
        func watchResponse(_ part: HTTPResponsePart) { seen.append("response \(part)") }
    }

    /// Hooks that only watch see every part in order, and the exchange's
    /// commands and record are those of the same exchange with no hook; next
    /// to a hook that acts, a watcher goes through the chain like any hook.
    func testHooksThatOnlyWatchSeeEveryPartAndChangeNothing() throws {
        func run(_ hooks: [any ExchangeHook]) throws -> (log: [ExchangeCommand], record: ExchangeRecord) {
            var script = FlowScript(hooks: hooks, framing: .contentLength(4))
            script.start(Script.post(length: 4))
            script.open()
            script.send(.requestBody(Array("ping".utf8)))
            script.send(.requestEnd(trailers: nil))
            script.send(.responseHead(Script.ok(length: 4), wire: Script.wire(Script.ok(length: 4))))
            script.send(.responseBody(Array("pong".utf8)))
            script.send(.responseEnd(trailers: nil))
            return (script.log, try XCTUnwrap(script.record))
        }
        let plain = try run([])
        let first = Watcher(), second = Watcher()
        let watched = try run([first, second])
        XCTAssertEqual(watched.log.dropLast(), plain.log.dropLast())
        XCTAssertEqual(watched.record.legs, plain.record.legs)
        XCTAssertEqual(first.seen.count, 6, "\(first.seen)")
        XCTAssertEqual(first.seen, second.seen)
        XCTAssertTrue(first.seen[0].hasPrefix("request head"), "\(first.seen)")
        XCTAssertEqual(first.seen.last, "response end(trailers: nil)")

        let rewriter = Rewriter(), third = Watcher()
        let mixed = try run([third, rewriter])
        XCTAssertEqual(third.seen, first.seen, "through the chain, the default request/response watch too")
        XCTAssertEqual(rewriter.calls, ["request head", "request body", "request end", "response body"])
        XCTAssertEqual(mixed.record.leg(.upstream)?.request?.fields.last?.name, "X-Added")
    }
}
