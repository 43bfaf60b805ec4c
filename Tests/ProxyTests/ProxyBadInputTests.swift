import Evidence
import IntactTestSupport
import Foundation
import Glibc
import HTTP
import XCTest
@testable import Proxy

/// Each bad input of the issue, through a real proxy on loopback, with the
/// answer the client gets and what the recording says.
final class ProxyBadInputTests: XCTestCase {
    /// The record of the one exchange the proxy saw (after stopping it).
    private func onlyRecord(_ proxy: ProxyHarness, file: StaticString = #filePath, line: UInt = #line) throws -> ExchangeRecord {
        let records = try proxy.stopAndRead().records
        XCTAssertEqual(records.count, 1, "\(records.map(\.exchangeID))", file: file, line: line)
        return try XCTUnwrap(records.first, file: file, line: line)
    }

    func testAMalformedRequestIsAnswered400WithTheReasonAndRecorded() throws {
        let proxy = try ProxyHarness()
        let answer = try XCTUnwrap(RawSocket.exchange(port: proxy.port,
                                                      "GET http://127.0.0.1:1/ HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n"))
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 400 "), answer)
        XCTAssertTrue(answer.contains(HTTP1ParseError.missingColon.reason), answer)
        let record = try onlyRecord(proxy)
        XCTAssertEqual(record.error?.kind, .protocolError)
        XCTAssertEqual(record.error?.message, HTTP1ParseError.missingColon.reason)
        XCTAssertEqual(record.leg(.downstream)?.response?.status, 400)
    }

    /// A health check with an HTTP/0.9-style or unparseable request line
    /// (`GET /` then CRLF, as some appliances' default monitors send, or
    /// bytes that are no request): a clear 400 at once — the client waits
    /// with the connection open, so nothing may wait for more — recorded as
    /// a connection event quoting the bytes seen, never an exchange; the
    /// proxy goes on serving.
    func testAnHTTP09OrUnparseableRequestLineIsA400AndAConnectionEvent() throws {
        let origin = try RawSocket.serveLoopback { client in
            _ = RawSocket.read(client, until: "\r\n\r\n")
            RawSocket.send(client, Array("HTTP/1.1 204 No Content\r\n\r\n".utf8))
            close(client)
        }
        defer { RawSocket.stopListening(origin.fd) }
        let upstream = try XCTUnwrap(UpstreamTarget(scheme: .http, host: "127.0.0.1", port: origin.port))
        let proxy = try ProxyHarness(mode: .reverse(upstream)) { $0.listenPlain = true }
        for (line, quoted) in [("GET /\r\n", "GET /"), ("\u{01}\u{02}junk\r\n", "\\x01\\x02junk")] {
            let fd = try XCTUnwrap(RawSocket.connect(port: proxy.port))
            RawSocket.send(fd, Array(line.utf8))
            // No shutdown: the answer (and the close) must come while the client still holds the connection open.
            let answer = String(decoding: RawSocket.readAll(fd), as: UTF8.self)
            close(fd)
            XCTAssertTrue(answer.hasPrefix("HTTP/1.1 400 "), answer)
            XCTAssertTrue(answer.contains("request line \"\(quoted)\""), answer)
        }
        XCTAssertTrue(try XCTUnwrap(RawSocket.exchange(port: proxy.port, "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"))
            .hasPrefix("HTTP/1.1 204"), "the proxy goes on serving")
        let recording = try proxy.stopAndRead()
        let events = recording.records.compactMap(\.connection)
        XCTAssertEqual(events.map(\.outcome), [.unreadableRequest, .unreadableRequest], "\(recording.records)")
        XCTAssertEqual(events.map(\.received), ["GET /", "\\x01\\x02junk"])
        let http09 = try XCTUnwrap(recording.records.first { $0.connection?.received == "GET /" })
        XCTAssertEqual(http09.error?.message,
                       "request line \"GET /\" is not `method SP target SP version` (an HTTP/0.9 request: "
                       + "HTTP/1.0 or later is needed); answered 400")
        XCTAssertTrue(recording.records.filter { $0.connection != nil }.allSatisfy { RequestlessConnection.of($0) != nil })
        let report = try Verifier().verify([recording])
        XCTAssertEqual(report.exchanges.count, 1, "only the real request is an exchange")
    }

    /// An HTTP/2 request whose header list passes the 64 KiB limit is reset
    /// with ENHANCE_YOUR_CALM and leaves an exchange record with its
    /// refusal (as the HTTP/1.1 431 does), so verification reports it; the
    /// connection goes on.
    func testAnHTTP2RequestOverTheHeaderLimitIsAnExchangeRecordWithItsRefusal() throws {
        let upstream = try XCTUnwrap(UpstreamTarget(scheme: .https, host: "127.0.0.1", port: 1))
        let proxy = try ProxyHarness(mode: .reverse(upstream))
        // curl and nghttp refuse to send a header block over 64 KiB themselves; Python's h2 sends it.
        let run = try ToolRun.run("/usr/bin/python3", ["-c", Self.bigHeaderClient, String(proxy.port)], timeout: 30)
        XCTAssertEqual(run.status, 0, run.error)
        XCTAssertEqual(run.output, "reset 11\nnext 502\n", "ENHANCE_YOUR_CALM (0xb), then the connection goes on")
        let recording = try proxy.stopAndRead()
        let record = try XCTUnwrap(recording.records.first { $0.traceID == "t-big" }, "\(recording.records)")
        XCTAssertNil(RequestlessConnection.of(record), "an exchange, not a connection event")
        XCTAssertEqual(record.traceID, "t-big")
        XCTAssertEqual(record.leg(.downstream)?.streamID, 1)
        XCTAssertEqual(record.leg(.downstream)?.request?.method, "GET")
        XCTAssertEqual(record.leg(.downstream)?.request?.path, "/suite/rest/a")
        XCTAssertEqual(record.leg(.downstream)?.request?.complete, false)
        XCTAssertNil(record.leg(.upstream), "never forwarded")
        XCTAssertEqual(record.error?.kind, .protocolError)
        XCTAssertTrue(record.error?.message.contains("refused with RST_STREAM ENHANCE_YOUR_CALM") == true,
                      "\(String(describing: record.error))")
        let report = try Verifier().verify([recording])
        XCTAssertEqual(report.exchanges.count, 2, "the refused request and the next one")
        let refused = try XCTUnwrap(report.exchanges.first { $0.traceID == "t-big" })
        XCTAssertEqual(refused.method, "GET")
        XCTAssertEqual(refused.hops.map(\.verdict), [.broken], "a refused request fails the policy")
        XCTAssertFalse(report.policyHolds)
    }

    /// An h2 client that sends `GET /suite/rest/a` with a 70 kB field on
    /// stream 1, prints `reset CODE` when the stream is reset, then a small
    /// request on stream 3 and `next STATUS`.
    static let bigHeaderClient = """
        import socket, ssl, sys
        import h2.config, h2.connection, h2.events
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        context.set_alpn_protocols(["h2"])
        sock = context.wrap_socket(socket.create_connection(("127.0.0.1", int(sys.argv[1]))), server_hostname="localhost")
        conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True))
        conn.initiate_connection()
        base = [(":method", "GET"), (":scheme", "https"), (":authority", "127.0.0.1"), (":path", "/suite/rest/a")]
        conn.send_headers(1, base + [("intact-trace", "t-big"), ("x-big", "b" * 70000)], end_stream=True)
        sock.sendall(conn.data_to_send())
        sent_next = False
        while True:
            data = sock.recv(65536)
            if not data:
                break
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.StreamReset) and event.stream_id == 1:
                    print("reset", int(event.error_code))
                    conn.send_headers(3, base, end_stream=True)
                    sent_next = True
                elif isinstance(event, h2.events.ResponseReceived) and event.stream_id == 3:
                    print("next", dict(event.headers)[b":status"].decode())
                    sys.exit(0)
            sock.sendall(conn.data_to_send())
        sys.exit(1)
        """

    /// A port probe's connect-and-close, a reset, a TLS handshake with no
    /// request and a handshake the client rejects: each is recorded as a
    /// connection event with the peer, never as an exchange, and the
    /// rejected handshake says which side failed at which stage.
    func testConnectionsWithoutARequestAreRecordedAsConnectionEvents() throws {
        let upstream = try XCTUnwrap(UpstreamTarget(scheme: .https, host: "127.0.0.1", port: 1))
        let proxy = try ProxyHarness(mode: .reverse(upstream))
        let probe = try XCTUnwrap(RawSocket.connect(port: proxy.port))
        close(probe)
        let reset = try XCTUnwrap(RawSocket.connect(port: proxy.port))
        RawSocket.reset(reset)
        let target = "-connect 127.0.0.1:\(proxy.port) -servername localhost"
        let handshake = try ToolRun.run("/bin/sh", ["-c", "openssl s_client \(target) -CAfile '\(proxy.caFile)' < /dev/null"])
        XCTAssertTrue(handshake.output.contains("Verify return code: 0 (ok)"), handshake.output + handshake.error)
        let rejected = try ToolRun.run("/bin/sh", ["-c", "openssl s_client \(target) -verify_return_error < /dev/null"])
        XCTAssertNotEqual(rejected.status, 0, "the client rejects a certificate from a CA it does not know")

        let recording = try proxy.stopAndRead()
        let events = recording.records.compactMap(\.connection)
        XCTAssertEqual(recording.records.count, 4, "\(recording.records)")
        XCTAssertEqual(Set(events.map(\.outcome)), [.closed, .reset, .handshakeOnly, .handshakeFailed])
        XCTAssertTrue(events.allSatisfy { $0.peer?.hasPrefix("127.0.0.1:") == true && $0.at != nil }, "\(events)")
        XCTAssertEqual(events.first { $0.outcome == .handshakeOnly }?.tlsVersion, "TLSv1.3")
        let failed = try XCTUnwrap(recording.records.first { $0.connection?.outcome == .handshakeFailed })
        XCTAssertEqual(failed.error?.side, .client)
        XCTAssertEqual(failed.error?.stage, .tls)
        XCTAssertTrue(recording.records.allSatisfy { RequestlessConnection.of($0) != nil })

        let report = try Verifier().verify([recording])
        XCTAssertEqual(report.exchanges, [], "no connection event is an exchange")
        XCTAssertEqual(report.connections.first?.total, 4)
        XCTAssertEqual(report.connections.first?.failures.count, 1)
        XCTAssertEqual(report.problems.map(\.kind), [.noExchange])
    }

    func testConnectToAClosedPortOrUnknownHostIs502WithTheReason() throws {
        let proxy = try ProxyHarness()
        let closed = try NginxOrigin.freePort()
        let refused = try XCTUnwrap(RawSocket.exchange(port: proxy.port,
                                                       "CONNECT 127.0.0.1:\(closed) HTTP/1.1\r\nHost: 127.0.0.1:\(closed)\r\n\r\n"))
        XCTAssertTrue(refused.hasPrefix("HTTP/1.1 502 "), refused)
        XCTAssertTrue(refused.contains("error=connection_refused"), refused)
        XCTAssertTrue(refused.contains("ECONNREFUSED"), refused)
        let unknown = try XCTUnwrap(RawSocket.exchange(port: proxy.port,
                                                       "CONNECT nowhere.invalid:443 HTTP/1.1\r\nHost: nowhere.invalid:443\r\n\r\n"))
        XCTAssertTrue(unknown.hasPrefix("HTTP/1.1 502 "), unknown)
        XCTAssertTrue(unknown.contains("error=dns_error"), unknown)
        XCTAssertTrue(unknown.contains("nowhere.invalid"), unknown)
        let records = try proxy.stopAndRead().records
        XCTAssertEqual(records.map { $0.error?.kind }, [.connectionRefused, .resolution])
        XCTAssertEqual(records.map { $0.leg(.downstream)?.response?.status }, [502, 502])
    }

    func testAnUpstreamCertificateThatFailsVerificationIs502NamingWhy() throws {
        let origin = try NginxOrigin()
        defer { origin.stop() }
        try origin.serve("file", size: 10)
        // The proxy trusts the system store, which does not hold the origin's CA.
        let proxy = try ProxyHarness()
        let output = proxy.directory + "/answer"
        let run = try ToolRun.curl(["-x", proxy.proxyURL, "--cacert", proxy.caFile, "-o", output, "-w", "%{http_code}",
                                    origin.url("/file")])
        XCTAssertEqual(run.status, 0, run.error)
        XCTAssertEqual(run.output, "502")
        let body = try String(contentsOfFile: output, encoding: .utf8)
        XCTAssertTrue(body.contains("certificate"), body)
        XCTAssertTrue(body.contains("verif"), body)
        let record = try onlyRecord(proxy)
        XCTAssertEqual(record.error?.kind, .tls)
        XCTAssertNil(record.leg(.upstream), "no upstream connection was made")
        // The error names who issued the certificate and what to do (a TLS-inspecting proxy's CA is the usual cause).
        let message = record.error?.message ?? ""
        XCTAssertTrue(message.contains("(issued by \(origin.authority.subject))"), message)
        XCTAssertTrue(message.contains("trust that CA with --upstream-ca FILE (with --upstream-ca-adds to keep the system store too)"),
                      message)
    }

    /// `--upstream-ca FILE --upstream-ca-adds`: the file's CA besides the system store.
    func testAnAddedUpstreamCAIsTrustedBesidesTheSystemStore() throws {
        let origin = try NginxOrigin()
        defer { origin.stop() }
        try origin.serve("file", size: 10)
        let proxy = try ProxyHarness { $0.upstreamVerification = .systemStoreAndCAFile(origin.caFile) }
        let run = try ToolRun.curl(["-x", proxy.proxyURL, "--cacert", proxy.caFile, "-o", "/dev/null", "-w", "%{http_code}",
                                    origin.url("/file")])
        XCTAssertEqual(run.output, "200", run.error)
        XCTAssertEqual(proxy.server.configuration.recordedOptions["upstreamVerification"], "system+ca-file:\(origin.caFile)")
    }

    func testAnUpstreamResetMidBodyCutsTheClientAndIsRecordedAsBroken() throws {
        let origin = try RawOrigin(.resetMidBody(declared: 100_000, sent: 1000))
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let run = try ToolRun.curl(["-x", proxy.proxyURL, "-o", "/dev/null", "http://127.0.0.1:\(origin.port)/big"])
        XCTAssertNotEqual(run.status, 0, "curl saw a complete response")
        let record = try onlyRecord(proxy)
        XCTAssertEqual(record.error?.kind, .reset, "\(String(describing: record.error))")
        XCTAssertEqual(record.leg(.upstream)?.response?.complete, false)
        XCTAssertEqual(record.leg(.downstream)?.response?.complete, false)
        XCTAssertEqual(record.leg(.downstream)?.response?.status, 200)
    }

    func testAClientThatDisconnectsMidUploadIsRecordedAndTheUpstreamCut() throws {
        let origin = try RawOrigin(.swallow)
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let fd = try XCTUnwrap(RawSocket.connect(port: proxy.port))
        RawSocket.send(fd, Array("PUT http://127.0.0.1:\(origin.port)/up HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\nContent-Length: 1000000\r\n\r\n".utf8))
        RawSocket.send(fd, [UInt8](repeating: 0x62, count: 5000))
        usleep(200_000)
        close(fd)
        let record = try onlyRecord(proxy)
        XCTAssertEqual(record.error?.kind, .closedEarly, "\(String(describing: record.error))")
        XCTAssertEqual(record.leg(.downstream)?.request?.complete, false)
        XCTAssertEqual(record.leg(.downstream)?.request?.digest.body.length, 5000)
        XCTAssertNil(record.leg(.downstream)?.response)
        for _ in 0..<100 where origin.bodyBytesReceived.isEmpty { usleep(20_000) }
        XCTAssertEqual(origin.bodyBytesReceived, [5000], "the upstream saw the upload stop where the client's did")
    }

    func testRequestsAimedAtTheProxyItselfAreRefused() throws {
        let proxy = try ProxyHarness()
        let plain = try ToolRun.curl(["-x", proxy.proxyURL, "-w", "%{http_code}", "-o", "/dev/null",
                                      "http://127.0.0.1:\(proxy.port)/loop"])
        XCTAssertEqual(plain.output, "502", plain.error)
        let tunnel = try XCTUnwrap(RawSocket.exchange(port: proxy.port,
                                                      "CONNECT localhost:\(proxy.port) HTTP/1.1\r\nHost: localhost:\(proxy.port)\r\n\r\n"))
        XCTAssertTrue(tunnel.hasPrefix("HTTP/1.1 502 "), tunnel)
        XCTAssertTrue(tunnel.contains("error=proxy_loop_detected"), tunnel)
        let records = try proxy.stopAndRead().records
        XCTAssertEqual(records.count, 2, "no looped request reached the proxy again")
        XCTAssertTrue(records.allSatisfy { $0.leg(.upstream) == nil })
    }

    func testAClientOfferingNoKnownALPNProtocolIsRefusedAndRecorded() throws {
        let origin = try NginxOrigin()
        defer { origin.stop() }
        let proxy = try ProxyHarness(mode: .reverse(UpstreamTarget(scheme: .https, host: "127.0.0.1", port: origin.port)!)) {
            $0.upstreamVerification = .caFile(origin.caFile)
        }
        let run = try ToolRun.run("/usr/bin/openssl", ["s_client", "-connect", "127.0.0.1:\(proxy.port)", "-alpn", "spdy/3",
                                                      "-servername", "app.test", "-brief"])
        XCTAssertTrue((run.output + run.error).contains("no application protocol"), run.output + run.error)
        let record = try onlyRecord(proxy)
        XCTAssertEqual(record.exchangeID.hasSuffix(".0"), true)
        XCTAssertEqual(record.error?.kind, .tls)
        XCTAssertEqual(record.leg(.downstream)?.tls?.sni, "app.test")
    }
}
