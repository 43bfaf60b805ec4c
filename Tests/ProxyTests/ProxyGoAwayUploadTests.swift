import Evidence
import Foundation
import IntactTestSupport
@testable import Proxy
import XCTest

/// A GOAWAY that arrives while a request body is being uploaded, from a real
/// HTTP/2 origin (`PythonH2Origin`), through the reverse proxy: the body is
/// larger than the proxy holds for a resend, so the request is not sent
/// again and the client gets 502 with a `Proxy-Status` naming the GOAWAY.
final class ProxyGoAwayUploadTests: XCTestCase {
    func testAGoAwayMidUploadOfABodyNoLongerHeldIsAnswered502() throws {
        let origin = try PythonH2Origin(.goAwayAfter(256 * 1024))
        defer { origin.stop() }
        let upstream = try XCTUnwrap(UpstreamTarget(scheme: .https, host: "127.0.0.1", port: origin.port))
        let proxy = try ProxyHarness(mode: .reverse(upstream)) { $0.upstreamVerification = .caFile(origin.caFile) }
        let body = proxy.directory + "/upload"
        let size = 4 * 1024 * 1024
        try Data(repeating: 0x61, count: size).write(to: URL(fileURLWithPath: body))
        let headers = proxy.directory + "/headers"
        for version in ["--http1.1", "--http2"] {
            let run = try ToolRun.curl([version, "--cacert", proxy.caFile, "-D", headers, "-o", "/dev/null",
                                        "-w", "%{http_code}", "--data-binary", "@" + body,
                                        "https://127.0.0.1:\(proxy.port)/upload"])
            XCTAssertEqual(run.output, "502", "\(version): \(run.error)")
            let text = try String(contentsOfFile: headers, encoding: .isoLatin1).lowercased()
            let status = text.components(separatedBy: "\r\n").first { $0.hasPrefix("proxy-status:") } ?? ""
            XCTAssertTrue(status.contains("connection_terminated") && status.contains("goaway"), "\(version): \(text)")
        }
        let records = try proxy.stopAndRead().records
        XCTAssertEqual(records.count, 2)
        for record in records {
            XCTAssertEqual(record.leg(.downstream)?.response?.status, 502, record.exchangeID)
            XCTAssertTrue(record.error?.message.contains("GOAWAY") == true, "\(String(describing: record.error))")
            XCTAssertNil(record.retries, "a body no longer held is not sent again")
            let sent = try XCTUnwrap(record.leg(.upstream)?.request?.digest.body.length)
            XCTAssertGreaterThan(sent, UpstreamReplay.bodyLimit, "more than the proxy holds went before the GOAWAY")
            XCTAssertEqual(record.leg(.upstream)?.request?.complete, false)
        }
    }
}
