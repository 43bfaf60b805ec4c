import Evidence
import HTTP
import IntactTestSupport
import Proxy
import Wire
import XCTest

/// HTTP/2 to HTTP/2 through the proxy (the playbook: the whole proxy in
/// memory) keeps the client's pseudo-field order, so a real client's hop
/// (Chromium sends `:method :authority :scheme :path`) is identical, and the
/// order is recorded on both legs.
final class ProxyPseudoFieldOrderTests: XCTestCase {
    func testAClientsPseudoFieldOrderCrossesTheProxyAndIsRecordedOnBothLegs() throws {
        let target = try XCTUnwrap(UpstreamTarget(scheme: .https, host: "origin.test", port: 9443))
        let playbook = try ProxyPlaybook(mode: .reverse(target))
        let client = try playbook.connectHTTP2Client(tls: "origin.test")

        // Chromium's order, as its head carries it once decoded.
        var head = HTTPRequestHead(method: "GET", scheme: "https", authority: "origin.test", path: "/suite/rest/a",
                                   version: .http2, fields: ["accept": "*/*"])
        head.pseudoFieldOrder = HTTP2PseudoFieldOrder([.method, .authority, .scheme, .path])
        let stream = try XCTUnwrap(client.request(head))
        let origin = try playbook.acceptHTTP2Dial(host: "origin.test", port: 9443)
        var seen: [[String]] = []
        for event in origin.takeEvents() {
            guard case .requestHead(let upstream, _, let decoded) = event else { continue }
            seen.append(decoded.map(\.name))
            origin.respond(upstream, body: Array("ok".utf8))
        }
        playbook.run()
        XCTAssertTrue(client.takeEvents().endedStreams.contains(stream), "the answer reached the client")

        let chromium = [":method", ":authority", ":scheme", ":path", "accept"]
        XCTAssertEqual(seen, [chromium], "the origin got the client's order")
        let record = try XCTUnwrap(playbook.records.first)
        let received = try XCTUnwrap(record.leg(.downstream)?.request?.digest.head)
        let sent = try XCTUnwrap(record.leg(.upstream)?.request?.digest.head)
        XCTAssertEqual(received.pseudoFieldOrder?.description, ":method :authority :scheme :path")
        XCTAssertEqual(sent.pseudoFieldOrder?.description, ":method :authority :scheme :path")
        XCTAssertEqual(received.exact, sent.exact, "the same header list on both legs")
        let hop = DigestComparison(before: try XCTUnwrap(record.leg(.downstream)?.request?.digest),
                                   after: try XCTUnwrap(record.leg(.upstream)?.request?.digest))
        XCTAssertEqual(hop.verdict, .identical)
    }
}
