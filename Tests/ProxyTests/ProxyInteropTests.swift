import Evidence
import Foundation
import HTTP
import IntactTestSupport
import XCTest
@testable import Proxy

/// Third-party clients through the proxy on what real traffic contains
/// beyond a plain request: reason phrases across versions (h2load --h1,
/// curl), HTTP/1.0 (curl -0, openssl s_client with ALPN http/1.0), requests
/// without Host. Each test checks the client's outcome and the record.
final class ProxyInteropTests: XCTestCase {
    /// An nginx origin speaking HTTP/2 (and HTTP/1.1) for the whole class.
    private func reverseProxy(to origin: NginxOrigin) throws -> ProxyHarness {
        let upstream = try XCTUnwrap(UpstreamTarget(scheme: .https, host: "127.0.0.1", port: origin.port))
        return try ProxyHarness(mode: .reverse(upstream)) { $0.upstreamVerification = .caFile(origin.caFile) }
    }

    private func reverseProxy(to raw: RawOrigin) throws -> ProxyHarness {
        let upstream = try XCTUnwrap(UpstreamTarget(scheme: .http, host: "127.0.0.1", port: raw.port))
        return try ProxyHarness(mode: .reverse(upstream))
    }

    /// The status line curl received (`-D`), without its CRLF.
    private func statusLine(_ arguments: [String], in directory: String) throws -> (ToolRun, String) {
        let headers = directory + "/headers-\(UUID().uuidString)"
        let run = try ToolRun.curl(["-D", headers, "-o", "/dev/null"] + arguments)
        let text = (try? String(contentsOfFile: headers, encoding: .isoLatin1)) ?? ""
        let line = text.components(separatedBy: "\r\n").first ?? ""
        return (run, line)
    }

    /// Both legs' responses agree (semantic head, body) and are complete. For
    /// a plain-HTTP upstream behind TLS, where the request's scheme differs
    /// between the legs by design.
    private func assertSameResponse(_ record: ExchangeRecord, file: StaticString = #filePath, line: UInt = #line) {
        let down = record.leg(.downstream)?.response, up = record.leg(.upstream)?.response
        XCTAssertNil(record.error, file: file, line: line)
        XCTAssertNotNil(down, file: file, line: line)
        XCTAssertEqual(down?.digest.head.semantic, up?.digest.head.semantic, file: file, line: line)
        XCTAssertEqual(down?.digest.body, up?.digest.body, file: file, line: line)
        XCTAssertEqual(down?.complete, true, file: file, line: line)
    }

    // MARK: Reason phrases

    /// HTTP/2 has no reason phrase: the HTTP/1.1 client gets RFC 9110's
    /// (`h2load --h1` counts a response with an empty one as failed), and
    /// the record shows the phrase that went out.
    func testHTTP2ResponsesReachHTTP1ClientsWithTheStandardReasonPhrase() throws {
        let (origin, _) = try NginxOrigin.serving([("one-kib", 1024)])
        defer { origin.stop() }
        let proxy = try reverseProxy(to: origin)
        let url = "https://127.0.0.1:\(proxy.port)/one-kib"
        let (run, line) = try statusLine(["--http1.1", "--cacert", proxy.caFile, url], in: proxy.directory)
        XCTAssertEqual(run.status, 0, run.error)
        XCTAssertEqual(line, "HTTP/1.1 200 OK")
        let missing = try ToolRun.curl(["--http1.1", "--cacert", proxy.caFile, "-o", "/dev/null", "-w", "%{http_code}",
                                        "https://127.0.0.1:\(proxy.port)/absent"])
        XCTAssertEqual(missing.output, "404")
        let h2load = try ToolRun.run("/usr/bin/h2load", ["--h1", "-n", "20", "-c", "2", url])
        XCTAssertEqual(h2load.status, 0, h2load.error)
        XCTAssertTrue(h2load.output.contains("20 succeeded, 0 failed"), h2load.output)
        XCTAssertTrue(h2load.output.contains("20 2xx"), h2load.output)

        let records = try proxy.stopAndRead().records
        XCTAssertEqual(records.count, 22)
        for record in records {
            let down = try XCTUnwrap(record.leg(.downstream)?.response)
            let up = try XCTUnwrap(record.leg(.upstream)?.response)
            XCTAssertEqual(up.version, .http2)
            XCTAssertEqual(down.version, .http1_1)
            XCTAssertEqual(down.reason, HTTPResponseHead.rfc9110Reason(HTTPStatus(down.status ?? 0)), "\(record.exchangeID)")
            assertCleanHop(record)
        }
    }

    /// HTTP/1.1 to HTTP/1.1: the upstream's own phrase, even an odd one, goes
    /// to the client byte for byte, and both legs' exact head digests agree.
    func testTheUpstreamsReasonPhraseIsRelayedByteForByte() throws {
        let raw = try RawOrigin(answer: "HTTP/1.1 200 Fine  By Me\r\nContent-Length: 2\r\n\r\nok")
        defer { raw.stop() }
        let proxy = try reverseProxy(to: raw)
        let (run, line) = try statusLine(["--http1.1", "--cacert", proxy.caFile, "https://127.0.0.1:\(proxy.port)/"],
                                         in: proxy.directory)
        XCTAssertEqual(run.status, 0, run.error)
        XCTAssertEqual(line, "HTTP/1.1 200 Fine  By Me")
        let record = try XCTUnwrap(proxy.stopAndRead().records.first)
        XCTAssertEqual(record.leg(.upstream)?.response?.reason, "Fine  By Me")
        XCTAssertEqual(record.leg(.downstream)?.response?.reason, "Fine  By Me")
        XCTAssertEqual(record.leg(.downstream)?.response?.digest.head.exact,
                       record.leg(.upstream)?.response?.digest.head.exact)
        assertSameResponse(record)
    }

    // MARK: Interim responses

    /// `103 Early Hints` before the final response: relayed to HTTP/1.1 and
    /// HTTP/2 clients (curl shows both heads) and listed on both legs.
    func testEarlyHintsAreRelayedAndRecorded() throws {
        let answer = "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
            + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        let raw = try RawOrigin(answer: answer)
        defer { raw.stop() }
        let proxy = try reverseProxy(to: raw)
        for version in ["--http1.1", "--http2"] {
            let headers = proxy.directory + "/headers\(version)"
            let run = try ToolRun.curl([version, "--cacert", proxy.caFile, "-D", headers, "https://127.0.0.1:\(proxy.port)/"])
            XCTAssertEqual(run.status, 0, run.error)
            XCTAssertEqual(run.output, "ok")
            let text = try String(contentsOfFile: headers, encoding: .isoLatin1).lowercased()
            let statusLines = text.components(separatedBy: "\r\n").filter { $0.hasPrefix("http/") }
            XCTAssertEqual(statusLines.map { $0.split(separator: " ")[1] }, ["103", "200"], "\(version): \(text)")
            XCTAssertTrue(text.contains("link: </style.css>; rel=preload"), text)
        }
        let records = try proxy.stopAndRead().records
        XCTAssertEqual(records.count, 2)
        for record in records {
            for role in [ExchangeRecord.Leg.Role.downstream, .upstream] {
                let interim = try XCTUnwrap(record.leg(role)?.interimResponses, "\(record.exchangeID) \(role)")
                XCTAssertEqual(interim.map(\.status), [103])
                XCTAssertEqual(interim.first?.fields.map(\.value), ["</style.css>; rel=preload"])
            }
            XCTAssertEqual(record.leg(.downstream)?.interimResponses?.first?.digest.head.semantic,
                           record.leg(.upstream)?.interimResponses?.first?.digest.head.semantic)
            assertSameResponse(record)
        }
    }

    // MARK: HTTP/1.0

    /// `curl -0` offers ALPN `http/1.0`: the proxy accepts it (it used to
    /// send no_application_protocol), speaks HTTP/1.0 framing to it, and the
    /// record says so.
    func testCurlHTTP10ThroughTheForwardProxy() throws {
        let (origin, digests) = try NginxOrigin.serving([("one-kib", 1024)])
        defer { origin.stop() }
        let proxy = try ProxyHarness { $0.upstreamVerification = .caFile(origin.caFile) }
        let output = proxy.directory + "/http10"
        let run = try ToolRun.curl(["-0", "-x", proxy.proxyURL, "--cacert", proxy.caFile, "-o", output,
                                    "-w", "%{http_code}", origin.url("/one-kib")])
        XCTAssertEqual(run.status, 0, run.error)
        XCTAssertEqual(run.output, "200")
        XCTAssertEqual(try NginxOrigin.sha256(ofFile: output), digests["one-kib"])
        let record = try XCTUnwrap(proxy.stopAndRead().records.first { $0.leg(.downstream)?.request?.method == "GET" })
        XCTAssertEqual(record.leg(.downstream)?.tls?.alpn, "http/1.0")
        XCTAssertEqual(record.leg(.downstream)?.request?.version, .http1_0)
        assertCleanHop(record)
    }

    /// An HTTP/1.0 request without `Host`, over TLS with ALPN `http/1.0`
    /// (openssl s_client), to an HTTP/1.0 origin answering close-delimited:
    /// the reverse proxy sends its upstream's authority as `Host` (as nginx
    /// sends `Host: $proxy_host`; an HTTP/2 upstream would refuse the request
    /// without one), the client gets the close-delimited body, and the record
    /// shows no authority downstream and the one sent upstream.
    func testAnHTTP10RequestWithoutHostGetsTheUpstreamsAuthority() throws {
        let body = "a body that ends when the connection does"
        let raw = try RawOrigin(answer: "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n\(body)")
        defer { raw.stop() }
        let proxy = try reverseProxy(to: raw)
        let run = try ToolRun.run("/bin/sh", ["-c", "printf 'GET /plain HTTP/1.0\\r\\nAccept: */*\\r\\n\\r\\n' | "
            + "openssl s_client -quiet -connect 127.0.0.1:\(proxy.port) -alpn http/1.0 -CAfile \(proxy.caFile) 2>/dev/null"])
        XCTAssertTrue(run.output.hasPrefix("HTTP/1.0 200 OK\r\n"), run.output)
        XCTAssertTrue(run.output.hasSuffix("\r\n\r\n" + body), run.output)
        XCTAssertFalse(run.output.lowercased().contains("transfer-encoding"), run.output)
        let head = try XCTUnwrap(raw.requestHeads.first)
        XCTAssertTrue(head.hasPrefix("GET /plain HTTP/1.0\r\n"), head)
        XCTAssertTrue(head.contains("Host: 127.0.0.1:\(raw.port)\r\n"), head)

        let record = try XCTUnwrap(proxy.stopAndRead().records.first)
        XCTAssertNil(record.leg(.downstream)?.request?.authority)
        XCTAssertEqual(record.leg(.upstream)?.request?.authority, "127.0.0.1:\(raw.port)")
        XCTAssertEqual(record.leg(.upstream)?.request?.version, .http1_0)
        XCTAssertEqual(record.leg(.downstream)?.response?.digest.body.length, body.utf8.count)
        XCTAssertEqual((record.leg(.downstream)?.request?.fields ?? []) + [RecordedField(name: "Host", value: "127.0.0.1:\(raw.port)")],
                       record.leg(.upstream)?.request?.fields)
        assertSameResponse(record)
    }

    /// RFC 9110 §15.2: no 1xx goes to an HTTP/1.0 client. The origin's
    /// `103 Early Hints` is not relayed to an HTTP/1.0 client (openssl
    /// s_client, ALPN http/1.0); the client leg's record lists no interim
    /// response and says the 103 was withheld; the upstream leg lists it.
    func testNoInterimResponseReachesAnHTTP10Client() throws {
        let answer = "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
            + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        let raw = try RawOrigin(answer: answer)
        defer { raw.stop() }
        let proxy = try reverseProxy(to: raw)
        let run = try ToolRun.run("/bin/sh", ["-c", "printf 'GET /hints HTTP/1.0\\r\\nHost: 127.0.0.1\\r\\n\\r\\n' | "
            + "openssl s_client -quiet -connect 127.0.0.1:\(proxy.port) -alpn http/1.0 -CAfile \(proxy.caFile) 2>/dev/null"])
        // (The origin's HTTP/1.1 status line goes through as it is: HTTP/1.1 to HTTP/1.1.)
        XCTAssertTrue(run.output.hasPrefix("HTTP/1.1 200 OK\r\n"), run.output)
        XCTAssertFalse(run.output.contains("103"), run.output)
        XCTAssertTrue(run.output.hasSuffix("\r\n\r\nok"), run.output)

        let record = try XCTUnwrap(proxy.stopAndRead().records.first)
        XCTAssertNil(record.error)
        XCTAssertNil(record.leg(.downstream)?.interimResponses)
        XCTAssertEqual(record.leg(.downstream)?.interimWithheld, [103])
        XCTAssertEqual(record.leg(.upstream)?.interimResponses?.map(\.status), [103])
        XCTAssertNil(record.leg(.upstream)?.interimWithheld)
        XCTAssertEqual(record.leg(.downstream)?.response?.status, 200)
    }
}

/// `Expect: 100-continue` through the proxy, with curl: the origin's
/// `100 Continue` reaches the client (which would otherwise wait for its
/// timeout before sending the body), the expectation goes upstream, and a
/// client that sends the body without waiting works too.
final class ProxyContinueTests: XCTestCase {
    /// Uploads 1 KiB with the expectation through `proxy` to `origin`; the run and its seconds.
    private func upload(via proxy: ProxyHarness, to origin: NginxOrigin, path: String, wait: Bool) throws -> (ToolRun, Double) {
        let source = proxy.directory + "/upload-\(UUID().uuidString)"
        _ = try NginxOrigin.writePatternFile(source, size: 1024)
        defer { try? FileManager.default.removeItem(atPath: source) }
        let run = try ToolRun.curl(["-x", proxy.proxyURL, "--cacert", proxy.caFile, "--http1.1", "-T", source,
                                    "-H", "Expect: 100-continue", "--expect100-timeout", wait ? "30" : "0",
                                    "-w", "%{http_code} %{time_total}", "-o", "/dev/null", origin.url(path)])
        let parts = run.output.split(separator: " ")
        return (run, parts.count == 2 ? Double(parts[1]) ?? 99 : 99)
    }

    func testContinueIsRelayedFromHTTP1AndHTTP2Origins() throws {
        for http2 in [false, true] {
            let origin = try NginxOrigin(http2: http2)
            defer { origin.stop() }
            let proxy = try ProxyHarness { $0.upstreamVerification = .caFile(origin.caFile) }
            let (run, seconds) = try upload(via: proxy, to: origin, path: "/continued", wait: true)
            XCTAssertEqual(run.status, 0, run.error)
            XCTAssertTrue(run.output.hasPrefix("201 "), "h2 \(http2): \(run.output)")
            // Without the 100 curl would wait the whole 30 s timeout before sending the body.
            XCTAssertLessThan(seconds, 15, "h2 \(http2): the 100 Continue did not reach the client")
            let (eager, _) = try upload(via: proxy, to: origin, path: "/eager", wait: false)
            XCTAssertTrue(eager.output.hasPrefix("201 "), "h2 \(http2): \(eager.output) \(eager.error)")
            let records = try proxy.stopAndRead().records.filter { $0.leg(.downstream)?.request?.method == "PUT" }
            XCTAssertEqual(records.count, 2)
            for record in records {
                XCTAssertTrue(record.leg(.upstream)?.request?.fields.contains { $0.name.lowercased() == "expect" } == true)
                assertCleanHop(record)
            }
            // The client got a 100 (from nginx over HTTP/1.1, from the proxy over HTTP/2, which nginx does not
            // answer with one): each leg's record lists the 100s that crossed it.
            let waited = try XCTUnwrap(records.first { $0.leg(.downstream)?.request?.path == "/continued" })
            XCTAssertEqual(waited.leg(.downstream)?.interimResponses?.map(\.status), [100], "h2 \(http2)")
            XCTAssertEqual(waited.leg(.upstream)?.interimResponses?.map(\.status), http2 ? nil : [100], "h2 \(http2)")
        }
    }
}

/// Requests the upstream never processed are sent again: nginx with
/// `keepalive_requests 50` ends each connection after 50 requests (GOAWAY
/// on HTTP/2, a close on HTTP/1.1) while the proxy may have more on it.
/// Retries: on the playbook (a GOAWAY every fifty streams, a reused
/// HTTP/1.1 connection closed unanswered), and h2load through the reverse
/// proxy against nginx closing reused HTTP/1.1 connections, which must see
/// no failure; the records name each retry.
final class ProxyRetryTests: XCTestCase {
    private func run(h2loadArguments: [String]) throws -> (ToolRun, [ExchangeRecord]) {
        let origin = try NginxOrigin(http2: false, keepaliveRequests: 50)
        defer { origin.stop() }
        _ = try origin.serve("one-kib", size: 1024)
        let upstream = try XCTUnwrap(UpstreamTarget(scheme: .https, host: "127.0.0.1", port: origin.port))
        let proxy = try ProxyHarness(mode: .reverse(upstream)) { $0.upstreamVerification = .caFile(origin.caFile) }
        let load = try ToolRun.run("/usr/bin/h2load", h2loadArguments + ["https://127.0.0.1:\(proxy.port)/one-kib"])
        return (load, try proxy.stopAndRead().records)
    }

    /// An origin that retires its HTTP/2 connection every fifty requests
    /// (nginx `keepalive_requests 50`), on the playbook: four clients keep ten
    /// streams each in flight, 600 requests in all; none is lost, and each
    /// stream the GOAWAY left unprocessed went again once.
    func testGoAwayAfterFiftyRequestsLosesNone() throws {
        let target = try XCTUnwrap(UpstreamTarget(scheme: .https, host: "origin.test", port: 443))
        let playbook = try ProxyPlaybook(mode: .reverse(target))
        let origin = BudgetedHTTP2Origin(playbook, budget: 50, bodySize: 1024)
        let clients = try (0..<4).map { _ in try playbook.connectHTTP2Client(tls: "origin.test") }
        let total = 600
        var opened = 0
        var inFlight = Array(repeating: Set<HTTP2StreamID>(), count: clients.count)
        var answered = 0
        for _ in 0..<1000 where answered < total {
            for (n, client) in clients.enumerated() {
                while inFlight[n].count < 10, opened < total,
                      let stream = client.request(HTTPRequestHead(method: "GET", authority: "origin.test", path: "/one-kib")) {
                    inFlight[n].insert(stream)
                    opened += 1
                }
            }
            try origin.serve()
            for (n, client) in clients.enumerated() {
                let events = client.takeEvents()
                XCTAssertTrue(events.resets.isEmpty, "\(events.resets)")
                for stream in events.endedStreams where inFlight[n].remove(stream) != nil {
                    XCTAssertEqual(events.statuses[stream], 200)
                    XCTAssertEqual(events.bodies[stream]?.count, 1024)
                    answered += 1
                }
            }
        }
        XCTAssertEqual(answered, total)
        let records = playbook.records
        XCTAssertEqual(records.count, total)
        XCTAssertTrue(records.allSatisfy { $0.error == nil && $0.leg(.upstream)?.response?.status == 200 })
        let retried = records.filter { $0.retries != nil }
        XCTAssertFalse(retried.isEmpty, "no GOAWAY met a stream in flight: the retry was not exercised")
        for record in retried {
            XCTAssertEqual(record.retries?.count, 1)
            XCTAssertTrue(record.retries?.first?.message.contains("GOAWAY") == true
                          || record.retries?.first?.message.contains("REFUSED_STREAM") == true,
                          "\(String(describing: record.retries))")
        }
        XCTAssertTrue(origin.served.allSatisfy { $0 <= 50 }, "\(origin.served)")
    }

    /// A reused HTTP/1.1 connection that the origin closes on the next request
    /// without a byte of answer, on the playbook: a GET goes again on a fresh
    /// connection (and the record says so), a POST is not resent (502,
    /// Proxy-Status names why).
    func testAnUnansweredRequestOnAReusedHTTP1ConnectionIsResentOnlyWhenIdempotent() throws {
        let target = try XCTUnwrap(UpstreamTarget(scheme: .http, host: "origin.test", port: 80))
        let playbook = try ProxyPlaybook(mode: .reverse(target))
        let client = try playbook.connectClient(tls: "origin.test")
        let ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        let get = "GET / HTTP/1.1\r\nHost: origin.test\r\n\r\n"
        client.send(get)
        let first = try playbook.acceptDial(host: "origin.test", port: 80)
        first.expect(get)
        playbook.answer(ok, from: first, reaches: client)
        // The next GET on the idle connection: the origin reads it and closes.
        client.send(get)
        playbook.run()
        first.expect(get)
        first.finishSending()
        let second = try playbook.acceptDial(host: "origin.test", port: 80)
        second.expect(get)
        playbook.answer(ok, from: second, reaches: client)
        // A POST on the reused connection, dropped the same way, is not sent again.
        client.send("POST / HTTP/1.1\r\nHost: origin.test\r\nContent-Length: 3\r\n\r\nx=1")
        playbook.run()
        XCTAssertEqual(second.readText(), "POST / HTTP/1.1\r\nHost: origin.test\r\nContent-Length: 3\r\n\r\nx=1")
        second.finishSending()
        playbook.run()
        XCTAssertTrue(playbook.network.dials.isEmpty, "the POST went nowhere else")
        let answer = client.readText()
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 502 Bad Gateway"), answer)
        XCTAssertTrue(answer.contains("Proxy-Status: intact; error=connection_terminated"), answer)

        let records = playbook.records
        guard records.count == 3 else { return XCTFail("\(records.count) records: \(records.map(\.exchangeID))") }
        XCTAssertNil(records[0].retries)
        XCTAssertEqual(records[1].retries?.count, 1)
        XCTAssertTrue(records[1].retries?.first?.message.contains("reused connection") == true, "\(records[1])")
        XCTAssertNil(records[1].error)
        XCTAssertEqual(records[1].leg(.upstream)?.response?.status, 200)
        XCTAssertNil(records[2].retries)
        XCTAssertNotNil(records[2].error)
    }

    func testAClosedReusedHTTP1ConnectionLosesNoRequest() throws {
        let (load, records) = try run(h2loadArguments: ["--h1", "-n", "600", "-c", "4"])
        XCTAssertEqual(load.status, 0, load.error)
        XCTAssertTrue(load.output.contains("600 succeeded, 0 failed"), load.output)
        XCTAssertEqual(records.count, 600)
        XCTAssertTrue(records.allSatisfy { $0.error == nil && $0.leg(.upstream)?.response?.status == 200 })
        for record in records where record.retries != nil {
            XCTAssertTrue(record.retries?.first?.message.contains("reused connection") == true,
                          "\(String(describing: record.retries))")
        }
    }
}

/// HTTP/2 trailers to an HTTP/1.1 client (nginx `add_trailer` over h2,
/// curl over HTTP/1.1): with `TE: trailers` the response goes out chunked
/// and carries them; without, a response with a length cannot, and the
/// record of the client's leg says they were not sent, so the proxy's own
/// hop compares as modified ("trailers changed").
final class ProxyTrailerTests: XCTestCase {
    func testHTTP2TrailersReachAnHTTP1ClientAsChunkedTrailersOrAreRecordedAsDropped() throws {
        let origin = try NginxOrigin(http2: true, serverExtra: "add_trailer X-Checksum abc123 always;")
        defer { origin.stop() }
        _ = try origin.serve("one-kib", size: 1024)
        let upstream = try XCTUnwrap(UpstreamTarget(scheme: .https, host: "127.0.0.1", port: origin.port))
        let proxy = try ProxyHarness(mode: .reverse(upstream)) { $0.upstreamVerification = .caFile(origin.caFile) }
        let url = "https://127.0.0.1:\(proxy.port)/one-kib"
        // --raw: curl shows the chunked framing and the trailer section as they came.
        let asked = try ToolRun.run("/bin/sh", ["-c", "curl -s --http1.1 --raw -i -H 'TE: trailers' --cacert '\(proxy.caFile)' '\(url)' "
                                                 + "| tr -d '\\000-\\011\\013\\014\\016-\\037\\177-\\377'"])
        XCTAssertTrue(asked.output.lowercased().contains("transfer-encoding: chunked"), asked.output)
        XCTAssertTrue(asked.output.hasSuffix("\r\n0\r\nx-checksum: abc123\r\n\r\n"), String(asked.output.suffix(80)))
        let plain = try ToolRun.curl(["--http1.1", "-D", "-", "-o", "/dev/null", "--cacert", proxy.caFile, url])
        XCTAssertTrue(plain.output.lowercased().contains("content-length: 1024"), plain.output)

        let records = try proxy.stopAndRead().records
        XCTAssertEqual(records.count, 2)
        for record in records {
            XCTAssertEqual(record.leg(.upstream)?.response?.trailers?.map(\.value), ["abc123"])
        }
        XCTAssertEqual(records[0].leg(.downstream)?.response?.trailers?.map(\.value), ["abc123"])
        assertCleanHop(records[0])
        XCTAssertNil(records[1].leg(.downstream)?.response?.trailers, "the record lists only what was sent")
        let down = try XCTUnwrap(records[1].leg(.downstream)?.response?.digest)
        let up = try XCTUnwrap(records[1].leg(.upstream)?.response?.digest)
        let comparison = DigestComparison(before: up, after: down)
        XCTAssertEqual(comparison.verdict, .modified)
        XCTAssertEqual(comparison.changes, [.trailersChanged])
    }
}
