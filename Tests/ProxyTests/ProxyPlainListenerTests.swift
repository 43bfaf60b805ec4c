import Evidence
import IntactTestSupport
import Foundation
import XCTest
@testable import Proxy

/// A reverse tap with a plain-HTTP client leg (`--listen-plain`), as Varnish
/// and appliances that speak `http://` to their backends need, on the
/// playbook (the test is client and TLS origin): the request arrives in
/// plain HTTP, leaves over TLS, is recorded with scheme `http` downstream
/// and `https` upstream, and verification calls the scheme change the
/// tap's own (`tap-scheme`), not a modification.
final class ProxyPlainListenerTests: XCTestCase {
    /// A 40 kB page.
    static let page = (0..<40_000).map { UInt8(truncatingIfNeeded: $0 % 251) }

    private func plainReverseProxy() throws -> ProxyPlaybook {
        let upstream = try XCTUnwrap(UpstreamTarget(scheme: .https, host: "origin.test", port: 443))
        return try ProxyPlaybook(mode: .reverse(upstream)) { $0.listenPlain = true }
    }

    func testPlainHTTPInTLSOutRecordedAndJudgedAsTheTapsOwnScheme() throws {
        let playbook = try plainReverseProxy()
        var origin: PlaybookPeer?
        for version in ["HTTP/1.1", "HTTP/1.0"] {
            let client = try playbook.connectClient()
            client.send("GET /page \(version)\r\nHost: origin.test\r\n\r\n")
            playbook.run()
            // The first request dials; the second goes on the pooled connection.
            if !playbook.network.dials.isEmpty { origin = try playbook.acceptDial(host: "origin.test", port: 443, tls: true) }
            let upstream = try XCTUnwrap(origin)
            XCTAssertTrue(upstream.readText().hasPrefix("GET /page HTTP/1."), version)
            upstream.send("HTTP/1.1 200 OK\r\nContent-Length: \(Self.page.count)\r\n\r\n")
            upstream.send(Self.page)
            playbook.run()
            let answer = client.read()
            let head = String(decoding: answer.prefix(12), as: UTF8.self)
            XCTAssertTrue(head.hasPrefix("HTTP/1.") && head.hasSuffix(" 200"), head)
            XCTAssertEqual(Array(answer.suffix(Self.page.count)), Self.page, version)
        }
        let recording = playbook.recording
        XCTAssertEqual(recording.header.options["listenPlain"], "true")
        XCTAssertEqual(recording.header.origin, "https://origin.test:443", "the origin a reverse tap's recording stands for")
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
        let playbook = try plainReverseProxy()
        // A TLS client (an https:// backend setting pointed at the plain port) sends a ClientHello.
        let client = try playbook.connectClient()
        client.send(ProxyServerNameTests.clientHello(serverName: Array("origin.test".utf8)))
        playbook.run()
        let answer = client.readText()
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 400 "), answer)
        let record = try XCTUnwrap(playbook.records.first)
        XCTAssertEqual(record.error?.kind, .protocolError, "\(String(describing: record.error))")
        XCTAssertNil(record.leg(.upstream), "nothing went upstream")
        XCTAssertTrue(playbook.network.dials.isEmpty)
    }

    func testAConnectionThatSendsNothingIsRecordedAsClosed() throws {
        let playbook = try plainReverseProxy()
        // A TCP-only health check: connect and close.
        let client = try playbook.connectClient()
        client.finishSending()
        playbook.run()
        XCTAssertEqual(playbook.records.first?.connection?.outcome, .closed)
    }
}
