import Evidence
import HTTP
import XCTest
@testable import Proxy

/// `ExchangeFlow`'s switch to another protocol, driven by scripted events.
final class ExchangeUpgradeTests: XCTestCase {
    private static let upgradeRequest = Script.get("/chat", extra: [("Upgrade", "websocket"), ("Connection", "keep-alive, Upgrade"),
                                                                    ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")])
    private static let switching = HTTPResponseHead(status: 101, reason: "Switching Protocols",
                                                    fields: ["Upgrade": "websocket", "Connection": "Upgrade",
                                                             "Sec-WebSocket-Accept": "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="])

    func testTheUpgradeFieldsGoUpstreamAndOtherConnectionFieldsDoNot() throws {
        var script = FlowScript()
        script.start(Self.upgradeRequest)
        let sent = try XCTUnwrap(script.openedHead)
        XCTAssertEqual(sent.fields.values("Upgrade"), ["websocket"])
        XCTAssertEqual(sent.fields.values("Connection"), ["Upgrade"], "keep-alive is not forwarded")
        XCTAssertEqual(sent.fields["Sec-WebSocket-Key"], "dGhlIHNhbXBsZSBub25jZQ==")
        let plain = Script.shaped(Script.get("/", extra: [("Upgrade", "websocket")]))
        XCTAssertNil(plain.fields["Upgrade"], "Upgrade not named in Connection is hop-by-hop")
    }

    func testA101IsRelayedThenTheStreamsAndTheRecordHoldsThem() throws {
        var script = FlowScript()
        script.start(Self.upgradeRequest)
        script.send(.requestEnd(trailers: nil))
        script.open()
        XCTAssertEqual(script.send(.responseHead(Self.switching, wire: Script.wire(Self.switching))),
                       [.sendResponse(.head(HopByHop.shapeResponse(Self.switching)))])
        XCTAssertEqual(script.clientHeads.first?.fields["Upgrade"], "websocket")
        XCTAssertEqual(script.clientHeads.first?.fields["Connection"], "Upgrade")
        XCTAssertEqual(script.send(.responseEnd(trailers: nil)), [.relayUpgraded],
                       "no end goes to the client, and the upstream connection is neither reset nor pooled")
        XCTAssertFalse(script.flow.isFinished, "the exchange lasts as long as the relay")
        let up = RelayedStreams.Stream(bytes: 5, sha256: .of(Array("hello".utf8)))
        let down = RelayedStreams.Stream(bytes: 3, sha256: .of(Array("hey".utf8)))
        let streams = RelayedStreams(clientToServer: up, serverToClient: down)
        script.send(.upgradeRelayEnded(downstream: streams, upstream: streams, error: nil))
        let record = try XCTUnwrap(script.record)
        XCTAssertNil(record.error)
        XCTAssertEqual(record.leg(.downstream)?.response?.status, 101)
        XCTAssertEqual(record.leg(.upstream)?.response?.status, 101)
        XCTAssertEqual(record.leg(.downstream)?.relayed, streams)
        XCTAssertEqual(record.leg(.upstream)?.relayed, streams)
        XCTAssertEqual(record.leg(.downstream)?.response?.complete, true)
    }

    func testARefusalIsAnOrdinaryResponse() throws {
        var script = FlowScript()
        script.start(Self.upgradeRequest)
        script.send(.requestEnd(trailers: nil))
        script.open()
        let refusal = HTTPResponseHead(status: 426, fields: ["Content-Length": "0"])
        script.send(.responseHead(refusal, wire: Script.wire(refusal)))
        let last = script.send(.responseEnd(trailers: nil))
        XCTAssertEqual(last.first, .sendResponse(.end(trailers: nil)))
        XCTAssertFalse(last.contains(.relayUpgraded))
        XCTAssertNil(try XCTUnwrap(script.record).leg(.downstream)?.relayed)
    }

    func testA101ToARequestWithoutUpgradeIsA502() throws {
        var script = FlowScript()
        script.start(Script.get("/"))
        script.send(.requestEnd(trailers: nil))
        script.open()
        script.send(.responseHead(Self.switching, wire: Script.wire(Self.switching)))
        XCTAssertEqual(script.clientHeads.first?.status, 502)
        XCTAssertFalse(script.log.contains(.relayUpgraded))
        XCTAssertEqual(try XCTUnwrap(script.record).error?.kind, .protocolError)
    }

    func testAClientGoneBeforeTheRelayEndsTheExchangeBroken() throws {
        var script = FlowScript()
        script.start(Self.upgradeRequest)
        script.send(.requestEnd(trailers: nil))
        script.open()
        script.send(.responseHead(Self.switching, wire: Script.wire(Self.switching)))
        script.send(.clientGone(ProxyError(.closedEarly, at: .downstream, "gone", status: .connectionTerminated)))
        XCTAssertEqual(script.send(.responseEnd(trailers: nil)), [])
        XCTAssertEqual(try XCTUnwrap(script.record).error?.kind, .closedEarly)
    }
}
