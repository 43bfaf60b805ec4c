import Evidence
import Foundation
import HTTP
import Hashing
import IntactTestSupport
import Proxy
import XCTest

/// RFC 8441 extended CONNECT from an HTTP/2 client through the reverse
/// proxy, on the playbook (the whole proxy in memory; the test is the
/// client and the origin). To an HTTP/1.1 origin: the proxy advertises
/// SETTINGS_ENABLE_CONNECT_PROTOCOL, sends the CONNECT on as an HTTP/1.1
/// `Upgrade` with a `Sec-WebSocket-Key` of its own, checks the origin's
/// accept, answers the client 200 and relays the stream's DATA both ways;
/// the record holds the translation and the relayed streams. To an HTTP/2
/// origin: through as it is when the origin allows it, 502 when it does not.
final class ProxyExtendedConnectTests: XCTestCase {
    /// The client's extended CONNECT for a WebSocket at `/chat`.
    static let webSocketConnect = HTTPRequestHead(method: .connect, scheme: "https", authority: "origin.test", path: "/chat",
                                                  version: .http2,
                                                  fields: ["sec-websocket-version": "13", "sec-websocket-protocol": "chat"],
                                                  connectProtocol: "websocket")

    /// The reverse proxy to `scheme://origin.test`, and an HTTP/2 client of
    /// it that saw the proxy's SETTINGS_ENABLE_CONNECT_PROTOCOL.
    private func playbook(to scheme: UpstreamTarget.Scheme) throws -> (ProxyPlaybook, PlaybookHTTP2) {
        let port = scheme == .https ? 443 : 80
        let target = try XCTUnwrap(UpstreamTarget(scheme: scheme, host: "origin.test", port: port))
        let playbook = try ProxyPlaybook(mode: .reverse(target))
        let client = try playbook.connectHTTP2Client(tls: "origin.test")
        XCTAssertTrue(client.session.peerAllowsExtendedConnect, "the proxy's ENABLE_CONNECT_PROTOCOL is 1")
        return (playbook, client)
    }

    /// The non-pseudo field names of `stream`'s response head among `events`.
    private func responseFieldNames(_ events: [HTTP2Event], _ stream: HTTP2StreamID) -> [String] {
        var names: [String] = []
        for case .responseHead(stream, _, let fields) in events { names += fields.map(\.name).filter { !$0.hasPrefix(":") } }
        return names
    }

    /// Runs the playbook until `count` bytes came to `read` (or nothing moves); what came.
    private func collect(_ count: Int, _ playbook: ProxyPlaybook, _ read: () -> [UInt8]) -> [UInt8] {
        var got: [UInt8] = []
        for _ in 0..<1_000 where got.count < count {
            let more = read()
            if more.isEmpty { playbook.run() }
            got += more
        }
        return got
    }

    /// Runs the playbook until `count` bytes of DATA on `stream` came to
    /// `end`; what came (`seen` gains every event taken on the way).
    private func data(_ count: Int, on stream: HTTP2StreamID, to end: PlaybookHTTP2, _ playbook: ProxyPlaybook,
                      seen: inout [HTTP2Event]) -> [UInt8] {
        collect(count, playbook) {
            let batch = end.takeEvents()
            seen += batch
            return batch.bodies[stream] ?? []
        }
    }

    func testAnExtendedConnectBecomesAnHTTP1WebSocketAndIsRelayedAndRecorded() throws {
        let (playbook, client) = try playbook(to: .http)
        let stream = try client.session.sendRequest(Self.webSocketConnect, endStream: false)
        let origin = try playbook.acceptDial(host: "origin.test", port: 80)

        // The origin got an HTTP/1.1 WebSocket handshake with the proxy's own key.
        let head = origin.readText()
        XCTAssertTrue(head.hasPrefix("GET /chat HTTP/1.1\r\n"), head)
        XCTAssertTrue(head.contains("\r\nUpgrade: websocket\r\n"), head)
        XCTAssertTrue(head.contains("\r\nConnection: Upgrade\r\n"), head)
        XCTAssertTrue(head.contains("\r\nsec-websocket-version: 13\r\n"), head)
        XCTAssertTrue(head.contains("\r\nsec-websocket-protocol: chat\r\n"), head)
        let keyLine = try XCTUnwrap(head.components(separatedBy: "\r\n").first { $0.hasPrefix("Sec-WebSocket-Key: ") })
        XCTAssertEqual(keyLine.count, "Sec-WebSocket-Key: ".count + 24, keyLine)
        let key = String(keyLine.dropFirst("Sec-WebSocket-Key: ".count))
        origin.send(ProxyUpgradeTests.switching(accept: ExtendedConnect.webSocketAccept(key: key)))
        playbook.run()
        var events = client.takeEvents()
        XCTAssertEqual(events.statuses[stream], 200)
        // No HTTP/1.1 handshake field reaches the HTTP/2 client.
        let names = responseFieldNames(events, stream)
        XCTAssertFalse(names.contains { $0.contains("upgrade") || $0.contains("accept") }, "\(names)")

        let frames = ProxyUpgradeTests.textFrames(500)
        let size = frames.count
        try client.session.sendData(stream: stream, bytes: frames, endStream: false)
        // The origin echoes every byte until the client ends the stream.
        let arrived = collect(size, playbook) { origin.read() }
        XCTAssertEqual(arrived, frames)
        origin.send(arrived)
        let echo = data(size, on: stream, to: client, playbook, seen: &events)
        XCTAssertEqual(echo, frames, "the echo")
        try client.session.sendData(stream: stream, bytes: [], endStream: true)
        playbook.run()
        XCTAssertTrue(origin.receivedEOF, "the end of the stream reached the origin as a FIN")
        origin.finishSending()
        playbook.run()
        XCTAssertTrue(client.takeEvents().endedStreams.contains(stream), "ended")

        let recording = playbook.recording
        let record = try XCTUnwrap(recording.records.first { $0.leg(.downstream)?.request?.method == "CONNECT" })
        XCTAssertNil(record.error)
        let down = try XCTUnwrap(record.leg(.downstream)), up = try XCTUnwrap(record.leg(.upstream))
        XCTAssertEqual(down.request?.connectProtocol, "websocket")
        XCTAssertEqual(down.request?.version, .http2)
        XCTAssertEqual(down.response?.status, 200)
        XCTAssertNil(down.translation)
        // The upstream leg is what went on its wire: the GET with the key, and the 101.
        XCTAssertEqual(up.request?.method, "GET")
        XCTAssertNil(up.request?.connectProtocol)
        XCTAssertEqual(up.request?.version, .http1_1)
        XCTAssertEqual(up.request?.fields.first { $0.name == "Sec-WebSocket-Key" }?.value, key)
        XCTAssertEqual(up.response?.status, 101)
        XCTAssertTrue(up.translation?.contains("RFC 8441") == true, "\(String(describing: up.translation))")
        // The recording digests under the process's key when it writes no file (RedactionPolicy()).
        let digest = try XCTUnwrap(SHA256Digest(bytes: SecretDigester.ephemeral.authenticate(frames))).hex
        for leg in [down, up] {
            let relayed = try XCTUnwrap(leg.relayed, "\(leg.role)")
            XCTAssertEqual(relayed.clientToServer.bytes, size, "\(leg.role)")
            XCTAssertEqual(relayed.serverToClient.bytes, size, "\(leg.role)")
            XCTAssertEqual(relayed.clientToServer.sha256.hex, digest, "\(leg.role)")
            XCTAssertEqual(relayed.serverToClient.sha256.hex, digest, "\(leg.role)")
            XCTAssertEqual(leg.request?.digest.body.length, 0, "\(leg.role): the tunnel's bytes are no body")
            XCTAssertEqual(leg.response?.digest.body.length, 0, "\(leg.role)")
        }
        // `verify` of the proxy's own recording: the translation is RFC 8441's (equivalent, named),
        // and the relayed streams crossed the hop unchanged.
        let report = try Verifier(Verifier.Configuration(policy: .strict)).verify([recording])
        let hops = try XCTUnwrap(report.exchanges.first { $0.records.contains { $0.exchangeID == record.exchangeID } }?.hops)
        XCTAssertFalse(hops.isEmpty)
        for hop in hops {
            XCTAssertFalse((hop.request.differences + hop.response.differences).contains { $0.kind == .relayedChanged },
                           "\(hop)")
            XCTAssertLessThanOrEqual(hop.request.outcome, .equivalent, "\(hop)")
            XCTAssertLessThanOrEqual(hop.response.outcome, .equivalent, "\(hop)")
            XCTAssertTrue(hop.request.reasons.contains { $0.kind == .extendedConnect }, "\(hop.request.reasons)")
            XCTAssertTrue(hop.response.reasons.contains { $0.kind == .extendedConnect }, "\(hop.response.reasons)")
        }
        XCTAssertTrue(hops.allSatisfy { $0.verdict.passes }, "a clean proxy passes strict verification")
    }

    /// An HTTP/2 origin that allows extended CONNECT: the CONNECT goes
    /// through as it is, no translation, and the tunnel's DATA both ways.
    func testAnExtendedConnectToAnHTTP2OriginThatAllowsItPassesThrough() throws {
        let (playbook, client) = try playbook(to: .https)
        let stream = try client.session.sendRequest(Self.webSocketConnect, endStream: false)
        var settings = HTTP2Configuration()
        settings.enableConnectProtocol = true
        let origin = try playbook.acceptHTTP2Dial(host: "origin.test", port: 443, configuration: settings)
        let connect = try XCTUnwrap(origin.takeEvents().requests.first, "the extended CONNECT went upstream")
        XCTAssertEqual(connect.head.connectProtocol, "websocket")
        try origin.session.sendResponse(stream: connect.stream, head: HTTPResponseHead(status: .ok), endStream: false)
        playbook.run()
        var events = client.takeEvents()
        XCTAssertEqual(events.statuses[stream], 200)
        let frames = ProxyUpgradeTests.textFrames(300)
        try client.session.sendData(stream: stream, bytes: frames, endStream: false)
        // The origin echoes the stream's DATA, and ends it when the client does.
        var originEvents: [HTTP2Event] = []
        let arrived = data(frames.count, on: connect.stream, to: origin, playbook, seen: &originEvents)
        try origin.session.sendData(stream: connect.stream, bytes: arrived, endStream: false)
        let echo = data(frames.count, on: stream, to: client, playbook, seen: &events)
        XCTAssertEqual(echo, frames, "the echo")
        try client.session.sendData(stream: stream, bytes: [], endStream: true)
        playbook.run()
        originEvents += origin.takeEvents()
        XCTAssertTrue(originEvents.endedStreams.contains(connect.stream), "the client's end reached the origin")
        try origin.session.sendData(stream: connect.stream, bytes: [], endStream: true)
        playbook.run()
        XCTAssertTrue(client.takeEvents().endedStreams.contains(stream), "ended")

        let record = try XCTUnwrap(playbook.records.first { $0.leg(.downstream)?.request?.method == "CONNECT" })
        XCTAssertNil(record.error)
        let up = try XCTUnwrap(record.leg(.upstream))
        XCTAssertEqual(up.request?.method, "CONNECT")
        XCTAssertEqual(up.request?.connectProtocol, "websocket")
        XCTAssertEqual(up.request?.version, .http2)
        XCTAssertEqual(up.response?.status, 200)
        XCTAssertNil(up.translation)
        let digest = try XCTUnwrap(SHA256Digest(bytes: SecretDigester.ephemeral.authenticate(frames))).hex
        for leg in record.legs {
            XCTAssertEqual(leg.relayed?.clientToServer.bytes, frames.count, "\(leg.role)")
            XCTAssertEqual(leg.relayed?.serverToClient.sha256.hex, digest, "\(leg.role)")
        }
    }

    /// The client's extended CONNECT to an HTTP/1.1 origin that answers
    /// its handshake with `answer`; the client's events for the stream.
    private func answered(_ answer: (_ key: String) -> String) throws -> (ProxyPlaybook, HTTP2StreamID, [HTTP2Event]) {
        let (playbook, client) = try playbook(to: .http)
        let stream = try client.session.sendRequest(Self.webSocketConnect, endStream: false)
        let origin = try playbook.acceptDial(host: "origin.test", port: 80)
        let head = origin.readText()
        let keyLine = head.components(separatedBy: "\r\n").first { $0.hasPrefix("Sec-WebSocket-Key: ") } ?? ""
        origin.send(answer(String(keyLine.dropFirst("Sec-WebSocket-Key: ".count))))
        playbook.run()
        return (playbook, stream, client.takeEvents())
    }

    /// The origin refuses the upgrade: its answer goes to the HTTP/2 client as it is.
    func testARefusedExtendedConnectIsRelayedAsIs() throws {
        let (playbook, stream, events) = try answered { _ in ProxyUpgradeTests.refusal }
        XCTAssertEqual(events.statuses[stream], 426)
        XCTAssertEqual(events.bodies[stream].map { String(decoding: $0, as: UTF8.self) }, "nope")
        XCTAssertTrue(events.endedStreams.contains(stream))
        let record = try XCTUnwrap(playbook.records.first)
        XCTAssertNil(record.error)
        XCTAssertEqual(record.leg(.downstream)?.response?.status, 426)
        XCTAssertEqual(record.leg(.upstream)?.response?.status, 426)
        XCTAssertNil(record.leg(.downstream)?.relayed)
    }

    /// An origin whose 101 carries the wrong `Sec-WebSocket-Accept` opens no
    /// tunnel: the client gets 502 naming why, and the record says so.
    func testAWrongWebSocketAcceptIsAnswered502() throws {
        let (playbook, stream, events) = try answered { _ in ProxyUpgradeTests.switching(accept: "d3JvbmcgYWNjZXB0IHZhbHVlIQ==") }
        XCTAssertEqual(events.statuses[stream], 502)
        XCTAssertTrue(responseFieldNames(events, stream).contains("proxy-status"), "\(events)")
        let record = try XCTUnwrap(playbook.records.first)
        XCTAssertEqual(record.leg(.downstream)?.response?.status, 502)
        XCTAssertEqual(record.leg(.upstream)?.response?.status, 101)
        XCTAssertTrue(record.error?.message.contains("Sec-WebSocket-Accept") == true, "\(String(describing: record.error))")
        XCTAssertNil(record.leg(.downstream)?.relayed)
    }

    /// An HTTP/2 origin that does not allow extended CONNECT: once its
    /// SETTINGS are known (a GET went first on the pooled connection), the
    /// client gets 502 with a `Proxy-Status` naming why, and the record says so.
    func testAnHTTP2OriginWithoutExtendedConnectIsAnswered502() throws {
        let (playbook, client) = try playbook(to: .https)
        let warm = try XCTUnwrap(client.request(HTTPRequestHead(method: "GET", authority: "origin.test", path: "/")))
        let origin = try playbook.acceptHTTP2Dial(host: "origin.test", port: 443)
        for (stream, _) in origin.takeEvents().requests { origin.respond(stream, body: Array("warm".utf8)) }
        playbook.run()
        XCTAssertTrue(client.takeEvents().endedStreams.contains(warm), "warm")
        let stream = try client.session.sendRequest(Self.webSocketConnect, endStream: false)
        playbook.run()
        XCTAssertEqual(origin.takeEvents().requests.count, 0, "nothing went to the origin")
        let events = client.takeEvents()
        XCTAssertEqual(events.statuses[stream], 502)
        XCTAssertTrue(responseFieldNames(events, stream).contains("proxy-status"), "\(events)")
        let body = events.bodies[stream].map { String(decoding: $0, as: UTF8.self) } ?? ""
        XCTAssertTrue(body.contains("extended CONNECT"), body)
        // The client leaves (as the 502 ended only the proxy's side of the stream).
        client.peer.finishSending()
        playbook.run()
        let record = try XCTUnwrap(playbook.records.first { $0.leg(.downstream)?.request?.method == "CONNECT" })
        XCTAssertEqual(record.leg(.downstream)?.response?.status, 502)
        XCTAssertEqual(record.leg(.downstream)?.response?.fields.first { $0.name.lowercased() == "proxy-status" }?
                        .value.contains("destination_unavailable"), true)
        XCTAssertTrue(record.error?.message.contains("SETTINGS_ENABLE_CONNECT_PROTOCOL") == true,
                      "\(String(describing: record.error))")
    }

    /// An HTTP/2 origin that accepts the extended CONNECT and then consumes
    /// nothing, on the playbook: the proxy stops taking the client's DATA
    /// (its stream window closes), so what the client manages to send is
    /// bounded by the windows; all of it arrives once the origin consumes.
    func testAPeerThatStopsReadingHoldsTheHTTP2SenderBack() throws {
        let target = try XCTUnwrap(UpstreamTarget(scheme: .https, host: "origin.test", port: 443))
        let playbook = try ProxyPlaybook(mode: .reverse(target))
        let client = try playbook.connectHTTP2Client(tls: "origin.test")
        XCTAssertTrue(client.session.peerAllowsExtendedConnect)
        let stream = try client.session.sendRequest(HTTPRequestHead(method: .connect, scheme: "https", authority: "origin.test",
                                                                    path: "/chat", version: .http2, connectProtocol: "websocket"),
                                                    endStream: false)
        var settings = HTTP2Configuration()
        settings.enableConnectProtocol = true
        let origin = try playbook.acceptHTTP2Dial(host: "origin.test", port: 443, configuration: settings, consumesData: false)
        let connect = try XCTUnwrap(origin.takeEvents().requests.first, "the extended CONNECT went upstream as it is")
        XCTAssertEqual(connect.head.connectProtocol, "websocket")
        try origin.session.sendResponse(stream: connect.stream, head: HTTPResponseHead(status: .ok), endStream: false)
        playbook.run()
        XCTAssertEqual(client.takeEvents().statuses[stream], 200)
        let flood = [UInt8](repeating: 0x78, count: 32 << 20)
        try client.session.sendData(stream: stream, bytes: flood, endStream: false)
        playbook.run()
        XCTAssertGreaterThan(client.session.queuedBytes(stream: stream), 28 << 20,
                             "the proxy kept reading a client whose peer stopped")
        var received = 0
        for _ in 0..<100_000 where received < flood.count {
            for case .data(connect.stream, let bytes) in origin.takeEvents() {
                received += bytes.count
                origin.session.consumed(stream: connect.stream, bytes: bytes.count)
            }
            playbook.run()
        }
        XCTAssertEqual(received, flood.count, "every byte arrives once the origin consumes")
    }
}
