import Evidence
import HTTP
import IntactTestSupport
@testable import Proxy
import XCTest

/// A GOAWAY that arrives while a request body is being uploaded, from an
/// HTTP/2 origin on the playbook, through the reverse proxy: the body is
/// larger than the proxy holds for a resend, so the request is not sent
/// again and the client (HTTP/1.1 or HTTP/2) gets 502 with a `Proxy-Status`
/// naming the GOAWAY.
final class ProxyGoAwayUploadTests: XCTestCase {
    static let size = 4 * 1024 * 1024
    static let goAwayAfter = 256 * 1024

    func testAGoAwayMidUploadOfABodyNoLongerHeldIsAnswered502() throws {
        let target = try XCTUnwrap(UpstreamTarget(scheme: .https, host: "origin.test", port: 443))
        let playbook = try ProxyPlaybook(mode: .reverse(target))
        let body = [UInt8](repeating: 0x61, count: Self.size)

        let http1 = try playbook.connectClient(tls: "origin.test")
        http1.send("POST /upload HTTP/1.1\r\nHost: origin.test\r\nContent-Length: \(Self.size)\r\n\r\n")
        http1.send(body)
        try goAwayMidUpload(playbook)
        let answer = http1.readText()
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 502 "), answer)
        let status = answer.lowercased().components(separatedBy: "\r\n").first { $0.hasPrefix("proxy-status:") } ?? ""
        XCTAssertTrue(status.contains("connection_terminated") && status.contains("goaway"), answer)

        let http2 = try playbook.connectHTTP2Client(tls: "origin.test")
        let stream = try XCTUnwrap(http2.request(HTTPRequestHead(method: "POST", authority: "origin.test", path: "/upload",
                                                                 fields: ["content-length": String(Self.size)]),
                                                 body: body))
        try goAwayMidUpload(playbook)
        let events = http2.takeEvents()
        XCTAssertEqual(events.statuses[stream], 502, "\(events.prefix(5))")
        let head = events.lazy.compactMap { event -> HTTPResponseHead? in
            if case .responseHead(stream, let head, _) = event { return head } else { return nil }
        }.first
        let field = head?.fields["proxy-status"]?.lowercased() ?? ""
        XCTAssertTrue(field.contains("connection_terminated") && field.contains("goaway"), "\(String(describing: head))")

        let records = playbook.records
        XCTAssertEqual(records.count, 2)
        for record in records {
            XCTAssertEqual(record.leg(.downstream)?.response?.status, 502, record.exchangeID)
            XCTAssertTrue(record.error?.message.contains("GOAWAY") == true, "\(String(describing: record.error))")
            XCTAssertNil(record.retries, "a body no longer held is not sent again")
            let sent = try XCTUnwrap(record.leg(.upstream)?.request?.digest.body.length)
            XCTAssertGreaterThan(sent, UpstreamReplay.bodyLimit, "more than the proxy holds went before the GOAWAY")
            XCTAssertEqual(record.leg(.upstream)?.request?.complete, false, "\(sent) of \(Self.size) bytes sent")
        }
    }

    /// Answers the proxy's dial as an HTTP/2 origin that reads the upload a
    /// window at a time and, once `goAwayAfter` bytes arrived, sends GOAWAY
    /// naming no stream processed (then reads and drops the rest).
    private func goAwayMidUpload(_ playbook: ProxyPlaybook, file: StaticString = #filePath, line: UInt = #line) throws {
        let origin = try playbook.acceptHTTP2Dial(host: "origin.test", port: 443, consumesData: false, file: file, line: line)
        var received = 0
        for _ in 0..<1000 {
            playbook.run()
            var delivered: [(HTTP2StreamID, Int)] = []
            for case .data(let stream, let bytes) in origin.takeEvents() {
                received += bytes.count
                delivered.append((stream, bytes.count))
            }
            if received >= Self.goAwayAfter { break }
            for (stream, count) in delivered { origin.session.consumed(stream: stream, bytes: count) }
        }
        XCTAssertGreaterThanOrEqual(received, Self.goAwayAfter, "the upload stalled", file: file, line: line)
        origin.sendRaw(PlaybookHTTP2.goAwayFrame(lastStreamID: 0))
        origin.consumesData = true
        playbook.run()
    }
}
