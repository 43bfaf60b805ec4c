import Evidence
import Foundation
import HTTP
import IntactTestSupport
import Proxy
import XCTest

/// `Content-Length: 5, 5` (RFC 9110 §8.6) through the proxy: to an HTTP/2
/// origin as one `content-length: 5`, recorded as an equivalent framing
/// change; to an HTTP/1.1 origin byte for byte.
final class ContentLengthListFlowTests: XCTestCase {
    func testAnAgreeingListReachesAnHTTP2OriginAsOneValue() throws {
        let origin = try NginxOrigin()
        defer { origin.stop() }
        let upstream = try XCTUnwrap(UpstreamTarget(scheme: .https, host: "127.0.0.1", port: origin.port))
        let proxy = try ProxyHarness(mode: .reverse(upstream)) { $0.upstreamVerification = .caFile(origin.caFile) }
        let run = try ToolRun.curl(["--cacert", proxy.caFile, "--http1.1", "-X", "PUT", "-H", "Content-Length: 5, 5",
                                    "--data-binary", "hello", "-o", "/dev/null", "-w", "%{http_code}",
                                    "https://127.0.0.1:\(proxy.port)/list.txt"])
        XCTAssertEqual(run.output, "201", run.error)
        XCTAssertEqual(try String(contentsOfFile: origin.root + "/list.txt", encoding: .utf8), "hello")
        let record = try XCTUnwrap(proxy.stopAndRead().records.first)
        let before = try XCTUnwrap(record.leg(.downstream)?.request)
        let after = try XCTUnwrap(record.leg(.upstream)?.request)
        XCTAssertEqual(after.version, .http2)
        XCTAssertEqual(before.fields.filter { $0.name.lowercased() == "content-length" }.map(\.value), ["5, 5"])
        XCTAssertEqual(after.fields.filter { $0.name.lowercased() == "content-length" }.map(\.value), ["5"])
        let comparison = DigestComparison(before: before.digest, after: after.digest)
        XCTAssertEqual(comparison.verdict, .equivalent, "\(comparison)")
        XCTAssertTrue(comparison.reasons.contains(.framing(names: ["content-length"])), "\(comparison.reasons)")
    }

    func testAnHTTP1OriginGetsTheListByteForByte() throws {
        let origin = try RawOrigin(.answer("HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n"))
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let answer = try XCTUnwrap(RawSocket.exchange(port: proxy.port,
            "POST http://127.0.0.1:\(origin.port)/x HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n"
            + "Content-Length: 5, 5\r\nConnection: close\r\n\r\nhello"))
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 204 "), answer)
        let head = try XCTUnwrap(origin.requestHeads.first)
        XCTAssertTrue(head.contains("\r\nContent-Length: 5, 5\r\n"), head)
        XCTAssertFalse(head.lowercased().contains("transfer-encoding"), head)
    }

    func testDifferingValuesAreRefused() throws {
        let proxy = try ProxyHarness()
        let answer = try XCTUnwrap(RawSocket.exchange(port: proxy.port,
            "POST http://127.0.0.1:1/x HTTP/1.1\r\nHost: 127.0.0.1:1\r\nContent-Length: 5, 6\r\n\r\nhello"))
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 400 "), answer)
        XCTAssertTrue(answer.contains(HTTP1ParseError.conflictingContentLengths(["5, 6"]).reason), answer)
    }
}
