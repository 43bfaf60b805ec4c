import Evidence
import Foundation
import HTTP
import IntactTestSupport
import Proxy
import XCTest

/// RFC 8441 extended CONNECT from an HTTP/2 client (Python's `h2`, Debian's
/// python3-h2) through the reverse proxy to `UpgradeOrigin`, which speaks
/// HTTP/1.1: the proxy advertises SETTINGS_ENABLE_CONNECT_PROTOCOL, sends
/// the CONNECT on as an HTTP/1.1 `Upgrade` with a `Sec-WebSocket-Key` of its
/// own, checks the origin's accept, answers the client 200 and relays the
/// stream's DATA both ways; the record holds the translation and the relayed
/// streams.
final class ProxyExtendedConnectTests: XCTestCase {
    /// The client: `port cafile frames [--warm]`. Prints `setting <value>`
    /// (the server's ENABLE_CONNECT_PROTOCOL), then `status <code>`; after a
    /// 200 sends `frames` masked WebSocket text frames as DATA, reads the
    /// echo, ends the stream and prints `echo <bytes> <digest> <same>` (HMAC-SHA-256
    /// under the harness's digest key, as the recording digests), then
    /// `ended`; after another status prints the body as `body <text>`. With
    /// `--warm` a GET goes first on the connection (`warm` once answered).
    private static let client = #"""
    import hashlib, hmac, socket, ssl, sys
    import h2.config, h2.connection, h2.events, h2.settings
    port, cafile, frames = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    \#(UpgradeOrigin.pythonTextFrames)
    context = ssl.create_default_context(cafile=cafile)
    context.check_hostname = False
    context.set_alpn_protocols(["h2"])
    s = context.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10), server_hostname="localhost")
    conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    conn.initiate_connection()
    s.sendall(conn.data_to_send())
    events = []
    def pump():
        data = s.recv(65536)
        if not data:
            raise SystemExit("connection closed")
        for event in conn.receive_data(data):
            events.append(event)
            if isinstance(event, h2.events.DataReceived):
                conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        s.sendall(conn.data_to_send())
    def take(kind):
        while True:
            for i, event in enumerate(events):
                if isinstance(event, kind):
                    return events.pop(i)
            pump()
    setting = None
    while setting is None:
        for event in list(events):
            if isinstance(event, h2.events.RemoteSettingsChanged):
                changed = event.changed_settings.get(h2.settings.SettingCodes.ENABLE_CONNECT_PROTOCOL)
                setting = changed.new_value if changed else 0
        if setting is None: pump()
    print("setting %d" % setting)
    if "--warm" in sys.argv:
        warm = conn.get_next_available_stream_id()
        conn.send_headers(warm, [(":method", "GET"), (":scheme", "https"), (":path", "/"),
                                 (":authority", "127.0.0.1:%d" % port)], end_stream=True)
        s.sendall(conn.data_to_send())
        while True:
            event = take((h2.events.StreamEnded, h2.events.StreamReset))
            if event.stream_id == warm: break
        events[:] = [e for e in events if getattr(e, "stream_id", None) != warm]
        print("warm")
    stream = conn.get_next_available_stream_id()
    conn.send_headers(stream, [(":method", "CONNECT"), (":protocol", "websocket"), (":scheme", "https"),
                               (":path", "/chat"), (":authority", "127.0.0.1:%d" % port),
                               ("sec-websocket-version", "13"), ("sec-websocket-protocol", "chat")])
    s.sendall(conn.data_to_send())
    response = take(h2.events.ResponseReceived)
    headers = dict(response.headers)
    print("status %s" % headers[":status"])
    print("headers %s" % sorted(k for k in headers if not k.startswith(":")))
    if headers[":status"] == "200":
        data = text_frames(frames)
        for start in range(0, len(data), 1000):
            while conn.local_flow_control_window(stream) < 1000:
                pump()
            conn.send_data(stream, data[start:start + 1000])
            s.sendall(conn.data_to_send())
        got = b""
        while len(got) < len(data):
            got += take(h2.events.DataReceived).data
        conn.end_stream(stream)
        s.sendall(conn.data_to_send())
        take(h2.events.StreamEnded)
        print("echo %d %s %s" % (len(got), hmac.new(b"\x42" * 32, got, hashlib.sha256).hexdigest(), got == data))
        print("ended")
    else:
        body = b""
        while True:
            event = take((h2.events.DataReceived, h2.events.StreamEnded, h2.events.StreamReset))
            if isinstance(event, h2.events.DataReceived):
                body += event.data
            else:
                break
        print("body %s" % body.decode("latin-1"))
    """#

    private func runClient(_ proxy: ProxyHarness, frames: Int = 0, _ extra: [String] = []) throws -> [String] {
        // Debian's python3 (with python3-h2), not whatever python3 comes first on PATH.
        let run = try ToolRun.run("/usr/bin/python3", ["-c", Self.client, String(proxy.port), proxy.caFile,
                                                       String(frames)] + extra, timeout: 60)
        XCTAssertEqual(run.status, 0, run.error)
        return run.output.split(separator: "\n").map(String.init)
    }

    private func reverseProxy(to origin: UpgradeOrigin) throws -> ProxyHarness {
        let upstream = try XCTUnwrap(UpstreamTarget(scheme: .http, host: "127.0.0.1", port: origin.port))
        return try ProxyHarness(mode: .reverse(upstream))
    }

    func testAnExtendedConnectBecomesAnHTTP1WebSocketAndIsRelayedAndRecorded() throws {
        let origin = try UpgradeOrigin()
        defer { origin.stop() }
        let proxy = try reverseProxy(to: origin)
        let frames = 500
        let lines = try runClient(proxy, frames: frames)
        XCTAssertEqual(lines.first, "setting 1")
        XCTAssertEqual(lines.dropFirst().first, "status 200")
        // No HTTP/1.1 handshake field reaches the HTTP/2 client.
        XCTAssertFalse(lines.contains { $0.hasPrefix("headers") && ($0.contains("upgrade") || $0.contains("accept")) },
                       "\(lines)")
        XCTAssertEqual(lines.last, "ended")
        let size = frames * 19
        let echo = try XCTUnwrap(lines.dropLast().last?.split(separator: " ").map(String.init))
        XCTAssertEqual(echo.count, 4)
        XCTAssertEqual(echo.first, "echo")
        XCTAssertEqual(echo.dropFirst().first, String(size))
        XCTAssertEqual(echo.last, "True")

        // The origin got an HTTP/1.1 WebSocket handshake with the proxy's own key.
        let head = try XCTUnwrap(origin.requestHeads.first)
        XCTAssertTrue(head.hasPrefix("GET /chat HTTP/1.1\r\n"), head)
        XCTAssertTrue(head.contains("\r\nUpgrade: websocket\r\n"), head)
        XCTAssertTrue(head.contains("\r\nConnection: Upgrade\r\n"), head)
        XCTAssertTrue(head.contains("\r\nsec-websocket-version: 13\r\n"), head)
        XCTAssertTrue(head.contains("\r\nsec-websocket-protocol: chat\r\n"), head)
        let keyLine = try XCTUnwrap(head.components(separatedBy: "\r\n").first { $0.hasPrefix("Sec-WebSocket-Key: ") })
        XCTAssertEqual(keyLine.count, "Sec-WebSocket-Key: ".count + 24, keyLine)
        XCTAssertEqual(origin.echoedByteCounts, [size])

        let recording = try proxy.stopAndRead()
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
        XCTAssertEqual(up.request?.fields.first { $0.name == "Sec-WebSocket-Key" }?.value,
                       String(keyLine.dropFirst("Sec-WebSocket-Key: ".count)))
        XCTAssertEqual(up.response?.status, 101)
        XCTAssertTrue(up.translation?.contains("RFC 8441") == true, "\(String(describing: up.translation))")
        for leg in [down, up] {
            let relayed = try XCTUnwrap(leg.relayed, "\(leg.role)")
            XCTAssertEqual(relayed.clientToServer.bytes, size, "\(leg.role)")
            XCTAssertEqual(relayed.serverToClient.bytes, size, "\(leg.role)")
            XCTAssertEqual(relayed.clientToServer.sha256.hex, echo[2], "\(leg.role)")
            XCTAssertEqual(relayed.serverToClient.sha256.hex, echo[2], "\(leg.role)")
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

    /// An HTTP/2 origin that allows extended CONNECT (`PythonH2Origin`):
    /// the CONNECT goes through as it is, no translation, and the tunnel's
    /// DATA both ways.
    func testAnExtendedConnectToAnHTTP2OriginThatAllowsItPassesThrough() throws {
        let origin = try PythonH2Origin(.extendedConnectEcho)
        defer { origin.stop() }
        let upstream = try XCTUnwrap(UpstreamTarget(scheme: .https, host: "127.0.0.1", port: origin.port))
        let proxy = try ProxyHarness(mode: .reverse(upstream)) { $0.upstreamVerification = .caFile(origin.caFile) }
        let frames = 300
        let lines = try runClient(proxy, frames: frames)
        XCTAssertEqual(Array(lines.prefix(2)), ["setting 1", "status 200"])
        XCTAssertEqual(lines.last, "ended")
        let echo = try XCTUnwrap(lines.dropLast().last?.split(separator: " ").map(String.init))
        XCTAssertEqual(echo.count, 4)
        XCTAssertEqual(echo.last, "True")
        let record = try XCTUnwrap(proxy.stopAndRead().records.first { $0.leg(.downstream)?.request?.method == "CONNECT" })
        XCTAssertNil(record.error)
        let up = try XCTUnwrap(record.leg(.upstream))
        XCTAssertEqual(up.request?.method, "CONNECT")
        XCTAssertEqual(up.request?.connectProtocol, "websocket")
        XCTAssertEqual(up.request?.version, .http2)
        XCTAssertEqual(up.response?.status, 200)
        XCTAssertNil(up.translation)
        for leg in record.legs {
            XCTAssertEqual(leg.relayed?.clientToServer.bytes, frames * 19, "\(leg.role)")
            XCTAssertEqual(leg.relayed?.serverToClient.sha256.hex, echo[2], "\(leg.role)")
        }
    }

    /// The origin refuses the upgrade: its answer goes to the HTTP/2 client as it is.
    func testARefusedExtendedConnectIsRelayedAsIs() throws {
        let origin = try UpgradeOrigin(accepts: false)
        defer { origin.stop() }
        let proxy = try reverseProxy(to: origin)
        let lines = try runClient(proxy)
        XCTAssertEqual(Array(lines.prefix(2)), ["setting 1", "status 426"])
        XCTAssertEqual(lines.last, "body nope")
        let record = try XCTUnwrap(proxy.stopAndRead().records.first)
        XCTAssertNil(record.error)
        XCTAssertEqual(record.leg(.downstream)?.response?.status, 426)
        XCTAssertEqual(record.leg(.upstream)?.response?.status, 426)
        XCTAssertNil(record.leg(.downstream)?.relayed)
    }

    /// An origin whose 101 carries the wrong `Sec-WebSocket-Accept` opens no
    /// tunnel: the client gets 502 naming why, and the record says so.
    func testAWrongWebSocketAcceptIsAnswered502() throws {
        let origin = try UpgradeOrigin(wrongAccept: true)
        defer { origin.stop() }
        let proxy = try reverseProxy(to: origin)
        let lines = try runClient(proxy)
        XCTAssertEqual(Array(lines.prefix(2)), ["setting 1", "status 502"])
        XCTAssertTrue(lines.contains { $0.hasPrefix("headers") && $0.contains("proxy-status") }, "\(lines)")
        let record = try XCTUnwrap(proxy.stopAndRead().records.first)
        XCTAssertEqual(record.leg(.downstream)?.response?.status, 502)
        XCTAssertEqual(record.leg(.upstream)?.response?.status, 101)
        XCTAssertTrue(record.error?.message.contains("Sec-WebSocket-Accept") == true, "\(String(describing: record.error))")
        XCTAssertNil(record.leg(.downstream)?.relayed)
    }

    /// An HTTP/2 origin that does not allow extended CONNECT (nginx): once its
    /// SETTINGS are known (a GET went first on the pooled connection), the
    /// client gets 502 with a `Proxy-Status` naming why, and the record says so.
    func testAnHTTP2OriginWithoutExtendedConnectIsAnswered502() throws {
        let nginx = try NginxOrigin(http2: true)
        defer { nginx.stop() }
        let upstream = try XCTUnwrap(UpstreamTarget(scheme: .https, host: "127.0.0.1", port: nginx.port))
        let proxy = try ProxyHarness(mode: .reverse(upstream)) { $0.upstreamVerification = .caFile(nginx.caFile) }
        let lines = try runClient(proxy, ["--warm"])
        XCTAssertEqual(Array(lines.prefix(3)), ["setting 1", "warm", "status 502"])
        let headers = try XCTUnwrap(lines.first { $0.hasPrefix("headers") })
        XCTAssertTrue(headers.contains("proxy-status"), headers)
        let body = try XCTUnwrap(lines.last)
        XCTAssertTrue(body.contains("extended CONNECT"), body)
        let records = try proxy.stopAndRead().records
        let record = try XCTUnwrap(records.first { $0.leg(.downstream)?.request?.method == "CONNECT" })
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
