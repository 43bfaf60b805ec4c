import Evidence
import IntactTestSupport
import Foundation
import Glibc
import HTTP
import Wire
import XCTest
@testable import Proxy

/// Each bad input of the issue through the proxy, with the answer the
/// client gets and what the recording says: on the playbook (the whole
/// proxy in memory, the test playing client and origin), but for the one
/// input only a real HTTP/2 peer sends (a header block over 64 KiB).
final class ProxyBadInputTests: XCTestCase {
    static let noContent = "HTTP/1.1 204 No Content\r\n\r\n"

    /// The record of the one exchange the proxy saw.
    private func onlyRecord(_ playbook: ProxyPlaybook, file: StaticString = #filePath, line: UInt = #line) throws -> ExchangeRecord {
        let records = playbook.records
        XCTAssertEqual(records.count, 1, "\(records.map(\.exchangeID))", file: file, line: line)
        return try XCTUnwrap(records.first, file: file, line: line)
    }

    func testAMalformedRequestIsAnswered400WithTheReasonAndRecorded() throws {
        let playbook = try ProxyPlaybook()
        let client = try playbook.connectClient()
        client.send("GET http://127.0.0.1:1/ HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n")
        playbook.run()
        let answer = client.readText()
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 400 "), answer)
        XCTAssertTrue(answer.contains(HTTP1ParseError.missingColon.reason), answer)
        XCTAssertTrue(playbook.network.dials.isEmpty)
        let record = try onlyRecord(playbook)
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
        let upstream = try XCTUnwrap(UpstreamTarget(scheme: .http, host: "origin.test", port: 80))
        let playbook = try ProxyPlaybook(mode: .reverse(upstream)) { $0.listenPlain = true }
        for (line, quoted) in [("GET /\r\n", "GET /"), ("\u{01}\u{02}junk\r\n", "\\x01\\x02junk")] {
            let client = try playbook.connectClient()
            client.send(line)
            // No finishSending: the answer (and the close) must come while the client still holds the connection open.
            playbook.run()
            let answer = client.readText()
            XCTAssertTrue(client.receivedEOF, "the proxy closed after its answer")
            XCTAssertTrue(answer.hasPrefix("HTTP/1.1 400 "), answer)
            XCTAssertTrue(answer.contains("request line \"\(quoted)\""), answer)
        }
        let client = try playbook.connectClient()
        client.send("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        let origin = try playbook.acceptDial(host: "origin.test", port: 80)
        XCTAssertTrue(origin.readText().hasPrefix("GET / HTTP/1.1\r\n"))
        origin.send(Self.noContent)
        playbook.run()
        XCTAssertTrue(client.readText().hasPrefix("HTTP/1.1 204"), "the proxy goes on serving")
        let recording = playbook.recording
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
    /// connection goes on. On a socket: nghttp2 (the playbook's HTTP/2 end,
    /// curl's, nghttp's) refuses to send a header block over 64 KiB, so the
    /// input comes from Python's h2.
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
        let upstream = try XCTUnwrap(UpstreamTarget(scheme: .https, host: "origin.test", port: 443))
        let playbook = try ProxyPlaybook(mode: .reverse(upstream))
        let probe = try playbook.connectClient()
        probe.finishSending()
        let reset = try playbook.connectClient()
        reset.reset()
        let handshake = try playbook.connectClient(tls: "localhost")
        XCTAssertNil(handshake.tlsFailure)
        XCTAssertNotNil(handshake.negotiated, "the client trusts the proxy's leaf")
        handshake.finishSending()
        // A client that knows another CA only rejects the proxy's leaf.
        let rejected = try playbook.connectClient(tls: "localhost", trusting: playbook.originAuthority.certificatePath)
        XCTAssertNotNil(rejected.tlsFailure, "the client rejects a certificate from a CA it does not know")
        rejected.finishSending()
        playbook.run()

        let recording = playbook.recording
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
        let playbook = try ProxyPlaybook()
        let closed = try playbook.connectClient()
        closed.send("CONNECT 127.0.0.1:9 HTTP/1.1\r\nHost: 127.0.0.1:9\r\n\r\n")
        playbook.takeDial(host: "127.0.0.1", port: 9)?.refuse()
        playbook.run()
        let refused = closed.readText()
        XCTAssertTrue(refused.hasPrefix("HTTP/1.1 502 "), refused)
        XCTAssertTrue(refused.contains("error=connection_refused"), refused)
        XCTAssertTrue(refused.contains("ECONNREFUSED"), refused)
        let nowhere = try playbook.connectClient()
        nowhere.send("CONNECT nowhere.invalid:443 HTTP/1.1\r\nHost: nowhere.invalid:443\r\n\r\n")
        playbook.takeDial(host: "nowhere.invalid", port: 443)?.fail(.nameNotFound("nowhere.invalid"))
        playbook.run()
        let unknown = nowhere.readText()
        XCTAssertTrue(unknown.hasPrefix("HTTP/1.1 502 "), unknown)
        XCTAssertTrue(unknown.contains("error=dns_error"), unknown)
        XCTAssertTrue(unknown.contains("nowhere.invalid"), unknown)
        let records = playbook.records
        XCTAssertEqual(records.map { $0.error?.kind }, [.connectionRefused, .resolution])
        XCTAssertEqual(records.map { $0.leg(.downstream)?.response?.status }, [502, 502])
    }

    /// A CONNECT tunnel's GET through an intercepted connection to
    /// `origin.test:443`, the origin presenting a leaf of the playbook's
    /// origin CA; returns the client's end once its request went in, and the probe.
    private func interceptedGet(_ playbook: ProxyPlaybook) throws -> (client: PlaybookPeer, probe: PlaybookPeer) {
        let client = try playbook.connectClient()
        client.send("CONNECT origin.test:443 HTTP/1.1\r\nHost: origin.test:443\r\n\r\n")
        let probe = try playbook.acceptDial(host: "origin.test", port: 443, tls: true)
        XCTAssertTrue(client.readText().hasPrefix("HTTP/1.1 200 "))
        try playbook.startClientTLS(client, serverName: "origin.test")
        client.send("GET /file HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        playbook.run()
        XCTAssertNil(client.tlsFailure)
        return (client, probe)
    }

    func testAnUpstreamCertificateThatFailsVerificationIs502NamingWhy() throws {
        // The proxy trusts the system store, which does not hold the origin's CA.
        let playbook = try ProxyPlaybook { $0.upstreamVerification = .systemStore }
        let (client, _) = try interceptedGet(playbook)
        // The request's own connection: the origin's leaf fails the proxy's verification again.
        let origin = try playbook.acceptDial(host: "origin.test", port: 443, tls: true)
        XCTAssertEqual(origin.read(), [], "no request reached the origin")
        let answer = client.readText()
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 502 "), answer)
        let body = answer.components(separatedBy: "\r\n\r\n").dropFirst().joined()
        XCTAssertTrue(body.contains("certificate"), body)
        XCTAssertTrue(body.contains("verif"), body)
        let record = try onlyRecord(playbook)
        XCTAssertEqual(record.error?.kind, .tls)
        XCTAssertNil(record.leg(.upstream), "no upstream connection was made")
        // The error names who issued the certificate and what to do (a TLS-inspecting proxy's CA is the usual cause).
        let message = record.error?.message ?? ""
        XCTAssertTrue(message.contains("(issued by \(playbook.originAuthority.subject))"), message)
        XCTAssertTrue(message.contains("trust that CA with --upstream-ca FILE (with --upstream-ca-adds to keep the system store too)"),
                      message)
    }

    /// `--upstream-ca FILE --upstream-ca-adds`: the file's CA besides the system store.
    func testAnAddedUpstreamCAIsTrustedBesidesTheSystemStore() throws {
        // The playbook's proxy trusts the origin CA's file alone; here it adds it to the system store.
        let playbook = try ProxyPlaybook {
            if case .caFile(let path) = $0.upstreamVerification { $0.upstreamVerification = .systemStoreAndCAFile(path) }
        }
        let (client, _) = try interceptedGet(playbook)
        let origin = try playbook.acceptDial(host: "origin.test", port: 443, tls: true)
        XCTAssertNil(origin.tlsFailure)
        origin.expect("GET /file HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        playbook.answer("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789", from: origin, reaches: client)
        XCTAssertEqual(playbook.server.configuration.recordedOptions["upstreamVerification"],
                       "system+ca-file:\(playbook.originAuthority.certificatePath)")
    }

    func testAnUpstreamResetMidBodyCutsTheClientAndIsRecordedAsBroken() throws {
        let playbook = try ProxyPlaybook()
        let client = try playbook.connectClient()
        client.send("GET http://origin.test/big HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        let origin = try playbook.acceptDial(host: "origin.test", port: 80)
        _ = origin.read()
        origin.send("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
        origin.send([UInt8](repeating: 0x61, count: 1000))
        playbook.run()
        origin.reset()
        playbook.run()
        let received = client.read()
        XCTAssertLessThan(received.count, 100_000, "the client saw a complete response")
        XCTAssertTrue(client.receivedEOF || client.receivedReset, "the client was cut")
        let record = try onlyRecord(playbook)
        XCTAssertEqual(record.error?.kind, .reset, "\(String(describing: record.error))")
        XCTAssertEqual(record.leg(.upstream)?.response?.complete, false)
        XCTAssertEqual(record.leg(.downstream)?.response?.complete, false)
        XCTAssertEqual(record.leg(.downstream)?.response?.status, 200)
    }

    func testAClientThatDisconnectsMidUploadIsRecordedAndTheUpstreamCut() throws {
        let playbook = try ProxyPlaybook()
        let client = try playbook.connectClient()
        client.send("PUT http://origin.test/up HTTP/1.1\r\nHost: origin.test\r\nContent-Length: 1000000\r\n\r\n")
        client.send([UInt8](repeating: 0x62, count: 5000))
        let origin = try playbook.acceptDial(host: "origin.test", port: 80)
        playbook.run()
        let head = "PUT /up HTTP/1.1\r\nHost: origin.test\r\nContent-Length: 1000000\r\n\r\n"
        let upstream = origin.read()
        XCTAssertEqual(String(decoding: upstream.prefix(head.utf8.count), as: UTF8.self), head)
        client.finishSending()
        playbook.run()
        let record = try onlyRecord(playbook)
        XCTAssertEqual(record.error?.kind, .closedEarly, "\(String(describing: record.error))")
        XCTAssertEqual(record.leg(.downstream)?.request?.complete, false)
        XCTAssertEqual(record.leg(.downstream)?.request?.digest.body.length, 5000)
        XCTAssertNil(record.leg(.downstream)?.response)
        let body = upstream.count - head.utf8.count + origin.read().count
        XCTAssertEqual(body, 5000, "the upstream saw the upload stop where the client's did")
        XCTAssertTrue(origin.receivedEOF || origin.receivedReset, "the upstream was cut")
    }

    func testRequestsAimedAtTheProxyItselfAreRefused() throws {
        let playbook = try ProxyPlaybook()
        let port = playbook.address.port
        let plain = try playbook.connectClient()
        plain.send("GET http://127.0.0.1:\(port)/loop HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
        playbook.run()
        XCTAssertTrue(plain.readText().hasPrefix("HTTP/1.1 502 "))
        let tunnelled = try playbook.connectClient()
        tunnelled.send("CONNECT localhost:\(port) HTTP/1.1\r\nHost: localhost:\(port)\r\n\r\n")
        playbook.run()
        let tunnel = tunnelled.readText()
        XCTAssertTrue(tunnel.hasPrefix("HTTP/1.1 502 "), tunnel)
        XCTAssertTrue(tunnel.contains("error=proxy_loop_detected"), tunnel)
        XCTAssertTrue(playbook.network.dials.isEmpty, "nothing was dialled")
        let records = playbook.records
        XCTAssertEqual(records.count, 2, "no looped request reached the proxy again")
        XCTAssertTrue(records.allSatisfy { $0.leg(.upstream) == nil })
    }

    func testAClientOfferingNoKnownALPNProtocolIsRefusedAndRecorded() throws {
        let upstream = try XCTUnwrap(UpstreamTarget(scheme: .https, host: "origin.test", port: 443))
        let playbook = try ProxyPlaybook(mode: .reverse(upstream))
        let client = try playbook.connectClient(tls: "app.test", alpn: ["spdy/3"])
        let failure = try XCTUnwrap(client.tlsFailure, "the handshake was refused")
        XCTAssertTrue("\(failure)".contains("no application protocol"), "\(failure)")
        let record = try onlyRecord(playbook)
        XCTAssertEqual(record.exchangeID.hasSuffix(".0"), true)
        XCTAssertEqual(record.error?.kind, .tls)
        XCTAssertEqual(record.leg(.downstream)?.tls?.sni, "app.test")
    }
}
