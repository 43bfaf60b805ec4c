import Evidence
import HTTP
import Hashing
@testable import Proxy
import XCTest

/// `ExchangeFlow` driven by scripted events, asserting the exact commands.
final class ExchangeFlowTests: XCTestCase {
    func testGetFlowsThroughAndRecordsEqualDigestsOnBothLegs() throws {
        var script = FlowScript()
        let request = Script.get("/hello")
        XCTAssertEqual(script.start(request), [.openUpstream(Script.origin, head: Script.shaped(request), framing: .none)])
        XCTAssertEqual(script.send(.requestEnd(trailers: nil)), [], "the head already ended a bodiless request")
        XCTAssertEqual(script.open(), [])
        let body = Script.bytes(1000)
        XCTAssertEqual(script.send(.responseHead(Script.ok(length: 1000), wire: Script.wire(Script.ok(length: 1000)))),
                       [.sendResponse(.head(Script.ok(length: 1000)))])
        XCTAssertEqual(script.send(.responseBody(Array(body[..<400]))), [.sendResponse(.body(Array(body[..<400])))])
        XCTAssertEqual(script.send(.responseBody(Array(body[400...]))), [.sendResponse(.body(Array(body[400...])))])
        let last = script.send(.responseEnd(trailers: nil))
        XCTAssertEqual(last.first, .sendResponse(.end(trailers: nil)), "a completed upstream stream needs no command")
        XCTAssertFalse(last.contains(.abandonUpstream))
        XCTAssertTrue(script.flow.isFinished)
        XCTAssertEqual(script.sentToClient, body)

        let record = try XCTUnwrap(script.record)
        XCTAssertEqual(record.exchangeID, "d1.1")
        XCTAssertEqual(record.tap, "test-tap")
        XCTAssertNil(record.error)
        let down = try XCTUnwrap(record.leg(.downstream))
        let up = try XCTUnwrap(record.leg(.upstream))
        XCTAssertEqual(down.connectionID, "d1")
        XCTAssertEqual(up.connectionID, "u1")
        let downRequest = try XCTUnwrap(down.request), upRequest = try XCTUnwrap(up.request)
        let downResponse = try XCTUnwrap(down.response), upResponse = try XCTUnwrap(up.response)
        XCTAssertEqual(downRequest.digest, upRequest.digest)
        XCTAssertEqual(downResponse.digest, upResponse.digest)
        XCTAssertEqual(upResponse.digest.body.length, 1000)
        XCTAssertEqual(upResponse.digest.body.sha256, SHA256Digest.of(body, using: Script.settings.digests))
        XCTAssertNotEqual(upResponse.digest.body.sha256, SHA256Digest.of(body), "keyed, not plain SHA-256")
        XCTAssertTrue(downResponse.complete && upResponse.complete && downRequest.complete && upRequest.complete)
        XCTAssertEqual(downRequest.path, "/hello")
        XCTAssertEqual(downResponse.status, 200)
    }

    func testUploadWaitsForUpstreamThenFollowsItsWritability() throws {
        var script = FlowScript(framing: .contentLength(3000))
        let body = Script.bytes(3000)
        XCTAssertEqual(script.start(Script.post(length: 3000)),
                       [.openUpstream(Script.origin, head: Script.shaped(Script.post(length: 3000)), framing: .contentLength(3000))])
        // A read that arrives while the stream opens waits; reading pauses until it can go.
        XCTAssertEqual(script.send(.requestBody(Array(body[..<1000]))), [.pauseRequestBody])
        XCTAssertEqual(script.open(), [.sendRequestBody(Array(body[..<1000])), .resumeRequestBody])
        // The upstream stream fills up with the next chunk: the send's outcome pauses reading in the same step.
        script.io.upstreamFull = true
        XCTAssertEqual(script.send(.requestBody(Array(body[1000..<2000]))),
                       [.sendRequestBody(Array(body[1000..<2000])), .pauseRequestBody])
        script.io.upstreamFull = false
        XCTAssertEqual(script.send(.upstreamWritable), [.resumeRequestBody])
        XCTAssertEqual(script.send(.requestBody(Array(body[2000...]))), [.sendRequestBody(Array(body[2000...]))])
        XCTAssertEqual(script.send(.requestEnd(trailers: nil)), [.endRequest(trailers: nil)])
        XCTAssertEqual(script.sentUpstream, body)

        // The client stops reading: the upstream response is paused, then resumed.
        script.send(.responseHead(Script.ok(length: 4), wire: Script.wire(Script.ok(length: 4))))
        script.io.clientFull = true
        XCTAssertEqual(script.send(.responseBody([1, 2, 3, 4])), [.sendResponse(.body([1, 2, 3, 4])), .pauseResponseBody])
        script.io.clientFull = false
        XCTAssertEqual(script.send(.clientWritable), [.resumeResponseBody])
        script.send(.responseEnd(trailers: nil))
        let record = try XCTUnwrap(script.record)
        XCTAssertEqual(record.leg(.downstream)?.request?.digest.body, record.leg(.upstream)?.request?.digest.body)
        XCTAssertEqual(record.leg(.upstream)?.request?.digest.body.length, 3000)
    }

    func testUnreachableUpstreamIsAnswered502WithTheReasonAndRecorded() throws {
        var script = FlowScript(framing: .contentLength(10))
        script.start(Script.post(length: 10))
        XCTAssertEqual(script.send(.requestBody(Script.bytes(5))), [.pauseRequestBody])
        let refused = ProxyError(.connectionRefused, at: .upstreamConnect, "connection refused (127.0.0.1:1)",
                                 status: .connectionRefused)
        let commands = script.send(.upstreamFailed(refused))
        let head = try XCTUnwrap(script.clientHeads.first)
        XCTAssertEqual(head.status, 502)
        XCTAssertEqual(head.fields["Proxy-Status"],
                       "intact; error=connection_refused; details=\"connection refused (127.0.0.1:1)\"")
        XCTAssertTrue(String(decoding: script.sentToClient, as: UTF8.self).contains("connection refused (127.0.0.1:1)"))
        XCTAssertTrue(commands.contains(.resumeRequestBody), "the rest of the upload is read and dropped: \(commands)")
        XCTAssertFalse(script.flow.isFinished, "the request is still arriving")
        script.send(.requestEnd(trailers: nil))
        let record = try XCTUnwrap(script.record)
        XCTAssertEqual(record.error?.kind, .connectionRefused)
        XCTAssertEqual(record.legs.count, 1, "no upstream connection, no upstream leg")
        XCTAssertEqual(record.leg(.downstream)?.response?.status, 502)
    }

    func testUpstreamResetMidBodyResetsTheClientAndRecordsBroken() throws {
        var script = FlowScript(streamID: 3)
        script.start(Script.get())
        script.send(.requestEnd(trailers: nil))
        script.open(streamID: 5)
        script.send(.responseHead(Script.ok(length: 5000), wire: Script.wire(Script.ok(length: 5000))))
        script.send(.responseBody(Script.bytes(100)))
        let reset = ProxyError(.reset, at: .upstream(Script.origin), "connection reset by peer",
                               status: .connectionTerminated)
        let commands = script.send(.upstreamFailed(reset))
        XCTAssertEqual(commands.first, .resetClientStream)
        let record = try XCTUnwrap(script.record)
        XCTAssertEqual(record.error, reset.failure)
        XCTAssertEqual(record.leg(.downstream)?.streamID, 3)
        XCTAssertEqual(record.leg(.upstream)?.streamID, 5)
        XCTAssertEqual(record.leg(.upstream)?.response?.complete, false)
        XCTAssertEqual(record.leg(.downstream)?.response?.complete, false)
        XCTAssertEqual(record.leg(.downstream)?.response?.digest.body.length, 100)
        XCTAssertEqual(record.leg(.upstream)?.broken, "upstream https://origin.test:8443: connection reset by peer")
    }

    func testClientLeavingMidUploadAbandonsTheUpstream() throws {
        var script = FlowScript(framing: .contentLength(10_000))
        script.start(Script.post(length: 10_000))
        script.open()
        script.send(.requestBody(Script.bytes(2000)))
        let gone = ProxyError(.closedEarly, at: .downstream, "the client closed the connection",
                              status: .connectionTerminated)
        let commands = script.send(.clientGone(gone))
        XCTAssertEqual(commands.first, .abandonUpstream)
        let record = try XCTUnwrap(script.record)
        XCTAssertEqual(record.error?.kind, .closedEarly)
        XCTAssertEqual(record.leg(.downstream)?.request?.complete, false)
        XCTAssertEqual(record.leg(.upstream)?.request?.digest.body.length, 2000)
        XCTAssertNil(record.leg(.downstream)?.response)
        XCTAssertEqual(record.leg(.upstream)?.broken,
                       "the client left (downstream: the client closed the connection) before the request was completely sent")
        // Nothing after the end.
        XCTAssertEqual(script.send(.requestBody([1])), [])
    }

    func testEarlyResponseEndsTheExchangeOnceTheUploadIsDrained() throws {
        var script = FlowScript(framing: .contentLength(5000))
        script.start(Script.post(length: 5000))
        script.open()
        script.send(.requestBody(Script.bytes(1000)))
        let tooLarge = HTTPResponseHead(status: 413, fields: ["Content-Length": "0"])
        script.send(.responseHead(tooLarge, wire: Script.wire(tooLarge)))
        let end = script.send(.responseEnd(trailers: nil))
        XCTAssertEqual(end.first, .abandonUpstream, "a half-sent request spoils an HTTP/1.1 connection")
        XCTAssertFalse(script.flow.isFinished)
        XCTAssertEqual(script.send(.requestBody(Script.bytes(4000))), [], "the rest is read and dropped")
        script.send(.requestEnd(trailers: nil))
        XCTAssertTrue(script.flow.isFinished)
        XCTAssertEqual(script.record?.leg(.upstream)?.request?.digest.body.length, 1000)
        XCTAssertEqual(script.record?.leg(.upstream)?.broken, "the server answered before the request was completely sent")
    }

    func testAbsoluteFormRequestGoesUpstreamInOriginFormWithoutHopByHopFields() throws {
        var script = FlowScript(target: UpstreamTarget(scheme: .http, host: "origin.test", port: 80))
        let request = HTTPRequestHead(method: "GET", scheme: "http", authority: "origin.test", path: "/a?b=c",
                                      targetForm: .absolute,
                                      fields: ["Host": "origin.test", "Proxy-Connection": "Keep-Alive",
                                               "Connection": "X-Private", "X-Private": "1", "Accept": "*/*"])
        script.start(request)
        script.send(.requestEnd(trailers: nil))
        script.open()
        let sent = try XCTUnwrap(script.openedHead)
        XCTAssertEqual(sent.targetForm, .origin)
        XCTAssertEqual(sent.target, "/a?b=c")
        XCTAssertEqual(sent.fields.map(\.name), ["Host", "Accept"])
        script.send(.responseHead(Script.ok(length: 0), wire: Script.wire(Script.ok(length: 0))))
        script.send(.responseEnd(trailers: nil))
        let record = try XCTUnwrap(script.record)
        let down = try XCTUnwrap(record.leg(.downstream)?.request?.digest.head)
        let up = try XCTUnwrap(record.leg(.upstream)?.request?.digest.head)
        XCTAssertNotEqual(down.exact, up.exact)
        XCTAssertEqual(down.semantic, up.semantic, "origin form and hop-by-hop fields are not a semantic change")
    }

    func testTraceFieldAndTimingsAreRecorded() throws {
        var script = FlowScript()
        script.start(Script.get(extra: [("Intact-Trace", "trace-42")]))
        script.send(.requestEnd(trailers: nil))
        script.open()
        script.send(.responseHead(Script.ok(length: 0), wire: Script.wire(Script.ok(length: 0))))
        script.send(.responseEnd(trailers: nil))
        let record = try XCTUnwrap(script.record)
        XCTAssertEqual(record.traceID, "trace-42")
        XCTAssertEqual(record.leg(.upstream)?.response?.timings.end, Script.clock())
    }

    func testSecretsAreRedactedAndBodiesStoredOnlyWhenAsked() throws {
        let settings = RecordingSettings(tap: "t", bodyStoreLimit: 4, clock: Script.clock)
        var script = FlowScript(settings: settings)
        script.start(Script.get(extra: [("Cookie", "JSESSIONID=secret")]))
        script.send(.requestEnd(trailers: nil))
        script.open()
        script.send(.responseHead(Script.ok(length: 6), wire: Script.wire(Script.ok(length: 6))))
        script.send(.responseBody(Array("abcdef".utf8)))
        script.send(.responseEnd(trailers: nil))
        let record = try XCTUnwrap(script.record)
        let cookie = try XCTUnwrap(record.leg(.downstream)?.request?.fields.first { $0.name == "Cookie" })
        XCTAssertTrue(cookie.isRedacted)
        XCTAssertFalse(cookie.value.contains("secret"))
        let stored = try XCTUnwrap(record.leg(.downstream)?.response?.body)
        XCTAssertEqual(stored.bytes, Array("abcd".utf8))
        XCTAssertTrue(stored.truncated)
    }

    func testInterimResponsesPassWithoutEndingTheWait() throws {
        var script = FlowScript(framing: .contentLength(10))
        script.start(Script.post(length: 10))
        script.open()
        let continueHead = HTTPResponseHead(status: 100)
        XCTAssertEqual(script.send(.responseHead(continueHead, wire: Script.wire(continueHead))),
                       [.sendResponse(.head(continueHead))])
        script.send(.requestBody(Script.bytes(10)))
        script.send(.requestEnd(trailers: nil))
        XCTAssertEqual(script.send(.responseHead(Script.ok(length: 0), wire: Script.wire(Script.ok(length: 0)))),
                       [.sendResponse(.head(Script.ok(length: 0)))])
        script.send(.responseEnd(trailers: nil))
        XCTAssertEqual(script.record?.leg(.downstream)?.response?.status, 200)
    }

    /// RFC 9110 §15.2: an HTTP/1.0 client gets no 1xx. The flow sends the
    /// final head only; the client leg's record says which 1xx it withheld.
    func testNoInterimResponseGoesToAnHTTP10Client() throws {
        var script = FlowScript()
        var request = Script.get("/old")
        request.version = .http1_0
        script.start(request)
        script.send(.requestEnd(trailers: nil))
        script.open()
        for status in [100, 103] {
            let interim = HTTPResponseHead(status: HTTPStatus(status))
            XCTAssertEqual(script.send(.responseHead(interim, wire: Script.wire(interim))), [], "\(status)")
        }
        XCTAssertEqual(script.send(.responseHead(Script.ok(length: 0), wire: Script.wire(Script.ok(length: 0)))),
                       [.sendResponse(.head(Script.ok(length: 0)))])
        script.send(.responseEnd(trailers: nil))
        let record = try XCTUnwrap(script.record)
        XCTAssertNil(record.leg(.downstream)?.interimResponses)
        XCTAssertEqual(record.leg(.downstream)?.interimWithheld, [100, 103])
        XCTAssertEqual(record.leg(.upstream)?.interimResponses?.map(\.status), [100, 103])
        XCTAssertNil(record.leg(.upstream)?.interimWithheld)
    }

    /// A head and an end are recorded from their sends' outcomes, in the
    /// step that sent them: the exchange finishes with the send of its end.
    func testSentHeadAndEndAreRecordedInTheStepThatSentThem() throws {
        var script = FlowScript()
        script.start(Script.get())
        script.send(.requestEnd(trailers: nil))
        script.open()
        script.send(.responseHead(Script.ok(length: 0), wire: Script.wire(Script.ok(length: 0))))
        XCTAssertEqual(script.log.last, .sendResponse(.head(Script.ok(length: 0))), "no further step needed for the head")
        let end = script.send(.responseEnd(trailers: nil))
        XCTAssertEqual(end.count, 2, "\(end)")
        XCTAssertEqual(end.first, .sendResponse(.end(trailers: nil)))
        let record = try XCTUnwrap(script.record, "finished in the step that sent the end")
        XCTAssertEqual(record.leg(.downstream)?.response?.status, 200)
        XCTAssertEqual(record.leg(.downstream)?.response?.complete, true)
    }

    /// A send to the client that fails is handled after the step's other
    /// commands: the client is gone, the upstream abandoned, and the record
    /// holds no head that did not go out.
    func testFailedSendToTheClientEndsTheExchangeInTheSameStep() throws {
        var script = FlowScript()
        script.start(Script.get())
        script.send(.requestEnd(trailers: nil))
        script.open()
        let reset = ProxyError(.reset, at: .downstreamResponseHead, "stream reset by peer",
                               status: .connectionTerminated)
        script.io.failClient = reset
        let commands = script.send(.responseHead(Script.ok(length: 5), wire: Script.wire(Script.ok(length: 5))))
        XCTAssertEqual(Array(commands.prefix(2)), [.sendResponse(.head(Script.ok(length: 5))), .abandonUpstream])
        XCTAssertTrue(script.flow.isFinished)
        let record = try XCTUnwrap(script.record)
        XCTAssertEqual(record.error, reset.failure)
        XCTAssertNil(record.leg(.downstream)?.response, "the head never went out")
        XCTAssertEqual(record.leg(.upstream)?.response?.status, 200)
    }

    /// A send upstream that fails is the upstream's failure: the driver let
    /// go of the stream already (no `.abandonUpstream`), the leg is broken,
    /// and the client is answered 502.
    func testFailedSendUpstreamFailsTheUpstreamLegAndAnswers502() throws {
        var script = FlowScript(framing: .contentLength(10))
        script.start(Script.post(length: 10))
        script.open()
        let reset = ProxyError(.reset, at: .upstreamRequestBody, "connection reset by peer",
                               status: .connectionTerminated)
        script.io.failUpstream = reset
        let commands = script.send(.requestBody(Script.bytes(5)))
        XCTAssertEqual(commands.first, .sendRequestBody(Script.bytes(5)))
        XCTAssertFalse(commands.contains(.abandonUpstream), "\(commands)")
        XCTAssertEqual(script.clientHeads.map(\.status), [502])
        script.send(.requestEnd(trailers: nil))
        let record = try XCTUnwrap(script.record)
        XCTAssertEqual(record.error, reset.failure)
        XCTAssertEqual(record.leg(.upstream)?.broken, "upstream request body: connection reset by peer")
        XCTAssertEqual(record.leg(.downstream)?.response?.status, 502)
    }

    /// An HTTP/2 origin answers no `Expect: 100-continue`: once the stream
    /// is open, the client that may wait gets the proxy's own 100, recorded
    /// as an interim response on its leg, in the same step.
    func testAClientWaitingForA100GetsTheProxysOwnWhenTheUpstreamIsHTTP2() throws {
        for upstreamVersion in [HTTPVersion.http2, .http1_1] {
            var script = FlowScript(framing: .contentLength(4), expectsContinue: true)
            var request = Script.post(length: 4)
            request.fields.append("Expect", "100-continue")
            script.start(request)
            script.io.owedContinue = HTTPResponseHead(status: 100)
            var sent = try XCTUnwrap(script.openedHead)
            sent.version = upstreamVersion
            let commands = script.send(.upstreamOpened(connection: Script.upstreamConnection, tls: nil, streamID: 1,
                                                       sent: sent, wire: Script.wire(sent)))
            XCTAssertEqual(commands, upstreamVersion == .http2 ? [.sendContinueIfOwed] : [], "\(upstreamVersion)")
            script.send(.requestBody(Script.bytes(4)))
            script.send(.requestEnd(trailers: nil))
            script.send(.responseHead(Script.ok(length: 0), wire: Script.wire(Script.ok(length: 0))))
            script.send(.responseEnd(trailers: nil))
            let record = try XCTUnwrap(script.record)
            XCTAssertEqual(record.leg(.downstream)?.interimResponses?.map(\.status),
                           upstreamVersion == .http2 ? [100] : nil, "\(upstreamVersion)")
        }
    }
}
