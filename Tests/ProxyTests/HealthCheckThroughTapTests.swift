import AuthFlow
import Evidence
import Foundation
import IntactTestSupport
import SignIn
import TLS
import Wire
import XCTest
@testable import Proxy

/// A reverse tap (tap B) between a load balancer and the server must never
/// take the server out of the load balancer's rotation: every health check
/// a production load balancer sends reaches the server through the tap and
/// its answer comes back unchanged, over an HTTP/2 and an HTTP/1.1 upstream.
///
/// The checks are sent twice — straight to the server and through the tap —
/// and must get the same answer: as raw requests (HTTP/1.0 without `Host`,
/// `OPTIONS *`, `HEAD /`, HTTP/1.1 with `Host`) against the mock server and
/// nginx, and from a real HAProxy (`option httpchk` bare and with a path,
/// `http-check send … ver HTTP/1.1 hdr Host …`, TLS-only and TCP-only checks)
/// that checks a server directly and through the tap side by side.
final class HealthCheckThroughTapTests: XCTestCase {
    /// A mock server offering only `alpn`, on an ephemeral loopback port.
    private func mockServer(alpn: [String], authority: CertificateAuthority) throws -> Int {
        let configuration = MockServerHost.Configuration(
            server: MockServerConfiguration(externalOrigin: Origin(scheme: "https", host: "127.0.0.1")),
            listenAddress: .loopbackIPv4(port: 0), externalOriginFollowsListener: true,
            certificate: .authority(authority), alpn: alpn)
        let host = MockServerHost(configuration: configuration)
        let started = try host.start()
        addTeardownBlock { host.stop() }
        return Int(started.listenAddress.port)
    }

    private func tap(to port: Int, caFile: String) throws -> ProxyHarness {
        let upstream = try XCTUnwrap(UpstreamTarget(scheme: .https, host: "127.0.0.1", port: port))
        return try ProxyHarness(mode: .reverse(upstream)) {
            $0.upstreamVerification = .caFile(caFile)
            $0.tap = "tap-b"
        }
    }

    /// Health-check requests as load balancers send them (with `Connection:
    /// close` where HTTP/1.1 would keep the connection, as HAProxy's checks do).
    static let shapes: [(name: String, request: String)] = [
        ("OPTIONS / HTTP/1.0 without Host (HAProxy option httpchk)", "OPTIONS / HTTP/1.0\r\n\r\n"),
        ("GET /suite/cors/ping HTTP/1.0 without Host", "GET /suite/cors/ping HTTP/1.0\r\n\r\n"),
        ("HEAD / HTTP/1.0 without Host", "HEAD / HTTP/1.0\r\n\r\n"),
        ("OPTIONS * HTTP/1.0 without Host", "OPTIONS * HTTP/1.0\r\n\r\n"),
        ("OPTIONS * HTTP/1.1", "OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"),
        ("HEAD / HTTP/1.1", "HEAD / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"),
        ("GET /suite/cors/ping HTTP/1.1", "GET /suite/cors/ping HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"),
    ]

    /// The status code and body of the answer to `request` sent over TLS to
    /// `port` (not the reason phrase: an HTTP/2 upstream sends none, and the
    /// tap gives the client the standard one, `Docs/proxy-protocols.md`).
    private func answer(_ request: String, port: Int) throws -> (status: String, body: String) {
        let run = try ToolRun.run("socat", ["-t", "2", "-", "OPENSSL:127.0.0.1:\(port),verify=0"],
                                  input: Data(request.utf8), timeout: 20)
        let text = run.output
        let status = String(text.split(separator: "\r\n", maxSplits: 1).first?.prefix(12) ?? "")
        let body = text.range(of: "\r\n\r\n").map { String(text[$0.upperBound...]) } ?? ""
        return (status, body)
    }

    /// Every shape gets the same answer through the tap as straight from the
    /// server; the tap records each one with no failure.
    private func assertChecksCrossUnchanged(direct: Int, tap: ProxyHarness, upstream: String) throws {
        for (name, request) in Self.shapes {
            let expected = try answer(request, port: direct)
            let got = try answer(request, port: tap.port)
            XCTAssertFalse(expected.status.isEmpty, "\(upstream), \(name): no answer from the server")
            XCTAssertEqual(got.status, expected.status, "\(upstream), \(name)")
            XCTAssertEqual(got.body, expected.body, "\(upstream), \(name)")
        }
        let recording = try tap.stopAndRead()
        XCTAssertEqual(recording.records.count, Self.shapes.count, "\(upstream)")
        for record in recording.records {
            XCTAssertNil(record.error, "\(upstream) \(record.exchangeID): \(String(describing: record.error))")
            let sent = record.leg(.upstream)?.request
            XCTAssertNotNil(sent?.authority ?? sent?.firstValue("host"),
                            "\(upstream) \(record.exchangeID): the upstream request names an authority")
        }
        // Verified alone, tap B's inside hop is clean: the authority it supplied is its own doing.
        let report = try Verifier(Verifier.Configuration()).verify([recording])
        XCTAssertTrue(report.policyHolds, "\(upstream)")
        let reasons = report.exchanges.flatMap { $0.hops.flatMap(\.request.reasons) }
        XCTAssertTrue(reasons.contains { $0.kind == .tapAuthority }, "\(upstream): \(reasons)")
    }

    func testHealthChecksCrossATapToTheMockServerOverHTTP2AndHTTP11() throws {
        let directory = makeTemporaryDirectory()
        let authority = try CertificateAuthority.create(in: directory + "/ca")
        // The reference: the same mock server reached over HTTP/1.1 straight, as a load balancer does.
        let referencePort = try mockServer(alpn: ["http/1.1"], authority: authority)
        for alpn in [["h2"], ["http/1.1"]] {
            let tap = try tap(to: try mockServer(alpn: alpn, authority: authority), caFile: authority.certificatePath)
            try assertChecksCrossUnchanged(direct: referencePort, tap: tap, upstream: "mock server \(alpn[0])")
        }
    }

    func testHealthChecksCrossATapToNginxOverHTTP2AndHTTP11() throws {
        for http2 in [true, false] {
            let origin = try NginxOrigin(http2: http2, serverExtra: "location = /suite/cors/ping { return 200 \"pong\"; }")
            defer { origin.stop() }
            try origin.serve("index.html", size: 100)
            let tap = try tap(to: origin.port, caFile: origin.caFile)
            try assertChecksCrossUnchanged(direct: origin.port, tap: tap, upstream: "nginx \(http2 ? "h2" : "http/1.1")")
        }
    }

    /// A real HAProxy checks the mock server three ways side by side: straight,
    /// through a tap to its HTTP/2 listener, through a tap to an HTTP/1.1-only
    /// one. Every check gets the same result all three ways.
    func testHAProxyChecksGiveTheSameResultThroughTheTap() throws {
        let directory = makeTemporaryDirectory()
        let authority = try CertificateAuthority.create(in: directory + "/ca")
        let direct = try mockServer(alpn: ["h2", "http/1.1"], authority: authority)
        let tapH2 = try tap(to: direct, caFile: authority.certificatePath)
        let tapH1 = try tap(to: try mockServer(alpn: ["http/1.1"], authority: authority), caFile: authority.certificatePath)
        let checks: [(backend: String, directives: String, server: String)] = [
            ("bare", "option httpchk", "ssl verify none check"),
            ("path", "option httpchk GET /suite/cors/ping", "ssl verify none check"),
            ("send", "option httpchk\n    http-check send meth GET uri /suite/cors/ping ver HTTP/1.1 hdr Host 127.0.0.1",
             "ssl verify none check"),
            ("star", "option httpchk\n    http-check send meth OPTIONS uri * ver HTTP/1.1 hdr Host 127.0.0.1",
             "ssl verify none check"),
            ("head", "option httpchk HEAD /", "ssl verify none check"),
            ("tls", "", "ssl verify none check"),
            ("tcp", "", "check no-check-ssl"),
        ]
        var configuration = """
            global
                stats socket \(directory)/haproxy.sock level admin
            defaults
                mode http
                timeout connect 2s
                timeout client 5s
                timeout server 5s
                timeout check 2s

            """
        for check in checks {
            configuration += "backend \(check.backend)\n    \(check.directives)\n"
            for (name, port) in [("direct", direct), ("tap-h2", tapH2.port), ("tap-h1", tapH1.port)] {
                configuration += "    server \(name) 127.0.0.1:\(port) \(check.server) inter 200ms\n"
            }
        }
        try configuration.write(toFile: directory + "/haproxy.cfg", atomically: true, encoding: .utf8)
        let haproxy = Process()
        haproxy.executableURL = URL(fileURLWithPath: "/usr/sbin/haproxy")
        haproxy.arguments = ["-f", directory + "/haproxy.cfg", "-db"]
        haproxy.standardOutput = FileHandle.nullDevice
        haproxy.standardError = FileHandle.nullDevice
        try haproxy.run()
        defer {
            haproxy.terminate()
            haproxy.waitUntilExit()
        }
        // Wait until every server has a check result.
        var results: [String: [String: String]] = [:]
        for _ in 0..<100 {
            results = try Self.checkResults(socket: directory + "/haproxy.sock")
            let complete = checks.allSatisfy { check in
                ["direct", "tap-h2", "tap-h1"].allSatisfy { results[check.backend]?[$0] != nil }
            }
            if complete { break }
            usleep(100_000)
        }
        for check in checks {
            let row = results[check.backend] ?? [:]
            XCTAssertNotNil(row["direct"], "\(check.backend): no check result")
            XCTAssertEqual(row["tap-h2"], row["direct"], "\(check.backend) through the tap to HTTP/2")
            XCTAssertEqual(row["tap-h1"], row["direct"], "\(check.backend) through the tap to HTTP/1.1")
        }
        // The path check (the one the issue saw take the server down) passes through the tap.
        XCTAssertEqual(results["path"]?["tap-h2"], "L7OK 200")
        XCTAssertEqual(results["send"]?["tap-h2"], "L7OK 200")
        XCTAssertEqual(results["tls"]?["tap-h2"], "L6OK ")
        XCTAssertEqual(results["tcp"]?["tap-h2"], "L4OK ")
    }

    /// `show stat` per backend and server: `CHECK_STATUS CHECK_CODE`
    /// (`L7OK 200`, `L6OK `), read from HAProxy's stats socket.
    static func checkResults(socket: String) throws -> [String: [String: String]] {
        let run = try ToolRun.run("socat", ["stdio", "unix-connect:\(socket)"], input: Data("show stat\n".utf8), timeout: 5)
        let lines = run.output.split(separator: "\n")
        guard let header = lines.first?.dropFirst(2).split(separator: ",", omittingEmptySubsequences: false) else { return [:] }
        let column = { (name: String) in header.firstIndex { $0 == name } }
        guard let checkStatus = column("check_status"), let checkCode = column("check_code") else { return [:] }
        var results: [String: [String: String]] = [:]
        for line in lines.dropFirst() {
            let cells = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard cells.count > max(checkStatus, checkCode), cells[1] != "BACKEND", cells[1] != "FRONTEND" else { continue }
            // `* L7OK`: a check in progress (its code not filled yet); `INI`: none done.
            let check = cells[checkStatus].trimmingCharacters(in: .whitespaces)
            guard !check.isEmpty, !check.hasPrefix("INI"), !check.hasPrefix("*") else { continue }
            // An HTTP check's result without its status code is not settled yet.
            if check.hasPrefix("L7") && ["", "0"].contains(cells[checkCode]) { continue }
            results[cells[0], default: [:]][cells[1]] = "\(check) \(cells[checkCode])"
        }
        return results
    }
}
