import Foundation
import IntactTestSupport
import Proxy
import XCTest

/// A client that asks to close after its request (`Connection: close`, a full
/// TLS handshake per request, as `wrk -H 'Connection: close'` does) reads
/// `Connection: close` in the proxy's answer and then a clean end of the
/// connection, so it never sends a second request into a closing connection.
final class ProxyConnectionCloseTests: XCTestCase {
    private func reverseProxy(to origin: NginxOrigin) throws -> ProxyHarness {
        let upstream = try XCTUnwrap(UpstreamTarget(scheme: .https, host: "127.0.0.1", port: origin.port))
        return try ProxyHarness(mode: .reverse(upstream)) { $0.upstreamVerification = .caFile(origin.caFile) }
    }

    func testAClientThatAsksToCloseReadsCloseAndACleanEnd() throws {
        let origin = try NginxOrigin()
        defer { origin.stop() }
        try origin.serve("file", size: 1024)
        let proxy = try reverseProxy(to: origin)
        // openssl s_client -quiet reads until the server ends the connection; a reset shows as errno on stderr.
        let request = "GET /file HTTP/1.1\\r\\nHost: localhost\\r\\nConnection: close\\r\\n\\r\\n"
        let run = try ToolRun.run("/bin/sh", ["-c", "printf '\(request)' | openssl s_client -quiet -connect "
            + "127.0.0.1:\(proxy.port) -servername localhost -alpn http/1.1 -CAfile \(proxy.caFile)"])
        XCTAssertEqual(run.status, 0, run.error)
        XCTAssertFalse(run.error.contains("errno"), run.error)
        let answer = run.outputData
        let text = String(decoding: answer, as: UTF8.self)
        XCTAssertTrue(text.hasPrefix("HTTP/1.1 200 OK\r\n"), text)
        let head = try XCTUnwrap(text.components(separatedBy: "\r\n\r\n").first)
        XCTAssertTrue(head.contains("\r\nConnection: close"), head)
        let headLength = try XCTUnwrap(answer.range(of: Data("\r\n\r\n".utf8))).upperBound
        XCTAssertEqual(answer.count - headLength, 1024, "the whole body arrived")
        // The record shows the answer as sent, Connection: close included.
        let record = try XCTUnwrap(proxy.stopAndRead().records.first)
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
