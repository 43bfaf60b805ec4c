import Evidence
import Foundation
import HTTP
import XCTest
@testable import Proxy

/// An exchange that ends before its upstream leg completed records that leg
/// as broken, with why and how far it got — also when the upstream stream was
/// still being opened (the leg then has no connection and no request).
/// (`ExchangeFlowTests` checks the reason on an upload cut by the client, an
/// early answer and an upstream reset.)
final class UpstreamAbandonTests: XCTestCase {
    static let clientClosed = ProxyError(.closedEarly, at: .downstreamRequest, "the client closed the connection",
                                         status: .connectionTerminated)

    func testClientLeavingWhileTheUpstreamOpensRecordsAnUnconnectedBrokenLeg() throws {
        var script = FlowScript()
        script.start(Script.get("/slow"))
        script.send(.requestEnd(trailers: nil))
        let commands = script.send(.clientGone(Self.clientClosed))
        XCTAssertEqual(commands.first, .abandonUpstream, "the pool's request is withdrawn")
        XCTAssertTrue(script.flow.isFinished, "nothing is left to wait for")
        let record = try XCTUnwrap(script.record)
        XCTAssertEqual(record.error, Self.clientClosed.failure)
        let up = try XCTUnwrap(record.leg(.upstream), "an upstream attempt had begun")
        XCTAssertEqual(up.connectionID, "none")
        XCTAssertNil(up.request, "no head went upstream")
        XCTAssertNil(up.response)
        XCTAssertEqual(up.broken, "the client left (downstream request: the client closed the connection)"
                           + " before the upstream connection was ready")
        XCTAssertNil(record.leg(.downstream)?.broken)
        // The pool's late answer changes nothing.
        XCTAssertEqual(script.open(), [])
    }

    func testMalformedRequestBodyWhileTheUpstreamOpensNamesTheClientsRequest() throws {
        var script = FlowScript(framing: .chunked)
        script.start(Script.post(length: 10))
        let malformed = ProxyError(.protocolError, at: .downstreamRequest, "invalid chunk size",
                                   status: .httpProtocolError)
        script.send(.clientGone(malformed))
        let up = try XCTUnwrap(script.record?.leg(.upstream))
        XCTAssertEqual(up.broken, "the client's request failed (downstream request: invalid chunk size)"
                           + " before the upstream connection was ready")
    }

    func testClientLeavingMidResponseRecordsTheResponseAsNotCompletelyRead() throws {
        var script = FlowScript()
        script.start(Script.get())
        script.send(.requestEnd(trailers: nil))
        script.open()
        script.send(.responseHead(Script.ok(length: 5000), wire: Script.wire(Script.ok(length: 5000))))
        script.send(.responseBody(Script.bytes(100)))
        XCTAssertTrue(script.send(.clientGone(Self.clientClosed)).contains(.abandonUpstream))
        let up = try XCTUnwrap(script.record?.leg(.upstream))
        XCTAssertEqual(up.response?.complete, false)
        XCTAssertEqual(up.broken, "the client left (downstream request: the client closed the connection)"
                           + " before the response was completely read")
    }

    func testACompletedExchangeHasNoBrokenLeg() throws {
        var script = FlowScript()
        script.start(Script.get())
        script.send(.requestEnd(trailers: nil))
        script.open()
        script.send(.responseHead(Script.ok(length: 0), wire: Script.wire(Script.ok(length: 0))))
        script.send(.responseEnd(trailers: nil))
        let record = try XCTUnwrap(script.record)
        XCTAssertNil(record.leg(.upstream)?.broken)
        XCTAssertNil(record.leg(.downstream)?.broken)
    }

    func testABrokenLegSurvivesTheRecordingsJSONLine() throws {
        var script = FlowScript()
        script.start(Script.get())
        script.send(.clientGone(Self.clientClosed))
        let record = try XCTUnwrap(script.record)
        let line = record.jsonLine()
        let text = String(decoding: line, as: UTF8.self)
        XCTAssertTrue(text.contains(#""broken":"the client left"#), text)
        let decoded = try JSONDecoder().decode(ExchangeRecord.self, from: Data(line))
        XCTAssertEqual(decoded.leg(.upstream)?.broken, record.leg(.upstream)?.broken)
        XCTAssertEqual(decoded.leg(.upstream)?.connectionID, "none")
    }
}
