import Foundation
import XCTest
@testable import Evidence
import HTTP

/// The streamed verification (`StreamingVerifier`) against the whole one
/// (`Verifier`): the same verdicts from the same recordings, whether the
/// run is small (verified whole, the same report) or streamed (paired in a
/// window, judged in batches); and every bad input the issue names.
final class StreamingVerifierTests: XCTestCase {
    /// Collects what a streamed run hands its sink.
    final class Collect: VerificationSink {
        var began = 0
        var exchanges: [VerifiedExchange] = []
        func begin(policy: PolicySummary, recordings: Int, path: VerifiedPath) { began += 1 }
        func judged(_ exchanges: [VerifiedExchange], path: VerifiedPath) { self.exchanges += exchanges }
    }

    private func files(_ recordings: [Recording], in directory: String) throws -> [String] {
        try recordings.map { recording in
            let path = "\(directory)/\(recording.header.tap).jsonl"
            try VerificationScenario.write(recording, to: path)
            return path
        }
    }

    /// `count` exchanges through client → proxy-a → server; the proxy changes
    /// every fifth request (adds a field) and drops every seventh on its way up.
    private func scenario(_ count: Int, traced: Bool = true) -> VerificationScenario {
        var scenario = VerificationScenario((0..<count).map { index in
            VerificationScenario.exchange("/suite/rest/item/\(index % 13)", trace: traced ? "t-\(index)" : nil)
        })
        scenario.alter = { place, view in
            if place.tap == "proxy-a" && place.leg == .upstream && place.exchange % 5 == 0 {
                view.request?.fields.append("X-Added", "yes")
            }
            if place.exchange % 7 == 3 && (place.tap == "server" || place.tap == "proxy-a" && place.leg == .upstream) {
                view.request = nil
                view.response = nil
            }
            if place.exchange % 7 == 3 && place.tap != "server" && !(place.tap == "proxy-a" && place.leg == .upstream) {
                view.response = VerificationScenario.ok(status: 502)
            }
        }
        return scenario
    }

    private func streamed(_ options: (inout StreamingVerifier.Options) -> Void = { _ in }) -> StreamingVerifier {
        var settings = StreamingVerifier.Options()
        settings.wholeRunLimit = 0
        settings.batchSize = 7
        options(&settings)
        return StreamingVerifier(options: settings)
    }

    /// The verdicts of each exchange, keyed by its first record.
    private func verdicts(_ exchanges: [VerifiedExchange]) -> [String: [HopVerdict]] {
        Dictionary(exchanges.map { ($0.records.map { "\($0.tap)/\($0.exchangeID)" }.joined(separator: ","), $0.hops.map(\.verdict)) },
                   uniquingKeysWith: { a, _ in a })
    }

    func testASmallRunIsVerifiedWholeAsBefore() throws {
        let recordings = scenario(30).recordings()
        let paths = try files(recordings, in: makeTemporaryDirectory())
        let sink = Collect()
        let report = try StreamingVerifier().verify(paths: paths, sink: sink)
        let whole = try Verifier().verify(paths.map(RecordingReader.read(path:)))
        XCTAssertEqual(report, whole)
        XCTAssertEqual(TextReport.render(report), TextReport.render(whole))
        XCTAssertNil(report.listing)
        XCTAssertEqual(sink.began, 0, "a whole run is not streamed")
    }

    func testAStreamedRunJudgesEveryExchangeAsTheWholeRunDoes() throws {
        for traced in [true, false] {
            let recordings = scenario(60, traced: traced).recordings()
            let paths = try files(recordings, in: makeTemporaryDirectory())
            let whole = try Verifier().verify(recordings)
            let sink = Collect()
            let report = try streamed().verify(paths: paths, sink: sink)
            XCTAssertEqual(sink.began, 1)
            XCTAssertEqual(sink.exchanges.map(\.number), Array(1...sink.exchanges.count), "numbered in the order judged")
            XCTAssertEqual(verdicts(sink.exchanges), verdicts(whole.exchanges), "traced: \(traced)")
            XCTAssertEqual(report.summary, whole.summary, "traced: \(traced)")
            XCTAssertEqual(report.policyHolds, whole.policyHolds)
            XCTAssertEqual(report.problems, whole.problems)
            XCTAssertEqual(report.recordings.map(\.exchanges), whole.recordings.map(\.exchanges))
            let listing = try XCTUnwrap(report.listing)
            XCTAssertEqual(listing.exchanges, 60)
            XCTAssertEqual(listing.failingExchanges, whole.summary.failingExchanges)
            XCTAssertEqual(TextReport.policyLine(report), TextReport.policyLine(whole))
        }
    }

    func testTheReportKeepsOnlyTheFailingUpToItsCapAndASample() throws {
        let recordings = scenario(60).recordings()
        let paths = try files(recordings, in: makeTemporaryDirectory())
        let report = try streamed { $0.failingCap = 4; $0.sampleCount = 3 }.verify(paths: paths)
        let listing = try XCTUnwrap(report.listing)
        XCTAssertGreaterThan(listing.failingExchanges, 4)
        XCTAssertEqual(listing.failingListed, 4)
        // The sample's failing exchanges are among the first four failing.
        XCTAssertEqual(report.exchanges.filter { !$0.passes }.count, 4)
        XCTAssertLessThanOrEqual(report.exchanges.count, 7)
        XCTAssertTrue(listing.text.contains("and \(listing.failingExchanges - 4) more"), listing.text)

        var text = ""
        let stream = TextReportStream { text += $0 }
        let again = try streamed { $0.failingCap = 4; $0.sampleCount = 3 }.verify(paths: paths, sink: stream)
        stream.end(again)
        let rows = text.components(separatedBy: "\n").filter { line in
            let words = line.split(separator: " ")
            return line.hasPrefix("  ") && words.count > 2 && Int(words[0]) != nil && words[1] == "GET"
        }
        XCTAssertEqual(rows.count, 60 + 4, "every exchange once as judged, the failing ones up to the cap again")
        XCTAssertTrue(text.contains("… and \(listing.failingExchanges - 4) more failing exchanges"), text)
        XCTAssertTrue(text.hasSuffix(TextReport.policyLine(again) + "\n"), text)

        let html = HTMLReport.render(again)
        XCTAssertTrue(html.contains("<p id=\"listing\">60 exchanges judged, too many to list each"), html)
    }

    func testTheStreamedJSONDocumentReadsBackWithEveryExchange() throws {
        let recordings = scenario(40).recordings()
        let paths = try files(recordings, in: makeTemporaryDirectory())
        var bytes: [UInt8] = []
        let stream = JSONReportStream { bytes += $0 }
        let report = try streamed().verify(paths: paths, sink: stream)
        try stream.end(report)
        let decoded = try VerificationReport.decode(json: bytes)
        XCTAssertEqual(decoded.exchanges.count, 40)
        XCTAssertEqual(decoded.summary, report.summary)
        XCTAssertEqual(decoded.listing, report.listing)
        XCTAssertEqual(verdicts(decoded.exchanges), verdicts(try Verifier().verify(recordings).exchanges))
    }

    // MARK: Bad input

    func testATornLastLineIsSkippedWithAWarning() throws {
        let paths = try files(scenario(20).recordings(), in: makeTemporaryDirectory())
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: paths[2]))
        handle.seekToEndOfFile()
        handle.write(Data(#"{"type":"exchange","exchangeID":"server-"#.utf8))
        handle.closeFile()
        for verifier in [StreamingVerifier(), streamed()] {
            let report = try verifier.verify(paths: paths)
            XCTAssertEqual(report.warnings.filter { $0.contains("skipped a torn last line") }.count, 1)
            XCTAssertTrue(report.warnings.contains { $0.hasPrefix("\(paths[2]):19: skipped a torn last line (40 bytes") },
                          report.warnings.joined(separator: "\n"))
            XCTAssertFalse(report.problems.contains { $0.kind == .unreadableLines })
        }
    }

    func testACorruptLineInTheMiddleIsNamedSkippedAndFailsThePolicy() throws {
        let recordings = VerificationScenario((0..<20).map { VerificationScenario.exchange("/a/\($0)", trace: "c-\($0)") })
            .recordings()
        let paths = try files(recordings, in: makeTemporaryDirectory())
        var lines = try String(contentsOfFile: paths[1], encoding: .utf8).components(separatedBy: "\n")
        lines[5] = String(lines[5].dropLast(9))
        try lines.joined(separator: "\n").write(toFile: paths[1], atomically: true, encoding: .utf8)
        for verifier in [StreamingVerifier(), streamed()] {
            let report = try verifier.verify(paths: paths)
            XCTAssertEqual(report.warnings.filter { $0.hasPrefix(paths[1]) }.count, 1, report.warnings.joined(separator: "\n"))
            XCTAssertTrue(report.warnings.contains { $0.hasPrefix("\(paths[1]):6: skipped a malformed record: ") },
                          report.warnings.joined(separator: "\n"))
            XCTAssertEqual(report.problems.map(\.kind), [.unreadableLines])
            XCTAssertFalse(report.policyHolds)
            XCTAssertGreaterThanOrEqual(report.summary.exchanges, 20, "the run goes on past it")
            XCTAssertGreaterThanOrEqual(report.summary.count(.identical) + report.summary.count(.equivalent), 19 * 3)
        }
    }

    /// Records out of time order (a file merged from two, a clock step)
    /// still pair within the window; one beyond it is said, not silently unpaired.
    func testOutOfOrderRecordsPairWithinTheWindowAndBeyondItAreSaid() throws {
        var recordings = VerificationScenario((0..<30).map { VerificationScenario.exchange("/o/\($0)", trace: "o-\($0)") })
            .recordings()
        // The proxy's file: its records in two halves, swapped (the records of one exchange
        // then lie up to 30 s apart in the stream: within a window of 40 s).
        let proxy = recordings[1].records
        recordings[1].records = Array(proxy[15...] + proxy[..<15])
        let paths = try files(recordings, in: makeTemporaryDirectory())
        let within = try streamed { $0.windowSeconds = 40 }.verify(paths: paths)
        XCTAssertEqual(within.summary.failingExchanges, 0, within.warnings.joined(separator: "\n"))
        XCTAssertEqual(within.listing?.lateRecords, 0)

        // Beyond a 5 s window the early half of the proxy's file comes too late for the client's and server's records.
        let beyond = try streamed { $0.windowSeconds = 5 }.verify(paths: paths)
        let late = try XCTUnwrap(beyond.listing?.lateRecords)
        XCTAssertGreaterThan(late, 0)
        XCTAssertTrue(beyond.warnings.contains { $0.contains("beyond the pairing window of 5 s") && $0.hasPrefix(paths[1] + ":") },
                      beyond.warnings.joined(separator: "\n"))
        XCTAssertGreaterThan(beyond.summary.failingExchanges, 0)
    }

    /// A tap whose clock stepped back mid-run: its later records still pair within the window.
    func testAClockStepWithinTheWindowStillPairs() throws {
        var recordings = VerificationScenario((0..<30).map { VerificationScenario.exchange("/c/\($0)", trace: "s-\($0)") })
            .recordings()
        for index in 10..<30 {
            for leg in recordings[1].records[index].legs.indices {
                for keyPath in [\ExchangeRecord.Leg.request, \.response] {
                    guard var message = recordings[1].records[index].legs[leg][keyPath: keyPath] else { continue }
                    message.timings.start = message.timings.start.map { Timestamp(millisecondsSince1970: $0.millisecondsSince1970 - 3000) }
                    message.timings.headersDone = message.timings.headersDone.map {
                        Timestamp(millisecondsSince1970: $0.millisecondsSince1970 - 3000)
                    }
                    message.timings.end = message.timings.end.map { Timestamp(millisecondsSince1970: $0.millisecondsSince1970 - 3000) }
                    recordings[1].records[index].legs[leg][keyPath: keyPath] = message
                }
            }
        }
        let paths = try files(recordings, in: makeTemporaryDirectory())
        let report = try streamed().verify(paths: paths)
        XCTAssertEqual(report.summary.exchanges, 30)
        XCTAssertEqual(report.summary.failingExchanges, 0)
        XCTAssertEqual(report.listing?.lateRecords, 0)
    }

    func testRecordsWithoutATracePairByMethodAndPathWithinTheWindow() throws {
        // The same path every time: the window pairs them in order.
        let recordings = VerificationScenario((0..<25).map { _ in VerificationScenario.exchange("/same") }).recordings()
        let paths = try files(recordings, in: makeTemporaryDirectory())
        let report = try streamed().verify(paths: paths)
        XCTAssertEqual(report.summary.exchanges, 25)
        XCTAssertEqual(report.summary.failingExchanges, 0)
        XCTAssertEqual(report.summary.inferredPairings, 50)
        XCTAssertTrue(report.problems.isEmpty, "\(report.problems)")
    }

    func testRecordingsOfDifferentRunsPairNothingWhenStreamed() throws {
        let a = VerificationScenario((0..<5).map { VerificationScenario.exchange("/a/\($0)", trace: "a-\($0)") }).recordings()
        let b = VerificationScenario((0..<5).map { VerificationScenario.exchange("/b/\($0)", trace: "b-\($0)") }).recordings()
        let paths = try files([a[0], b[2]], in: makeTemporaryDirectory())
        let report = try streamed().verify(paths: paths)
        let whole = try Verifier().verify([a[0], b[2]])
        XCTAssertEqual(report.problems, whole.problems)
        XCTAssertEqual(report.problems.map(\.kind), [.nothingPairs])
    }
}
