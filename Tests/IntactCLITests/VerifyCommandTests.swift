import Foundation
import XCTest
import Evidence
import HTTP

/// `intact verify` end to end through the library entry point: recordings
/// written by `RecordingWriter` into a temporary directory, every bad input
/// the issue names, and the exit statuses.
final class VerifyCommandTests: XCTestCase {
    /// Writes client.jsonl, proxy.jsonl and server.jsonl for one run of GETs
    /// through client → proxy-a → server; `upstream` changes the request the
    /// proxy sends (and so what the server receives). Returns the paths.
    private func writeRun(_ directory: String, paths: [String] = ["/suite/rest/a", "/suite/rest/b"], run: String = "r",
                          upstream: (inout HTTPRequestHead) -> Void = { _ in }) throws -> [String] {
        let taps: [(name: String, mode: String, roles: [ExchangeRecord.Leg.Role])] = [
            ("client", "client", [.client]), ("proxy-a", "reverse", [.downstream, .upstream]), ("server", "server", [.server]),
        ]
        return try taps.enumerated().map { tapIndex, tap in
            let file = "\(directory)/\(tap.name == "proxy-a" ? "proxy" : tap.name).jsonl"
            let writer = try RecordingWriter(path: file, header: RecordingHeader(toolVersion: "test", tap: tap.name, mode: tap.mode))
            for (index, path) in paths.enumerated() {
                let legs = tap.roles.map { role in
                    var head = HTTPRequestHead(method: "GET", authority: "app.test", path: path,
                                               fields: ["Host": "app.test", "Intact-Trace": "\(run)-\(index)"])
                    if role == .upstream || role == .server { upstream(&head) }
                    let time = 1_700_000_000_000 + Double(index * 1000 + tapIndex * 10)
                    return ExchangeRecord.Leg(role: role, connectionID: "c\(index)",
                                              request: Self.request(head, time: time), response: Self.response(time: time + 5))
                }
                writer.append(ExchangeRecord(exchangeID: "\(tap.name)-\(index)", traceID: "\(run)-\(index)", tap: tap.name, legs: legs))
            }
            if let error = writer.closeAndWait() { throw error }
            return file
        }
    }

    private static func request(_ head: HTTPRequestHead, time: Double) -> RecordedMessage {
        let raw = Array((["GET \(head.path) HTTP/1.1"] + head.fields.map(\.description)).map { $0 + "\r\n" }.joined().utf8)
        let digest = MessageDigest(head: HeadDigest(request: head, wire: .http1(head: raw), connectionScheme: "https", using: .sha256))
        return RecordedMessage(request: head, connectionScheme: "https", digest: digest,
                               timings: MessageTimings(start: Timestamp(millisecondsSince1970: time)), redaction: RedactionPolicy())
    }

    private static func response(time: Double) -> RecordedMessage {
        let head = HTTPResponseHead(status: 200, fields: ["Content-Length": "0"])
        let raw = Array("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n".utf8)
        return RecordedMessage(response: head, digest: MessageDigest(head: HeadDigest(response: head, wire: .http1(head: raw),
                                                                                      using: .sha256)),
                               timings: MessageTimings(start: Timestamp(millisecondsSince1970: time)), redaction: RedactionPolicy())
    }

    private func append(_ text: String, to file: String) throws {
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: file))
        handle.seekToEndOfFile()
        handle.write(Data(text.utf8))
        handle.closeFile()
    }

    // MARK: Verdicts and exit statuses

    func testUnmodifiedRunHoldsWithStatusZero() throws {
        let files = try writeRun(makeTemporaryDirectory())
        let run = intact(["verify"] + files.reversed())
        XCTAssertEqual(run.status, 0, run.error)
        XCTAssertEqual(run.error, "")
        XCTAssertTrue(run.output.contains("Path (ordered from the recordings): client → proxy-a → server"), run.output)
        XCTAssertTrue(run.output.contains("  1  GET     /suite/rest/a  identical  identical  identical"), run.output)
        XCTAssertTrue(run.output.hasSuffix("Policy strict holds.\n"), run.output)
    }

    func testModifiedRunFailsWithStatusOneAndNamesTheField() throws {
        let files = try writeRun(makeTemporaryDirectory()) { $0.fields.append("Via", "1.1 lb") }
        let run = intact(["verify"] + files)
        XCTAssertEqual(run.status, 1, run.error)
        XCTAssertTrue(run.output.contains("hop 2 request modified: Via added (1.1 lb)"), run.output)
        XCTAssertTrue(run.output.contains("Policy strict FAILS: 2 of 2 exchanges fail."), run.output)
    }

    func testPolicyFileToleratesAndStillShows() throws {
        let directory = makeTemporaryDirectory()
        let files = try writeRun(directory) { $0.fields.append("Via", "1.1 lb") }
        let policy = directory + "/lb.json"
        try #"{"name":"lb","tolerate":[{"field":"Via","message":"request"}]}"#.write(toFile: policy, atomically: true, encoding: .utf8)
        let run = intact(["verify", "--policy", policy] + files)
        XCTAssertEqual(run.status, 0, run.error + run.output)
        XCTAssertTrue(run.output.contains("Via added (1.1 lb) [tolerated: field via added in requests]"), run.output)
        XCTAssertTrue(run.output.hasSuffix("Policy lb holds.\n"), run.output)
    }

    func testJSONOutputFollowsTheSchema() throws {
        let files = try writeRun(makeTemporaryDirectory()) { $0.path = "/elsewhere" }
        let run = intact(["verify", "--json"] + files)
        XCTAssertEqual(run.status, 1, run.error)
        let report = try VerificationReport.decode(json: Array(run.output.utf8))
        XCTAssertEqual(report.schema, "intact-verify/2")
        XCTAssertFalse(report.policyHolds)
        XCTAssertEqual(report.exchanges.first?.hops[1].request.differences.first?.kind, .targetChanged)
    }

    func testHTMLReportIsWrittenBesideTheText() throws {
        let directory = makeTemporaryDirectory()
        let files = try writeRun(directory)
        let page = directory + "/report.html"
        let run = intact(["verify", "--html", page] + files)
        XCTAssertEqual(run.status, 0, run.error)
        XCTAssertEqual(run.error, "intact: wrote the HTML report to \(page)\n")
        let html = try String(contentsOfFile: page, encoding: .utf8)
        XCTAssertTrue(html.hasPrefix("<!DOCTYPE html>"))
        XCTAssertTrue(html.contains("data-verdict=\"identical\""))

        let unwritable = intact(["verify", "--html", directory + "/no/such/dir/report.html"] + files)
        XCTAssertEqual(unwritable.status, 2)
        XCTAssertTrue(unwritable.error.contains("cannot write the HTML report"), unwritable.error)
    }

    func testPathOption() throws {
        let files = try writeRun(makeTemporaryDirectory())
        let given = intact(["verify", "--path", "client, proxy-a,server"] + files)
        XCTAssertEqual(given.status, 0, given.error)
        XCTAssertTrue(given.output.contains("Path (as given): client → proxy-a → server"), given.output)

        let unknown = intact(["verify", "--path", "client,lb,server"] + files)
        XCTAssertEqual(unknown.status, 2)
        XCTAssertEqual(unknown.error, "intact: --path names tap \"lb\", which no recording has (taps: client, proxy-a, server)\n")

        let empty = intact(["verify", "--path", "client,,server"] + files)
        XCTAssertEqual(empty.status, 2)
        XCTAssertTrue(empty.error.hasPrefix("intact: option --path expects tap names separated by commas"), empty.error)
        XCTAssertTrue(empty.error.contains("Usage: intact verify"), empty.error)
    }

    // MARK: Bad input

    /// A corrupt line in the middle is named (file and line), skipped, and
    /// fails the policy; the rest of the run is verified.
    func testFileThatIsNotJSONLinesNamesFileAndLine() throws {
        let directory = makeTemporaryDirectory()
        let files = try writeRun(directory)
        try append("this is not json\n{}\n", to: files[1])
        let run = intact(["verify"] + files)
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(run.error, "")
        XCTAssertTrue(run.output.contains("Warning: \(files[1]):4: skipped a malformed record: not JSON\n"), run.output)
        XCTAssertTrue(run.output.contains("Warning: \(files[1]):5: skipped a malformed record: missing \"type\""), run.output)
        XCTAssertTrue(run.output.contains("Problem: 2 lines of the recordings could not be read and were skipped "
                                          + "(\(files[1]): 2; each is named in the warnings)"), run.output)
        XCTAssertTrue(run.output.contains("Summary: 2 exchanges over 3 hops: 6 identical"), run.output)
        XCTAssertTrue(run.output.hasSuffix("Policy strict FAILS: unreadable-lines.\n"), run.output)

        let text = directory + "/notes.txt"
        try "hello\nworld\n".write(toFile: text, atomically: true, encoding: .utf8)
        let notRecording = intact(["verify", text])
        XCTAssertEqual(notRecording.status, 2)
        XCTAssertEqual(notRecording.error, "intact: \(text):1: not an Intact recording: not JSON\n")
    }

    func testTornLastLineIsSkippedWithAWarning() throws {
        let files = try writeRun(makeTemporaryDirectory())
        try append(#"{"type":"exchange","exchangeID":"server-"#, to: files[2])
        let run = intact(["verify"] + files)
        XCTAssertEqual(run.status, 0, run.error)
        XCTAssertTrue(run.output.contains("Warning: \(files[2]):4: skipped a torn last line"), run.output)

        let json = intact(["verify", "--json"] + files)
        XCTAssertEqual(json.status, 0)
        XCTAssertTrue(json.error.hasPrefix("intact: warning: \(files[2]):4: skipped a torn last line"), json.error)
        XCTAssertEqual(try VerificationReport.decode(json: Array(json.output.utf8)).warnings.count, 1)
    }

    func testRecordingsOfUnrelatedRunsPairNothing() throws {
        let first = try writeRun(makeTemporaryDirectory(), paths: ["/a", "/b"], run: "first")
        let second = try writeRun(makeTemporaryDirectory(), paths: ["/c"], run: "second")
        let run = intact(["verify", first[0], second[2]])
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.output.contains("Problem: nothing pairs across the taps client, server"), run.output)
        XCTAssertTrue(run.output.hasSuffix("nothing-pairs.\n"), run.output)
    }

    func testASingleRecordingVerifiesItsOwnLegs() throws {
        let files = try writeRun(makeTemporaryDirectory()) { head in
            head.authority = "internal.test"
            head.fields.set("Host", "internal.test")
        }
        let run = intact(["verify", files[1]])
        XCTAssertEqual(run.status, 1, run.error)
        XCTAssertTrue(run.output.contains("hop 1  inside proxy-a"), run.output)
        XCTAssertTrue(run.output.contains("hop 1 request modified: Host changed (app.test → internal.test)"),
                      run.output)
    }

    func testUnsupportedFormatVersionIsAClearError() throws {
        let files = try writeRun(makeTemporaryDirectory())
        let text = try String(contentsOfFile: files[0], encoding: .utf8)
        XCTAssertTrue(text.contains("\"format\":\(RecordingFormat.version)"))
        try text.replacingOccurrences(of: "\"format\":\(RecordingFormat.version)", with: "\"format\":7")
            .write(toFile: files[0], atomically: true, encoding: .utf8)
        let run = intact(["verify"] + files)
        XCTAssertEqual(run.status, 2)
        XCTAssertEqual(run.error, "intact: \(files[0]):1: recording format version 7 is not supported by this build (it reads versions 1 to \(RecordingFormat.version))\n")
    }

    func testMissingFilesPoliciesAndArguments() throws {
        let directory = makeTemporaryDirectory()
        let none = intact(["verify"])
        XCTAssertEqual(none.status, 2)
        XCTAssertTrue(none.error.hasPrefix("intact: give at least one recording\n"), none.error)

        let missing = intact(["verify", directory + "/absent.jsonl"])
        XCTAssertEqual(missing.status, 2)
        XCTAssertTrue(missing.error.hasPrefix("intact: \(directory)/absent.jsonl: cannot read recording"), missing.error)

        let files = try writeRun(directory)
        let policy = directory + "/bad.json"
        try #"{"tolerate":[{"feild":"Via"}]}"#.write(toFile: policy, atomically: true, encoding: .utf8)
        let badPolicy = intact(["verify", "--policy", policy] + files)
        XCTAssertEqual(badPolicy.status, 2)
        XCTAssertTrue(badPolicy.error.hasPrefix("intact: \(policy):1:15: at tolerate[0]: unknown field \"feild\" (allowed: field, "),
                      badPolicy.error)

        let twice = intact(["verify", files[1], files[1]])
        XCTAssertEqual(twice.status, 2)
        XCTAssertTrue(twice.error.contains("tap \"proxy-a\" is recorded in more than one file"), twice.error)
    }

    func testHelpListsVerify() {
        let root = intact(["--help"])
        XCTAssertTrue(root.output.contains("verify"), root.output)
        let help = intact(["verify", "--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.output.hasPrefix("Usage: intact verify"), help.output)
        XCTAssertTrue(help.output.contains("--html FILE"), help.output)
        XCTAssertTrue(help.output.contains("(schema \(VerificationReport.schemaName), see"), "the schema --json prints: \(help.output)")
    }
}
