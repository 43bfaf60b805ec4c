import Evidence
import Foundation
import Hashing
import IntactTestSupport
import Proxy
import XCTest

/// HTTP/1.1 `Upgrade` through the proxy, driven by a Python (standard
/// library) WebSocket client against `UpgradeOrigin`: the 101 relayed, the
/// frames echoed through, each leg's relayed streams counted and digested
/// in the record; a refused upgrade relayed as is; and, on the playbook, a
/// stalled peer holding the sender back.
final class ProxyUpgradeTests: XCTestCase {
    /// The client: `mode port cafile origin-port frames [--again]`.
    /// Sends the handshake, prints the status line; after a 101 sends
    /// `frames` masked text frames, reads the echo, half-closes and prints
    /// `echo <bytes> <digest>` (HMAC-SHA-256 under the harness's digest key,
    /// as the recording digests); after a refusal sends `--again` a second
    /// request on the same connection and prints its status line.
    private static let client = #"""
    import hashlib, hmac, socket, ssl, sys
    mode, port, cafile, origin = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    \#(UpgradeOrigin.pythonTextFrames)
    frames = int(sys.argv[5])
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    def head():
        data = b""
        while not data.endswith(b"\r\n\r\n"):
            byte = s.recv(1)
            if not byte: break
            data += byte
        return data.decode("latin-1")
    if mode == "connect":
        s.sendall(("CONNECT 127.0.0.1:%s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\n\r\n" % (origin, origin)).encode())
        print(head().split("\r\n")[0])
    if mode in ("reverse", "connect"):
        context = ssl.create_default_context(cafile=cafile)
        context.check_hostname = False
        context.set_alpn_protocols(["http/1.1"])
        s = context.wrap_socket(s, server_hostname="localhost")
        target = "/chat"
    else:
        target = "http://127.0.0.1:%s/chat" % origin
    s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n" % (target, origin)).encode())
    answer = head()
    print(answer.split("\r\n")[0])
    if " 101 " in answer.split("\r\n")[0] + " ":
        data = text_frames(frames)
        s.sendall(data)
        got = b""
        while len(got) < len(data):
            more = s.recv(65536)
            if not more: break
            got += more
        if mode == "forward":
            s.shutdown(socket.SHUT_WR)
        else:
            s = s.unwrap()
            s.shutdown(socket.SHUT_WR)
        rest = b""
        while True:
            more = s.recv(65536)
            if not more: break
            rest += more
        print("echo %d %s %s" % (len(got), hmac.new(b"\x42" * 32, got, hashlib.sha256).hexdigest(), got == data))
        print("rest %r" % rest.decode("latin-1"))
    elif "--again" in sys.argv:
        length = [l for l in answer.split("\r\n") if l.lower().startswith("content-length:")]
        if length: s.recv(int(length[0].split(":")[1]))
        s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\n\r\n" % (target, origin)).encode())
        print(head().split("\r\n")[0])
    """#

    private func runClient(_ mode: String, proxy: ProxyHarness, origin: UpgradeOrigin, frames: Int = 0,
                           originPort: Int? = nil, _ extra: [String] = []) throws -> [String] {
        let run = try ToolRun.run("/usr/bin/env", ["python3", "-c", Self.client, mode, String(proxy.port), proxy.caFile,
                                                   String(originPort ?? origin.port), String(frames)] + extra,
                                  timeout: 60)
        XCTAssertEqual(run.status, 0, run.error)
        return run.output.split(separator: "\n").map(String.init)
    }

    private func reverseProxy(to origin: UpgradeOrigin) throws -> ProxyHarness {
        let upstream = try XCTUnwrap(UpstreamTarget(scheme: .http, host: "127.0.0.1", port: origin.port))
        return try ProxyHarness(mode: .reverse(upstream))
    }

    /// The frames went both ways through the proxy and each leg's record
    /// holds the same counts and digests as the client saw.
    private func assertEchoed(_ mode: String, _ proxy: ProxyHarness, _ origin: UpgradeOrigin,
                              originPort: Int? = nil) throws {
        let frames = 500
        var lines = try runClient(mode, proxy: proxy, origin: origin, frames: frames, originPort: originPort)
        if mode == "connect" { XCTAssertEqual(lines.removeFirst().prefix(12), "HTTP/1.1 200") }
        XCTAssertEqual(lines.first, "HTTP/1.1 101 Switching Protocols")
        XCTAssertEqual(lines.last, "rest ''")
        let echo = try XCTUnwrap(lines.dropLast().last?.split(separator: " ").map(String.init))
        let size = frames * 19
        XCTAssertEqual(echo, ["echo", String(size), echo.count > 2 ? echo[2] : "", "True"])
        let head = try XCTUnwrap(origin.requestHeads.first)
        XCTAssertTrue(head.contains("\r\nUpgrade: websocket\r\n"), head)
        XCTAssertTrue(head.contains("\r\nConnection: Upgrade\r\n"), head)
        let recording = try proxy.stopAndRead()
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
        for role in [ExchangeRecord.Leg.Role.downstream, .upstream] {
            let leg = try XCTUnwrap(record.leg(role))
            XCTAssertEqual(leg.response?.status, 101, "\(role)")
            let relayed = try XCTUnwrap(leg.relayed, "\(role)")
            XCTAssertEqual(relayed.clientToServer.bytes, size, "\(role)")
            XCTAssertEqual(relayed.serverToClient.bytes, size, "\(role)")
            XCTAssertEqual(relayed.clientToServer.sha256.hex, echo[2], "\(role)")
            XCTAssertEqual(relayed.serverToClient.sha256.hex, echo[2], "\(role)")
        }
        if originPort == nil { XCTAssertEqual(origin.echoedByteCounts, [size]) }
    }

    func testAWebSocketThroughTheReverseProxyIsRelayedAndRecorded() throws {
        let origin = try UpgradeOrigin()
        defer { origin.stop() }
        try assertEchoed("reverse", try reverseProxy(to: origin), origin)
    }

    func testAWebSocketThroughTheForwardProxyIsRelayedAndRecorded() throws {
        let origin = try UpgradeOrigin()
        defer { origin.stop() }
        try assertEchoed("forward", try ProxyHarness(), origin)
    }

    /// Forward mode inside an intercepted CONNECT tunnel, to a TLS origin
    /// (nginx, HTTP/1.1 only, proxying the WebSocket to the echo origin).
    func testAWebSocketInsideAnInterceptedConnectTunnelIsRelayedAndRecorded() throws {
        let origin = try UpgradeOrigin()
        defer { origin.stop() }
        let nginx = try NginxOrigin(http2: false, serverExtra: """
            location /chat {
                proxy_pass http://127.0.0.1:\(origin.port);
                proxy_http_version 1.1;
                proxy_set_header Upgrade $http_upgrade;
                proxy_set_header Connection "Upgrade";
            }
            """)
        defer { nginx.stop() }
        let proxy = try ProxyHarness { $0.upstreamVerification = .caFile(nginx.caFile) }
        try assertEchoed("connect", proxy, origin, originPort: nginx.port)
    }

    /// Bytes the origin sends with its 101, and its FIN right after, reach
    /// the client (they were read before the relay took the connection).
    func testBytesAndAFinThatCameWithThe101AreRelayed() throws {
        let origin = try UpgradeOrigin(greeting: "hello from the origin")
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let lines = try runClient("forward", proxy: proxy, origin: origin, originPort: nil)
        XCTAssertEqual(lines.first, "HTTP/1.1 101 Switching Protocols")
        XCTAssertEqual(lines.last, "rest 'hello from the origin'")
        let record = try XCTUnwrap(proxy.stopAndRead().records.first)
        XCTAssertNil(record.error)
        for role in [ExchangeRecord.Leg.Role.downstream, .upstream] {
            XCTAssertEqual(record.leg(role)?.relayed?.serverToClient.bytes, 21, "\(role)")
            XCTAssertEqual(record.leg(role)?.relayed?.clientToServer.bytes, 0, "\(role)")
        }
    }

    func testARefusedUpgradeIsRelayedAsIsAndTheConnectionStaysHTTP() throws {
        let origin = try UpgradeOrigin(accepts: false)
        defer { origin.stop() }
        let proxy = try reverseProxy(to: origin)
        let lines = try runClient("reverse", proxy: proxy, origin: origin, originPort: nil, ["--again"])
        XCTAssertEqual(lines, ["HTTP/1.1 426 Upgrade Required", "HTTP/1.1 426 Upgrade Required"])
        XCTAssertTrue(origin.requestHeads.first?.contains("\r\nUpgrade: websocket\r\n") == true)
        let records = try proxy.stopAndRead().records
        XCTAssertEqual(records.count, 2)
        for record in records {
            XCTAssertNil(record.error)
            XCTAssertEqual(record.leg(.downstream)?.response?.status, 426)
            XCTAssertNil(record.leg(.downstream)?.relayed)
        }
    }

    func testAnUpgradeAnswered200IsRelayedAsIs() throws {
        let origin = try UpgradeOrigin(accepts: false, refusal: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let lines = try runClient("forward", proxy: proxy, origin: origin, originPort: nil, ["--again"])
        XCTAssertEqual(lines, ["HTTP/1.1 200 OK", "HTTP/1.1 200 OK"])
        let records = try proxy.stopAndRead().records
        XCTAssertEqual(records.map { $0.leg(.downstream)?.response?.status }, [200, 200])
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
