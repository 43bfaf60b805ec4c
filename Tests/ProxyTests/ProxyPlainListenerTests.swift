import Evidence
import IntactTestSupport
import Foundation
import XCTest
@testable import Proxy

/// A reverse tap with a plain-HTTP client leg (`--listen-plain`), as Varnish
/// and appliances that speak `http://` to their backends need: the request
/// arrives in plain HTTP, leaves over TLS to the nginx origin, is recorded
/// with scheme `http` downstream and `https` upstream, and verification calls
/// the scheme change the tap's own (`tap-scheme`), not a modification.
final class ProxyPlainListenerTests: XCTestCase {
    static let shared = SharedNginxOrigin([("page", 40_000)])
    static var origin: NginxOrigin? { shared.origin }
    static var digest: String { shared.digests["page"] ?? "" }

    override class func setUp() {
        super.setUp()
        shared.start()
    }

    override class func tearDown() {
        shared.stop()
        super.tearDown()
    }

    private func plainReverseProxy() throws -> ProxyHarness {
        let origin = try XCTUnwrap(Self.origin, "no nginx origin")
        let upstream = try XCTUnwrap(UpstreamTarget(scheme: .https, host: "127.0.0.1", port: origin.port))
        return try ProxyHarness(mode: .reverse(upstream)) {
            $0.upstreamVerification = .caFile(origin.caFile)
            $0.listenPlain = true
        }
    }

    func testPlainHTTPInTLSOutRecordedAndJudgedAsTheTapsOwnScheme() throws {
        let proxy = try plainReverseProxy()
        for version in ["--http1.1", "--http1.0"] {
            let output = proxy.directory + "/curl\(version)"
            let run = try ToolRun.curl([version, "-o", output, "-w", "%{http_code}", "http://127.0.0.1:\(proxy.port)/page"])
            XCTAssertEqual(run.status, 0, run.error)
            XCTAssertEqual(run.output, "200")
            XCTAssertEqual(try NginxOrigin.sha256(ofFile: output), Self.digest, version)
        }
        let recording = try proxy.stopAndRead()
        XCTAssertEqual(recording.header.options["listenPlain"], "true")
        XCTAssertEqual(recording.header.origin, "https://127.0.0.1:\(try XCTUnwrap(Self.origin).port)",
                       "the origin a reverse tap's recording stands for")
        XCTAssertEqual(recording.records.count, 2)
        for record in recording.records {
            // Semantic request heads differ by the scheme alone (the verifier's part, below).
            XCTAssertNil(record.error)
            XCTAssertEqual(record.leg(.downstream)?.response?.digest.head.semantic,
                           record.leg(.upstream)?.response?.digest.head.semantic)
            XCTAssertEqual(record.leg(.downstream)?.response?.digest.body, record.leg(.upstream)?.response?.digest.body)
            XCTAssertNil(record.leg(.downstream)?.tls, "the client leg is plain")
            XCTAssertEqual(record.leg(.downstream)?.request?.scheme, "http")
            XCTAssertEqual(record.leg(.upstream)?.request?.scheme, "https")
            XCTAssertNotNil(record.leg(.upstream)?.tls)
        }

        let report = try Verifier(Verifier.Configuration()).verify([recording])
        XCTAssertTrue(report.policyHolds)
        for exchange in report.exchanges {
            XCTAssertEqual(exchange.hops.map(\.verdict), [.equivalent])
            XCTAssertTrue(exchange.hops[0].request.reasons.contains { $0.kind == .tapScheme },
                          "\(exchange.hops[0].request.reasons)")
        }
    }

    func testATLSClientOnThePlainListenerGetsA400AndARecord() throws {
        let proxy = try plainReverseProxy()
        // A TLS client (an https:// backend setting pointed at the plain port) sends a ClientHello.
        let run = try ToolRun.curl(["-k", "-sS", "-o", "/dev/null", "https://127.0.0.1:\(proxy.port)/page"])
        XCTAssertNotEqual(run.status, 0)
        let recording = try proxy.stopAndRead()
        let record = try XCTUnwrap(recording.records.first)
        XCTAssertEqual(record.error?.kind, .protocolError, "\(String(describing: record.error))")
        XCTAssertNil(record.leg(.upstream), "nothing went upstream")
    }

    func testAConnectionThatSendsNothingIsRecordedAsClosed() throws {
        let proxy = try plainReverseProxy()
        // A TCP-only health check: connect and close.
        let fd = try XCTUnwrap(RawSocket.connect(port: proxy.port))
        close(fd)
        usleep(200_000)  // the proxy sees the close before it stops
        let recording = try proxy.stopAndRead()
        XCTAssertEqual(recording.records.first?.connection?.outcome, .closed)
    }
}
