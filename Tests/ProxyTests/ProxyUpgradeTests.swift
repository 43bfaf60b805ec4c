import Evidence
import Foundation
import HTTP
import Hashing
import IntactTestSupport
import Proxy
import XCTest

/// HTTP/1.1 `Upgrade` through the proxy, on the playbook (the whole proxy
/// in memory; the test is the WebSocket client and the echo origin): the
/// 101 relayed, the frames echoed through, each leg's relayed streams
/// counted and digested in the record; a refused upgrade relayed as is; a
/// stalled peer holding the sender back.
final class ProxyUpgradeTests: XCTestCase {
    static let key = "dGhlIHNhbXBsZSBub25jZQ=="
    static let switching = switching(accept: ExtendedConnect.webSocketAccept(key: key))

    /// An origin's 101 with `accept` as its `Sec-WebSocket-Accept` (RFC 6455
    /// §4.2.2 derives it from the request's key: `ExtendedConnect.webSocketAccept`).
    static func switching(accept: String) -> String {
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: \(accept)\r\n\r\n"
    }
    static let refusal = "HTTP/1.1 426 Upgrade Required\r\nContent-Length: 4\r\n\r\nnope"

    /// How the client reaches the origin: `reverse` (TLS to the proxy, a
    /// plain origin), `forward` (plain, absolute form), `connect` (inside
    /// an intercepted CONNECT tunnel, to a TLS origin).
    enum Route { case reverse, forward, connect }

    /// A WebSocket client's handshake for `target`.
    static func handshake(_ target: String) -> String {
        "GET \(target) HTTP/1.1\r\nHost: origin.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\r\n"
    }

    /// `count` masked text frames of "hello, intact" (19 bytes each), as RFC 6455 §5.2 frames a client's message.
    static func textFrames(_ count: Int) -> [UInt8] {
        let mask: [UInt8] = [1, 2, 3, 4]
        let payload = Array("hello, intact".utf8)
        let frame = [0x81, 0x80 | UInt8(payload.count)] + mask + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        return Array([[UInt8]](repeating: frame, count: count).joined())
    }

    /// A playbook for `route`, its client connected (and through the
    /// tunnel, for `connect`), and the request target the client sends.
    private func open(_ route: Route) throws -> (ProxyPlaybook, PlaybookPeer, String) {
        switch route {
        case .reverse:
            let upstream = try XCTUnwrap(UpstreamTarget(scheme: .http, host: "origin.test", port: 80))
            let playbook = try ProxyPlaybook(mode: .reverse(upstream))
            return (playbook, try playbook.connectClient(tls: "localhost"), "/chat")
        case .forward:
            let playbook = try ProxyPlaybook()
            return (playbook, try playbook.connectClient(), "http://origin.test/chat")
        case .connect:
            let playbook = try ProxyPlaybook()
            let client = try playbook.connectClient()
            client.send("CONNECT origin.test:443 HTTP/1.1\r\nHost: origin.test:443\r\n\r\n")
            _ = try playbook.acceptDial(host: "origin.test", port: 443, tls: true)
            XCTAssertEqual(client.readText().prefix(12), "HTTP/1.1 200")
            try playbook.startClientTLS(client, serverName: "origin.test")
            return (playbook, client, "/chat")
        }
    }

    /// The proxy's dial for `route`, answered by the test's origin.
    private func origin(_ playbook: ProxyPlaybook, _ route: Route) throws -> PlaybookPeer {
        route == .connect
            ? try playbook.acceptDial(host: "origin.test", port: 443, tls: true)
            : try playbook.acceptDial(host: "origin.test", port: 80)
    }

    /// The frames went both ways through the proxy and each leg's record
    /// holds the same counts and digests as the client saw.
    private func assertEchoed(_ route: Route) throws {
        let (playbook, client, target) = try open(route)
        client.send(Self.handshake(target))
        let origin = try origin(playbook, route)
        let head = origin.readText()
        XCTAssertTrue(head.contains("\r\nUpgrade: websocket\r\n"), head)
        XCTAssertTrue(head.contains("\r\nConnection: Upgrade\r\n"), head)
        origin.send(Self.switching)
        playbook.run()
        XCTAssertTrue(client.readText().hasPrefix("HTTP/1.1 101 Switching Protocols\r\n"))
        let frames = Self.textFrames(500)
        let size = frames.count
        XCTAssertEqual(size, 500 * 19)
        client.send(frames)
        playbook.run()
        // The origin echoes every byte until the client's FIN.
        let arrived = origin.read()
        XCTAssertEqual(arrived, frames)
        origin.send(arrived)
        playbook.run()
        XCTAssertEqual(client.read(), frames, "the echo")
        client.finishSending()
        playbook.run()
        XCTAssertTrue(origin.receivedEOF, "the client's FIN reached the origin")
        XCTAssertEqual(origin.read(), [])
        origin.finishSending()
        playbook.run()
        XCTAssertEqual(client.read(), [], "nothing after the echo")
        XCTAssertTrue(client.receivedEOF, "the origin's FIN reached the client")

        let recording = playbook.recording
        let upgraded = recording.records.filter { $0.leg(.downstream)?.response?.status == 101 }
        XCTAssertEqual(upgraded.count, 1, "\(recording.records.map(\.exchangeID))")
        let record = try XCTUnwrap(upgraded.first)
        XCTAssertNil(record.error)
        // `verify` of the proxy's own recording: its hop relayed the streams unchanged.
        let report = try Verifier(Verifier.Configuration(policy: .strict)).verify([recording])
        let hops = try XCTUnwrap(report.exchanges.first { $0.records.contains { $0.exchangeID == record.exchangeID } }?.hops)
        XCTAssertFalse(hops.isEmpty)
        for hop in hops {
            // (Reverse mode to a plain origin changes the request's scheme: that is the setup, not the relay.)
            XCTAssertLessThanOrEqual(hop.response.outcome, .equivalent, "\(hop)")
            XCTAssertFalse((hop.request.differences + hop.response.differences).contains { $0.kind == .relayedChanged },
                           "\(hop)")
        }
        // The recording digests under the process's key when it writes no file (RedactionPolicy()).
        let digest = try XCTUnwrap(SHA256Digest(bytes: SecretDigester.ephemeral.authenticate(frames))).hex
        for role in [ExchangeRecord.Leg.Role.downstream, .upstream] {
            let leg = try XCTUnwrap(record.leg(role))
            XCTAssertEqual(leg.response?.status, 101, "\(role)")
            let relayed = try XCTUnwrap(leg.relayed, "\(role)")
            XCTAssertEqual(relayed.clientToServer.bytes, size, "\(role)")
            XCTAssertEqual(relayed.serverToClient.bytes, size, "\(role)")
            XCTAssertEqual(relayed.clientToServer.sha256.hex, digest, "\(role)")
            XCTAssertEqual(relayed.serverToClient.sha256.hex, digest, "\(role)")
        }
    }

    func testAWebSocketThroughTheReverseProxyIsRelayedAndRecorded() throws {
        try assertEchoed(.reverse)
    }

    func testAWebSocketThroughTheForwardProxyIsRelayedAndRecorded() throws {
        try assertEchoed(.forward)
    }

    /// Forward mode inside an intercepted CONNECT tunnel, to a TLS origin (HTTP/1.1 only).
    func testAWebSocketInsideAnInterceptedConnectTunnelIsRelayedAndRecorded() throws {
        try assertEchoed(.connect)
    }

    /// Bytes the origin sends with its 101, and its FIN right after, reach
    /// the client (they were read before the relay took the connection).
    func testBytesAndAFinThatCameWithThe101AreRelayed() throws {
        let (playbook, client, target) = try open(.forward)
        client.send(Self.handshake(target))
        let origin = try origin(playbook, .forward)
        _ = origin.read()
        origin.send(Self.switching + "hello from the origin")
        origin.finishSending()
        playbook.run()
        let answer = client.readText()
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 101 Switching Protocols\r\n"), answer)
        XCTAssertTrue(answer.hasSuffix("\r\n\r\nhello from the origin"), answer)
        XCTAssertTrue(client.receivedEOF, "the origin's FIN came through")
        client.finishSending()
        playbook.run()
        let record = try XCTUnwrap(playbook.records.first)
        XCTAssertNil(record.error)
        for role in [ExchangeRecord.Leg.Role.downstream, .upstream] {
            XCTAssertEqual(record.leg(role)?.relayed?.serverToClient.bytes, 21, "\(role)")
            XCTAssertEqual(record.leg(role)?.relayed?.clientToServer.bytes, 0, "\(role)")
        }
    }

    /// An upgrade the origin answers `refusal` (no 101), then a second
    /// request on the same client connection, answered the same: the
    /// status lines the client read.
    private func refusedTwice(_ route: Route, refusal: String) throws -> (ProxyPlaybook, [String], [String]) {
        let (playbook, client, target) = try open(route)
        client.send(Self.handshake(target))
        let origin = try origin(playbook, route)
        var heads = [origin.readText()]
        var lines: [String] = []
        origin.send(refusal)
        playbook.run()
        lines.append(client.readText().components(separatedBy: "\r\n")[0])
        client.send("GET \(target) HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        playbook.run()
        // The connection stays HTTP: the next request goes on it.
        XCTAssertTrue(playbook.network.dials.isEmpty, "the upstream connection was kept")
        heads.append(origin.readText())
        origin.send(refusal)
        playbook.run()
        lines.append(client.readText().components(separatedBy: "\r\n")[0])
        return (playbook, lines, heads)
    }

    func testARefusedUpgradeIsRelayedAsIsAndTheConnectionStaysHTTP() throws {
        let (playbook, lines, heads) = try refusedTwice(.reverse, refusal: Self.refusal)
        XCTAssertEqual(lines, ["HTTP/1.1 426 Upgrade Required", "HTTP/1.1 426 Upgrade Required"])
        XCTAssertTrue(heads.first?.contains("\r\nUpgrade: websocket\r\n") == true)
        let records = playbook.records
        XCTAssertEqual(records.count, 2)
        for record in records {
            XCTAssertNil(record.error)
            XCTAssertEqual(record.leg(.downstream)?.response?.status, 426)
            XCTAssertNil(record.leg(.downstream)?.relayed)
        }
    }

    func testAnUpgradeAnswered200IsRelayedAsIs() throws {
        let (playbook, lines, _) = try refusedTwice(.forward, refusal: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        XCTAssertEqual(lines, ["HTTP/1.1 200 OK", "HTTP/1.1 200 OK"])
        XCTAssertEqual(playbook.records.map { $0.leg(.downstream)?.response?.status }, [200, 200])
    }

    /// The origin reads nothing after its 101, on the playbook: the proxy
    /// stops reading the client once the upstream write queue is full, so
    /// what the client manages to send is bounded by the watermark; all of
    /// it arrives once the origin reads.
    func testAPeerThatStopsReadingHoldsTheSenderBack() throws {
        let playbook = try ProxyPlaybook()
        let client = try playbook.connectClient()
        client.send("GET http://origin.test/chat HTTP/1.1\r\nHost: origin.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
        let origin = try playbook.acceptDial(host: "origin.test", port: 80)
        XCTAssertTrue(origin.readText().hasPrefix("GET /chat HTTP/1.1\r\n"))
        origin.peer.receiveWindow = 64 * 1024 // reads no more than this until the test reads
        origin.send("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
        playbook.run()
        XCTAssertTrue(client.readText().hasPrefix("HTTP/1.1 101 "))
        let flood = [UInt8](repeating: 0x78, count: 32 << 20)
        client.send(flood)
        playbook.run()
        XCTAssertGreaterThan(client.peer.unconsumedByteCount, 28 << 20, "the proxy kept reading a client whose peer stopped")
        var received = 0
        for _ in 0..<100_000 where received < flood.count {
            received += origin.read().count
            playbook.run()
        }
        XCTAssertEqual(received, flood.count, "every byte arrives once the origin reads")
    }
}
