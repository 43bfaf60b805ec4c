import Foundation
import XCTest
import Evidence
import HTTP
import IntactTestSupport

/// An HTTP/2 hop whose only difference is the pseudo-fields' order (a proxy
/// re-emitting them in its own) is named so in every report, not "wire
/// formatting"; a record with a bad order is named with line and column and
/// skipped, the rest verified.
final class VerifierPseudoFieldOrderTests: XCTestCase {
    private typealias S = VerificationScenario

    /// Chromium's order on the client leg and into proxy-a; the standard one out of it.
    private func scenario() -> S {
        var exchange = S.exchange("/suite/rest/a", trace: "t1")
        exchange.request = HTTPRequestHead(method: "GET", scheme: "https", authority: "app.test", path: "/suite/rest/a",
                                           version: .http2, fields: ["user-agent": "intact-test"])
        exchange.response = HTTPResponseHead(status: 200, version: .http2, fields: ["content-type": "application/json"])
        var scenario = S([exchange])
        scenario.alter = { place, view in
            if place.tap == "client" || (place.tap == "proxy-a" && place.leg == .downstream) {
                view.request?.pseudoFieldOrder = HTTP2PseudoFieldOrder([.method, .authority, .scheme, .path])
            }
        }
        return scenario
    }

    func testAnotherPseudoFieldOrderIsNamedInTextJSONAndHTML() throws {
        let report = try Verifier().verify(scenario().recordings())
        let hops = report.exchanges[0].hops
        XCTAssertEqual(hops[0].verdict, .identical, "client → proxy-a carried the same order")
        XCTAssertEqual(hops[1].request.outcome, .equivalent)
        let text = ":method :authority :scheme :path → :method :scheme :authority :path"
        XCTAssertEqual(hops[1].request.reasons, [Equivalence(kind: .pseudoHeaderOrder, text: "pseudo-header order (\(text))")])
        XCTAssertEqual(hops[2].verdict, .identical)

        XCTAssertTrue(TextReport.render(report).contains("pseudo-header order (\(text))"), TextReport.render(report))
        XCTAssertFalse(TextReport.render(report).contains("wire formatting"))
        let html = HTMLReport.render(report)
        XCTAssertTrue(html.contains("pseudo-header order (:method :authority :scheme :path → "), html)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(report.jsonBytes())) as? [String: Any])
        let exchange = try XCTUnwrap((json["exchanges"] as? [[String: Any]])?.first)
        let inside = try XCTUnwrap((exchange["hops"] as? [[String: Any]])?[1]["request"] as? [String: Any])
        let reasons = try XCTUnwrap(inside["reasons"] as? [[String: Any]])
        XCTAssertEqual(reasons.map { $0["kind"] as? String }, ["pseudo-header-order"])
    }

    func testRecordsWithoutAnOrderStillReadWireFormatting() throws {
        // Records of a build before the order was recorded.
        var recordings = scenario().recordings()
        for r in recordings.indices {
            for e in recordings[r].records.indices {
                for l in recordings[r].records[e].legs.indices {
                    recordings[r].records[e].legs[l].request?.digest.head.pseudoFieldOrder = nil
                }
            }
        }
        let report = try Verifier().verify(recordings)
        XCTAssertEqual(report.exchanges[0].hops[1].request.reasons, [.wireFormatting])
    }

    func testTheOrderIsWrittenAndReadBackFromTheRecordingLine() throws {
        let directory = makeTemporaryDirectory()
        let recording = scenario().recordings()[1]
        let path = directory + "/proxy-a.jsonl"
        try S.write(recording, to: path)
        let lines = try String(contentsOfFile: path, encoding: .utf8)
        XCTAssertTrue(lines.contains(#""pseudoFieldOrder":[":method",":authority",":scheme",":path"]"#), lines)
        XCTAssertTrue(lines.contains(#""pseudoFieldOrder":[":method",":scheme",":authority",":path"]"#), lines)
        XCTAssertEqual(try RecordingReader.read(path: path).records, recording.records)
    }

    /// A bad order (an unknown name, a repeated one, not an array) is named
    /// with its line and the column where the order starts; the line is
    /// skipped, the other records are verified.
    func testABadOrderIsNamedWithLineAndColumnAndTheRestIsVerified() throws {
        var exchanges = (0..<4).map { S.exchange("/suite/rest/\($0)", trace: "t\($0)") }
        for index in exchanges.indices {
            exchanges[index].request = HTTPRequestHead(method: "GET", scheme: "https", authority: "app.test",
                                                       path: "/suite/rest/\(index)", version: .http2,
                                                       fields: ["user-agent": "intact-test"])
        }
        let directory = makeTemporaryDirectory()
        var paths: [String] = []
        for recording in S(exchanges).recordings() {
            let path = directory + "/\(recording.header.tap).jsonl"
            try S.write(recording, to: path)
            paths.append(path)
        }
        let good = #""pseudoFieldOrder":[":method",":scheme",":authority",":path"]"#
        let bad = [#""pseudoFieldOrder":[":method",":scheme",":authority",":pth"]"#,
                   #""pseudoFieldOrder":[":method",":method"]"#,
                   #""pseudoFieldOrder":":method""#]
        var lines = try String(contentsOfFile: paths[1], encoding: .utf8).components(separatedBy: "\n")
        for (offset, replacement) in bad.enumerated() {
            let range = try XCTUnwrap(lines[1 + offset].range(of: good))
            lines[1 + offset].replaceSubrange(range, with: replacement)
        }
        try lines.joined(separator: "\n").write(toFile: paths[1], atomically: true, encoding: .utf8)
        // Where each error's value starts: the unknown name, the repeated one, the string that is no array.
        let columns = try zip([#"":pth""#, #"":method"]"#, #"":method""#], bad.indices).map { value, offset -> Int in
            let line = lines[1 + offset]
            let at = try XCTUnwrap(line.range(of: #""pseudoFieldOrder":"#))
            let start = try XCTUnwrap(line.range(of: value, range: at.upperBound..<line.endIndex))
            return line.distance(from: line.startIndex, to: start.lowerBound) + 1
        }
        let report = try StreamingVerifier().verify(paths: paths)
        let warnings = report.warnings.filter { $0.hasPrefix(paths[1]) }
        XCTAssertEqual(warnings.count, 3, report.warnings.joined(separator: "\n"))
        XCTAssertTrue(warnings[0].hasPrefix("\(paths[1]):2:\(columns[0]): skipped a malformed record: unknown pseudo-header \":pth\""),
                      warnings[0])
        XCTAssertTrue(warnings[0].contains("at legs.[0].request.digest.head.pseudoFieldOrder.[3]"), warnings[0])
        XCTAssertTrue(warnings[1].hasPrefix("\(paths[1]):3:\(columns[1]): skipped a malformed record: pseudo-header :method given twice"),
                      warnings[1])
        XCTAssertTrue(warnings[2].hasPrefix("\(paths[1]):4:\(columns[2]): skipped a malformed record: expected "), warnings[2])
        XCTAssertEqual(report.problems.map(\.kind), [.unreadableLines])
        XCTAssertFalse(report.policyHolds)
        XCTAssertEqual(report.exchanges.last?.hops.map(\.verdict), [.identical, .identical, .identical],
                       "the exchange after them is verified through proxy-a")
    }
}
