import Evidence
import HTTP
import XCTest
@testable import Proxy

/// `ExchangeFlow` carrying an RFC 8441 extended CONNECT, driven by scripted
/// events: the client's bytes wait for the upstream's acceptance, then both
/// bodies are the tunnel's bytes, recorded as relayed streams.
final class ExchangeTunnelTests: XCTestCase {
    private static let connect = HTTPRequestHead(method: "CONNECT", scheme: "https", authority: "origin.test:8443",
                                                 path: "/chat", version: .http2,
                                                 fields: ["sec-websocket-version": "13"], connectProtocol: "websocket")
    private static let key = "dGhlIHNhbXBsZSBub25jZQ=="

    /// The flow of an HTTP/2 client's extended CONNECT, its upstream stream opened with `sent`.
    private func opened(as sent: HTTPRequestHead, wire: HeadDigest.WireForm) throws -> FlowScript {
        var script = FlowScript(streamID: 1, framing: .chunked)
        let start = script.start(Self.connect)
        guard case .openUpstream(_, let head, let framing)? = start.first else { throw XCTSkip("no openUpstream: \(start)") }
        XCTAssertEqual(framing, .tunnel, "the CONNECT's stream stays open for the tunnel's bytes")
        XCTAssertEqual(head.connectProtocol, "websocket")
        XCTAssertEqual(script.send(.requestBody(Array("early".utf8))), [.pauseRequestBody],
                       "one read waits for the upstream's answer")
        XCTAssertEqual(script.send(.upstreamOpened(connection: Script.upstreamConnection, tls: nil, streamID: nil,
                                                   sent: sent, wire: wire)), [],
                       "nothing goes upstream before the tunnel is accepted")
        return script
    }

    func testAn101FromHTTP1OpensTheTunnelAndTheRecordHoldsTheRelayedStreams() throws {
        let sent = ExtendedConnect.http1Upgrade(Self.connect, key: Self.key)
        var script = try opened(as: sent, wire: Script.wire(sent))
        let switching = HTTPResponseHead(status: 101, fields: ["Upgrade": "websocket", "Connection": "Upgrade",
                                                               "Sec-WebSocket-Accept": "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="])
        let accepted = ExtendedConnect.acceptedResponse(switching)
        XCTAssertEqual(script.send(.responseHead(switching, wire: Script.wire(switching))),
                       [.sendResponse(.head(accepted)), .sendRequestBody(Array("early".utf8)), .resumeRequestBody])
        XCTAssertEqual(script.send(.responseBody(Array("hi".utf8))), [.sendResponse(.body(Array("hi".utf8)))])
        XCTAssertEqual(script.send(.requestBody(Array("more".utf8))), [.sendRequestBody(Array("more".utf8))])
        // The origin half-closes; the client may still send.
        let end = script.send(.responseEnd(trailers: nil))
        XCTAssertEqual(end.first, .sendResponse(.end(trailers: nil)))
        XCTAssertFalse(end.contains(.abandonUpstream), "a half-closed tunnel still carries the client's bytes")
        XCTAssertFalse(script.flow.isFinished)
        XCTAssertEqual(script.send(.requestBody(Array("!".utf8))), [.sendRequestBody(Array("!".utf8))])
        let last = script.send(.requestEnd(trailers: nil))
        XCTAssertEqual(last.first, .endRequest(trailers: nil))
        XCTAssertFalse(last.contains(.abandonUpstream), "both ways ended: nothing to reset")
        XCTAssertTrue(script.flow.isFinished)

        let record = try XCTUnwrap(script.record)
        XCTAssertNil(record.error)
        let down = try XCTUnwrap(record.leg(.downstream)), up = try XCTUnwrap(record.leg(.upstream))
        XCTAssertEqual(down.request?.method, "CONNECT")
        XCTAssertEqual(down.request?.connectProtocol, "websocket")
        XCTAssertEqual(down.response?.status, 200)
        XCTAssertEqual(up.request?.method, "GET")
        XCTAssertEqual(up.request?.fields.first { $0.name == "Sec-WebSocket-Key" }?.value, Self.key)
        XCTAssertEqual(up.response?.status, 101)
        XCTAssertNotNil(up.translation)
        XCTAssertNil(down.translation)
        let digests = Script.settings.digests
        let streams = RelayedStreams(clientToServer: .init(bytes: 10, sha256: .of(Array("earlymore!".utf8), using: digests)),
                                     serverToClient: .init(bytes: 2, sha256: .of(Array("hi".utf8), using: digests)))
        XCTAssertEqual(down.relayed, streams)
        XCTAssertEqual(up.relayed, streams)
        XCTAssertEqual(down.request?.digest.body.length, 0, "the tunnel's bytes are no body")
        XCTAssertEqual(up.response?.digest.body.length, 0)
    }

    /// An HTTP/2 upstream that allows extended CONNECT answers 200: passed through, no translation.
    func testA200FromHTTP2OpensTheTunnelAsIs() throws {
        var sent = Script.shaped(Self.connect)
        sent.version = .http2
        var script = try opened(as: sent, wire: .http2Sent(request: sent))
        let ok = HTTPResponseHead(status: 200, reason: "", version: .http2)
        XCTAssertEqual(script.send(.responseHead(ok, wire: .http2Sent(response: ok))),
                       [.sendResponse(.head(ok)), .sendRequestBody(Array("early".utf8)), .resumeRequestBody])
        script.send(.requestEnd(trailers: nil))
        script.send(.responseEnd(trailers: nil))
        let record = try XCTUnwrap(script.record)
        XCTAssertNil(record.leg(.upstream)?.translation)
        XCTAssertEqual(record.leg(.upstream)?.request?.connectProtocol, "websocket")
        XCTAssertEqual(record.leg(.upstream)?.relayed?.clientToServer.bytes, 5)
    }

    /// A 101 whose accept does not derive from the proxy's key opens nothing: 502, the upstream let go.
    func testAWrongAcceptIsA502() throws {
        let sent = ExtendedConnect.http1Upgrade(Self.connect, key: Self.key)
        var script = try opened(as: sent, wire: Script.wire(sent))
        let switching = HTTPResponseHead(status: 101, fields: ["Upgrade": "websocket", "Connection": "Upgrade",
                                                               "Sec-WebSocket-Accept": "bm90IHRoZSByaWdodCBvbmU="])
        let commands = script.send(.responseHead(switching, wire: Script.wire(switching)))
        XCTAssertTrue(commands.contains(.abandonUpstream), "\(commands)")
        XCTAssertFalse(commands.contains { if case .sendRequestBody = $0 { return true } else { return false } })
        XCTAssertEqual(script.clientHeads.map(\.status), [502])
        XCTAssertEqual(script.clientHeads.first?.fields["Proxy-Status"]?.contains("http_protocol_error"), true)
        let record = try XCTUnwrap(script.record, "a refused tunnel's exchange ends with its answer")
        XCTAssertTrue(record.error?.message.contains("Sec-WebSocket-Accept") == true)
        XCTAssertNil(record.leg(.downstream)?.relayed)
    }

    /// Any other answer is relayed as it is; the client's waiting bytes are dropped.
    func testARefusalIsRelayedAsIs() throws {
        let sent = ExtendedConnect.http1Upgrade(Self.connect, key: Self.key)
        var script = try opened(as: sent, wire: Script.wire(sent))
        let refusal = HTTPResponseHead(status: 426, fields: ["Content-Length": "4"])
        XCTAssertEqual(script.send(.responseHead(refusal, wire: Script.wire(refusal))),
                       [.sendResponse(.head(refusal)), .resumeRequestBody], "what the client still sends is read and dropped")
        script.send(.responseBody(Array("nope".utf8)))
        script.send(.responseEnd(trailers: nil))
        XCTAssertTrue(script.sentUpstream.isEmpty)
        XCTAssertEqual(script.sentToClient, Array("nope".utf8))
        let record = try XCTUnwrap(script.record)
        XCTAssertNil(record.error)
        XCTAssertEqual(record.leg(.downstream)?.response?.digest.body.length, 4)
        XCTAssertNil(record.leg(.downstream)?.relayed)
    }
}
