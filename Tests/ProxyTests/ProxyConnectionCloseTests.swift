import Foundation
import HTTP
import IntactTestSupport
import Proxy
import XCTest

/// A client that asks to close after its request (`Connection: close`, a full
/// TLS handshake per request, as `wrk -H 'Connection: close'` does) reads
/// `Connection: close` in the proxy's answer and then a clean end of the
/// connection, so it never sends a second request into a closing connection:
/// on the playbook, and under wrk against nginx.
final class ProxyConnectionCloseTests: XCTestCase {
    private func reverseProxy(to origin: NginxOrigin) throws -> ProxyHarness {
        let upstream = try XCTUnwrap(UpstreamTarget(scheme: .https, host: "127.0.0.1", port: origin.port))
        return try ProxyHarness(mode: .reverse(upstream)) { $0.upstreamVerification = .caFile(origin.caFile) }
    }

    func testAClientThatAsksToCloseReadsCloseAndACleanEnd() throws {
        let target = try XCTUnwrap(UpstreamTarget(scheme: .https, host: "origin.test", port: 443))
        let playbook = try ProxyPlaybook(mode: .reverse(target))
        let client = try playbook.connectClient(tls: "origin.test")
        client.send("GET /file HTTP/1.1\r\nHost: origin.test\r\nConnection: close\r\n\r\n")
        let origin = try playbook.acceptDial(host: "origin.test", port: 443, tls: true)
        XCTAssertTrue(origin.readText().hasPrefix("GET /file HTTP/1.1\r\n"))
        let body = String(repeating: "x", count: 1024)
        origin.send("HTTP/1.1 200 OK\r\nContent-Length: 1024\r\n\r\n" + body)
        playbook.run()
        let answer = client.readText()
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 200 OK\r\n"), answer)
        let head = try XCTUnwrap(answer.components(separatedBy: "\r\n\r\n").first)
        XCTAssertTrue(head.contains("\r\nConnection: close"), head)
        XCTAssertTrue(answer.hasSuffix("\r\n\r\n" + body), "the whole body arrived")
        // A clean end: close_notify and FIN once the client's end came, never a reset.
        XCTAssertTrue(client.receivedEOF, "the proxy ends the connection")
        client.finishSending()
        playbook.advance(by: .seconds(2))
        XCTAssertFalse(client.receivedReset)
        XCTAssertNil(client.tlsFailure)
        XCTAssertTrue(client.isClosed)
        // The record shows the answer as sent, Connection: close included.
        let record = try XCTUnwrap(playbook.records.first)
        XCTAssertEqual(record.leg(.downstream)?.response?.fields.first { $0.name == "Connection" }?.value, "close")
        XCTAssertEqual(record.leg(.downstream)?.response?.complete, true)
    }

    /// The benchmark's symptom: wrk counted a read error per request.
    func testWrkWithConnectionCloseSeesNoSocketErrors() throws {
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: "/usr/bin/wrk"), "wrk is not installed")
        let origin = try NginxOrigin()
        defer { origin.stop() }
        try origin.serve("file", size: 1024)
        let proxy = try reverseProxy(to: origin)
        let run = try ToolRun.run("/usr/bin/wrk", ["-t1", "-c2", "-d1s", "--timeout", "10s", "-H", "Connection: close",
                                                   "https://localhost:\(proxy.port)/file"])
        XCTAssertEqual(run.status, 0, run.error)
        XCTAssertTrue(run.output.contains("requests in"), run.output)
        XCTAssertFalse(run.output.contains("Socket errors"), run.output)
        XCTAssertFalse(run.output.contains("Non-2xx"), run.output)
    }
}
