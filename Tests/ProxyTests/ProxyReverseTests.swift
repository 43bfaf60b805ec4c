import Evidence
import IntactTestSupport
import Foundation
import XCTest
@testable import Proxy

/// Reverse mode with nghttp and curl, passthrough tunnels, and the key log,
/// against an nginx origin on loopback.
final class ProxyReverseTests: XCTestCase {
    static let shared = SharedNginxOrigin([("one-mib", 1 << 20)])
    static var origin: NginxOrigin? { shared.origin }
    static var digest: String { shared.digests["one-mib"] ?? "" }

    override class func setUp() {
        super.setUp()
        shared.start()
    }

    override class func tearDown() {
        shared.stop()
        super.tearDown()
    }

    private func reverseProxy(_ configure: (inout ProxyConfiguration) -> Void = { _ in }) throws -> (ProxyHarness, NginxOrigin) {
        let origin = try XCTUnwrap(Self.origin, "no nginx origin")
        let upstream = try XCTUnwrap(UpstreamTarget(scheme: .https, host: "127.0.0.1", port: origin.port))
        let proxy = try ProxyHarness(mode: .reverse(upstream)) {
            $0.upstreamVerification = .caFile(origin.caFile)
            configure(&$0)
        }
        return (proxy, origin)
    }

    func testCurlAndNghttpThroughTheReverseProxy() throws {
        let (proxy, _) = try reverseProxy()
        let url = "https://127.0.0.1:\(proxy.port)/one-mib"
        for version in ["--http1.1", "--http2"] {
            let output = proxy.directory + "/curl\(version)"
            let run = try ToolRun.curl(["--cacert", proxy.caFile, version, "-o", output, "-w", "%{http_code}", url])
            XCTAssertEqual(run.status, 0, run.error)
            XCTAssertEqual(run.output, "200")
            XCTAssertEqual(try NginxOrigin.sha256(ofFile: output), Self.digest, version)
        }
        let nghttpOutput = proxy.directory + "/nghttp"
        let nghttp = try ToolRun.run("/bin/sh", ["-c", "nghttp --no-verify-peer '\(url)' > '\(nghttpOutput)'"])
        XCTAssertEqual(nghttp.status, 0, nghttp.error)
        XCTAssertEqual(try NginxOrigin.sha256(ofFile: nghttpOutput), Self.digest, "nghttp")

        let recording = try proxy.stopAndRead()
        XCTAssertEqual(recording.header.mode, "reverse")
        XCTAssertEqual(recording.records.count, 3)
        recording.records.forEach { assertCleanHop($0) }
        XCTAssertEqual(recording.records.map { $0.leg(.downstream)?.tls?.alpn }, ["http/1.1", "h2", "h2"])
        XCTAssertTrue(recording.records.allSatisfy { $0.leg(.downstream)?.tls?.version == "TLSv1.3" })
    }

    func testPassthroughHostsAreTunnelledWithTheOriginsOwnCertificate() throws {
        let origin = try XCTUnwrap(Self.origin)
        let proxy = try ProxyHarness { $0.passthroughHosts = ["127.0.0.1"] }
        let output = proxy.directory + "/tunnelled"
        // The client trusts only the origin's CA: it works only if the proxy does not intercept.
        let run = try ToolRun.curl(["-x", proxy.proxyURL, "--cacert", origin.caFile, "-o", output, origin.url("/one-mib")])
        XCTAssertEqual(run.status, 0, run.error)
        XCTAssertEqual(try NginxOrigin.sha256(ofFile: output), Self.digest)
        let record = try XCTUnwrap(proxy.stopAndRead().records.first)
        XCTAssertEqual(record.leg(.downstream)?.request?.method, "CONNECT")
        XCTAssertEqual(record.leg(.downstream)?.response?.status, 200)
        XCTAssertNotNil(record.leg(.upstream))
        XCTAssertNil(record.leg(.upstream)?.request, "a tunnel's content is not recorded")
        XCTAssertNil(record.error)
        XCTAssertEqual(record.connection?.outcome, .tunnel)
        XCTAssertGreaterThan(record.leg(.downstream)?.relayed?.serverToClient.bytes ?? 0, 1 << 20, "what it carried is counted")
        XCTAssertEqual(record.leg(.downstream)?.relayed?.serverToClient, record.leg(.upstream)?.relayed?.serverToClient)
        let report = try Verifier().verify([RecordingReader.read(path: proxy.recordingPath)])
        XCTAssertEqual(report.exchanges, [], "a tunnel is judged as a tunnel, never as an exchange")
    }

    func testTheKeyLogHoldsBothLegsSecrets() throws {
        let directory = NSTemporaryDirectory() + "intact-keylog-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let keyLog = directory + "/keys.log"
        let (proxy, _) = try reverseProxy { $0.keyLog = .file(keyLog) }
        let run = try ToolRun.curl(["--cacert", proxy.caFile, "-o", "/dev/null", "https://127.0.0.1:\(proxy.port)/one-mib"])
        XCTAssertEqual(run.status, 0, run.error)
        proxy.stop()
        let lines = try String(contentsOfFile: keyLog, encoding: .utf8).split(separator: "\n")
        // The second field is the client random in both formats (TLS 1.2 `CLIENT_RANDOM`, TLS 1.3 secrets).
        let randoms = Set(lines.compactMap { $0.split(separator: " ").dropFirst().first })
        XCTAssertEqual(randoms.count, 2, "one session per leg: \(lines.map { $0.prefix(40) })")
    }
}
