import Evidence
import Foundation
import HTTP
import IntactTestSupport
import Proxy
import XCTest

/// `Content-Length: 5, 5` (RFC 9110 §8.6) through the proxy, on the
/// playbook (the test is client and origin): to an HTTP/2 origin as one
/// `content-length: 5`, recorded as an equivalent framing change; to an
/// HTTP/1.1 origin byte for byte; differing values refused.
final class ContentLengthListFlowTests: XCTestCase {
    func testAnAgreeingListReachesAnHTTP2OriginAsOneValue() throws {
        let upstream = try XCTUnwrap(UpstreamTarget(scheme: .https, host: "origin.test", port: 443))
        let playbook = try ProxyPlaybook(mode: .reverse(upstream))
        let client = try playbook.connectClient(tls: "origin.test")
        client.send("PUT /list.txt HTTP/1.1\r\nHost: origin.test\r\nContent-Length: 5, 5\r\n\r\nhello")
        let origin = try playbook.acceptHTTP2Dial(host: "origin.test", port: 443)
        let events = origin.takeEvents()
        let request = try XCTUnwrap(events.requests.first)
        XCTAssertEqual(events.bodies[request.stream], Array("hello".utf8), "the origin got the body")
        XCTAssertTrue(events.endedStreams.contains(request.stream))
        origin.respond(request.stream, status: 201, body: [])
        playbook.run()
        XCTAssertTrue(client.readText().hasPrefix("HTTP/1.1 201 "))
        let record = try XCTUnwrap(playbook.records.first)
        let before = try XCTUnwrap(record.leg(.downstream)?.request)
        let after = try XCTUnwrap(record.leg(.upstream)?.request)
        XCTAssertEqual(after.version, .http2)
        XCTAssertEqual(before.fields.filter { $0.name.lowercased() == "content-length" }.map(\.value), ["5, 5"])
        XCTAssertEqual(after.fields.filter { $0.name.lowercased() == "content-length" }.map(\.value), ["5"])
        XCTAssertEqual(request.head.fields.filter { $0.name.lowercased() == "content-length" }.map(\.value), ["5"],
                       "one value on the HTTP/2 wire")
        let comparison = DigestComparison(before: before.digest, after: after.digest)
        XCTAssertEqual(comparison.verdict, .equivalent, "\(comparison)")
        XCTAssertTrue(comparison.reasons.contains(.framing(names: ["content-length"])), "\(comparison.reasons)")
    }

    func testAnHTTP1OriginGetsTheListByteForByte() throws {
        let playbook = try ProxyPlaybook()
        let client = try playbook.connectClient()
        // What goes upstream: the list as the client sent it (its hop-by-hop `Connection` the proxy's own).
        let request = "POST /x HTTP/1.1\r\nHost: origin.test\r\nContent-Length: 5, 5\r\n\r\nhello"
        client.send("POST http://origin.test/x HTTP/1.1\r\nHost: origin.test\r\nContent-Length: 5, 5\r\nConnection: close\r\n\r\nhello")
        let origin = try playbook.acceptDial(host: "origin.test", port: 80)
        let head = origin.readText()
        XCTAssertTrue(head.contains("\r\nContent-Length: 5, 5\r\n"), head)
        XCTAssertFalse(head.lowercased().contains("transfer-encoding"), head)
        XCTAssertEqual(head, request, "byte for byte")
        origin.send("HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
        origin.finishSending()
        playbook.run()
        let answer = client.readText()
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 204 "), answer)
    }

    func testDifferingValuesAreRefused() throws {
        let playbook = try ProxyPlaybook()
        let client = try playbook.connectClient()
        client.send("POST http://127.0.0.1:1/x HTTP/1.1\r\nHost: 127.0.0.1:1\r\nContent-Length: 5, 6\r\n\r\nhello")
        playbook.run()
        let answer = client.readText()
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 400 "), answer)
        XCTAssertTrue(answer.contains(HTTP1ParseError.conflictingContentLengths(["5, 6"]).reason), answer)
        XCTAssertTrue(playbook.network.dials.isEmpty, "nothing went upstream")
    }
}
