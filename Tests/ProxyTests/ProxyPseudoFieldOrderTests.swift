import Evidence
import HTTP
import IntactTestSupport
import Proxy
import Transport
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
        let seen = PlaybookBox<[[String]]>([])
        let origin = try playbook.startHTTP2Origin(host: "origin.test", port: 9443) { stream in
            if case .http2(let list) = stream.requestWire { seen.value.append(list.map(\.name)) }
            stream.collectBody { _ in try? stream.respond(HTTPResponseHead(status: 200), body: Array("ok".utf8)) }
        }
        defer { withExtendedLifetime(origin) {} }
        let connection = try playbook.connectHTTP2Client(serverName: "origin.test")

        // Chromium's order, as its head carries it once decoded.
        var head = HTTPRequestHead(method: "GET", scheme: "https", authority: "origin.test", path: "/suite/rest/a",
                                   version: .http2, fields: ["accept": "*/*"])
        head.pseudoFieldOrder = HTTP2PseudoFieldOrder([.method, .authority, .scheme, .path])
        let ended = PlaybookBox(false)
        _ = try connection.openStream(head) { event in
            if case .end = event { ended.value = true }
        }
        playbook.run()
        XCTAssertTrue(ended.value, "the answer reached the client")

        let chromium = [":method", ":authority", ":scheme", ":path", "accept"]
        XCTAssertEqual(seen.value, [chromium], "the origin got the client's order")
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
