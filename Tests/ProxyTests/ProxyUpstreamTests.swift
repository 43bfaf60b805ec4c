import Evidence
import IntactTestSupport
import Foundation
import HTTP
import TLS
import XCTest
@testable import Proxy

/// The upstream leg's options on loopback: a client certificate for an
/// origin that asks for one, verification turned off, and any HTTP version
/// downstream to any version upstream.
final class ProxyUpstreamTests: XCTestCase {
    func testAClientCertificateAnswersAnUpstreamThatRequiresOne() throws {
        let origin = try NginxOrigin(requireClientCertificate: true)
        defer { origin.stop() }
        let digest = try origin.serve("file", size: 4096)
        let issued = try origin.authority.issueClient(commonName: "intact-tap", password: "pw")
        let withCertificate = try ProxyHarness {
            $0.upstreamVerification = .caFile(origin.caFile)
            $0.upstreamClientIdentity = issued.identity
        }
        let output = withCertificate.directory + "/file"
        let run = try ToolRun.curl(["-x", withCertificate.proxyURL, "--cacert", withCertificate.caFile, "-o", output,
                                    "-w", "%{http_code}", origin.url("/file")])
        XCTAssertEqual(run.output, "200", run.error)
        XCTAssertEqual(try NginxOrigin.sha256(ofFile: output), digest)
        withCertificate.stop()

        let without = try ProxyHarness { $0.upstreamVerification = .caFile(origin.caFile) }
        let refused = try ToolRun.curl(["-x", without.proxyURL, "--cacert", without.caFile, "-o", "/dev/null",
                                        "-w", "%{http_code}", origin.url("/file")])
        XCTAssertEqual(refused.output, "400", "nginx refuses a request without a client certificate")
    }

    func testInsecureUpstreamReachesAnOriginNobodyTrusts() throws {
        let origin = try NginxOrigin()
        defer { origin.stop() }
        try origin.serve("file", size: 10)
        let proxy = try ProxyHarness { $0.upstreamVerification = .insecure }
        let run = try ToolRun.curl(["-x", proxy.proxyURL, "--cacert", proxy.caFile, "-o", "/dev/null", "-w", "%{http_code}",
                                    origin.url("/file")])
        XCTAssertEqual(run.output, "200", run.error)
        let record = try XCTUnwrap(proxy.stopAndRead().records.first)
        XCTAssertNil(record.error)
        XCTAssertNotNil(record.leg(.upstream)?.tls?.peerCertificateSHA256)
    }

    func testHTTP2ClientsReachAnHTTP1OriginWithBodiesOfUnknownLength() throws {
        let origin = try NginxOrigin(http2: false)
        defer { origin.stop() }
        let digest = try origin.serve("file", size: 300_000)
        let proxy = try ProxyHarness { $0.upstreamVerification = .caFile(origin.caFile) }
        let output = proxy.directory + "/file"
        let download = try ToolRun.curl(["-x", proxy.proxyURL, "--cacert", proxy.caFile, "--http2", "-o", output,
                                         origin.url("/file")])
        XCTAssertEqual(download.status, 0, download.error)
        XCTAssertEqual(try NginxOrigin.sha256(ofFile: output), digest)
        // An upload from standard input has no length: HTTP/2 sends none, so HTTP/1.1 upstream is chunked.
        let source = proxy.directory + "/upload"
        let uploadDigest = try NginxOrigin.writePatternFile(source, size: 200_000)
        let upload = try ToolRun.run("/bin/sh", ["-c", "curl --silent --show-error -x \(proxy.proxyURL) --cacert \(proxy.caFile) "
                                                 + "--http2 -T - -o /dev/null -w '%{http_code}' \(origin.url("/streamed")) < \(source)"])
        XCTAssertEqual(upload.output, "201", upload.error)
        XCTAssertEqual(try NginxOrigin.sha256(ofFile: origin.root + "/streamed"), uploadDigest)

        let records = try proxy.stopAndRead().records
        XCTAssertEqual(records.count, 2)
        for record in records {
            assertCleanHop(record)
            XCTAssertEqual(record.leg(.downstream)?.request?.version, .http2)
            XCTAssertEqual(record.leg(.upstream)?.request?.version, .http1_1)
            XCTAssertEqual(record.leg(.upstream)?.response?.version, .http1_1)
            XCTAssertEqual(record.leg(.downstream)?.response?.version, .http2)
        }
    }
}
