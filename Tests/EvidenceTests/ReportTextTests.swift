import XCTest
import Evidence

final class ReportTextTests: XCTestCase {
    func testTableGroupsByStepWithVerdictsPerHopAndWhatChanged() throws {
        let text = TextReport.render(try ReportSamples.report())
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        XCTAssertEqual(lines.first, "Verified 3 recordings with policy lb: the load balancer may announce itself")
        XCTAssertTrue(lines.contains("Path (ordered from the recordings): client → proxy-a → server"), text)
        XCTAssertTrue(lines.contains("  hop 2  inside proxy-a  (what proxy-a itself changed)"), text)
        for step in ["challenge-401", "login-page", "credentials-post", "token-post", "authenticated-request"] {
            XCTAssertEqual(lines.filter { $0 == "Step \(step)" }.count, 1, "one group for \(step)")
        }
        func row(_ number: Int) -> [String] {
            (lines.first { $0.hasPrefix("  \(number)  ") } ?? "").split(separator: " ").map(String.init)
        }
        XCTAssertEqual(row(1), ["1", "GET", "/suite/rest/a", "identical", "equivalent", "identical"])
        XCTAssertEqual(row(2), ["2", "GET", "/suite?x=<b>", "identical~", "tolerated", "identical~"])
        XCTAssertEqual(row(3), ["3", "POST", "/suite/auth", "identical", "modified*", "identical"])
        XCTAssertEqual(row(4), ["4", "POST", "/suite/mobileAuthTokenConsumer", "broken", "broken", "broken"])
        XCTAssertEqual(row(5), ["5", "GET", "/suite/rest/b", "identical", "foreign", "-"])
        XCTAssertEqual(row(6), ["6", "GET", "/suite/rest/c", "missing", "-", "-"])
        for note in [
            "       hop 2 request equivalent: version HTTP/1.1 → HTTP/2; field-name case (cookie, intact-trace, user-agent); "
                + "Host field (authority unchanged); cookie crumbs (1 → 2 fields)",
            "       hop 2 request tolerated: Via added (1.1 lb) [tolerated: field via added in requests (LB)]",
            "       hop 2 response modified: JSESSIONID removed",
            "       hop 2 injected on purpose: strip-set-cookie (removed 1 Set-Cookie)",
            "       hop 3 broken: proxy-a, upstream response head: reset: connection reset by peer",
            "       hop 1 request missing: GET /suite/rest/c left client, never reached proxy-a",
        ] {
            XCTAssertTrue(lines.contains(note), "missing line \(note)\n\(text)")
        }
        XCTAssertTrue(text.contains("~ paired by sequence alignment"))
        XCTAssertTrue(lines.contains("Summary: 6 exchanges over 3 hops: 7 identical, 1 equivalent, 1 tolerated, 1 modified, "
                                     + "1 missing, 1 foreign, 3 broken; 2 pairings inferred"), text)
        XCTAssertEqual(lines.dropLast().last, "Policy lb FAILS: 4 of 6 exchanges fail (1 on hops with injected faults).")
    }

    /// The legend names only the marks the tables use: faults injected on a
    /// run paired by trace ids get no "~ paired by sequence alignment".
    func testTheLegendNamesOnlyTheMarksUsed() throws {
        var scenario = VerificationScenario([VerificationScenario.exchange("/suite/rest/a", trace: "t1")])
        scenario.decorate = { tap, _, record in
            if tap == "proxy-a" { record.faults = [ExchangeRecord.RecordedFault(name: "delay", detail: "delayed 1 ms")] }
        }
        let text = TextReport.render(try Verifier().verify(scenario.recordings()))
        XCTAssertTrue(text.contains("* a fault was injected on this hop on purpose"), text)
        XCTAssertFalse(text.contains("paired by sequence alignment"), text)
    }

    func testAPassingRunWithoutStepsHasNoGroupHeadingAndHolds() throws {
        let report = try Verifier().verify(VerificationScenario([VerificationScenario.exchange("/a", trace: "t")]).recordings())
        let text = TextReport.render(report)
        XCTAssertFalse(text.contains("Step "), text)
        XCTAssertFalse(text.contains("~ paired"), "no legend without markers")
        XCTAssertTrue(text.hasSuffix("Policy strict holds.\n"), text)
    }

    func testProblemsAndWarningsAreListed() throws {
        let runA = VerificationScenario([VerificationScenario.exchange("/a", trace: "a")]).recordings()
        let path = temporaryPath("server.jsonl")
        try VerificationScenario.write(VerificationScenario([VerificationScenario.exchange("/b", trace: "b")]).recordings()[2], to: path)
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data("{\"type\":\"exch".utf8))
        handle.closeFile()
        let server = try RecordingReader.read(path: path)
        let text = TextReport.render(try Verifier().verify([runA[0], server]))
        XCTAssertTrue(text.contains("\nProblem: nothing pairs across the taps client, server"), text)
        XCTAssertTrue(text.contains("\nWarning: \(path):3: skipped a torn last line"), text)
        XCTAssertTrue(text.hasSuffix("Policy strict FAILS: 2 of 2 exchanges fail; nothing-pairs.\n"), text)
    }
}
