import Evidence
import Foundation
import IntactTestSupport
import XCTest
@testable import IntactCLI
@testable import Scenarios

/// The table of what each product changes and the directive that fixes it:
/// its rows name real examples, a report gets hints only for a known
/// product and only for rows that match, and `verify --intermediary` checks its value.
final class IntermediaryDirectiveTests: XCTestCase {
    func testEveryRowIsVerifiedByAnExampleOfItsProduct() throws {
        let examples = Set(try ScenarioCatalog.load([ScenarioFixtures.examples]).map(\.name))
        for row in IntermediaryDirective.table {
            XCTAssertTrue(examples.contains(row.verifiedBy), "\(row.product): \(row.verifiedBy) is not an example")
            XCTAssertTrue(row.verifiedBy.hasPrefix(row.product + "/"), "\(row.verifiedBy) is not a \(row.product) scenario")
            XCTAssertNotNil(IntermediaryKind.named(row.product), row.product)
        }
    }

    /// A report of one exchange over the four-tap path whose load balancer's hop shows these differences.
    private func report(_ response: [MessageDifference], request: [MessageDifference] = []) -> VerificationReport {
        let hops = ScenarioExpectationTests.hops.map { info -> HopResult in
            let changed = info.number == ScenarioExpectationTests.loadBalancerHop
            let verdict: HopVerdict = changed ? .modified : .identical
            return HopResult(hop: info.number, verdict: verdict, pairing: .trace,
                             request: MessageResult(outcome: changed && !request.isEmpty ? .modified : .identical, before: nil,
                                                    after: nil, differences: changed ? request : []),
                             response: MessageResult(outcome: changed && !response.isEmpty ? .modified : .identical, before: nil,
                                                     after: nil, differences: changed ? response : []),
                             injected: [], failures: [])
        }
        let exchange = VerifiedExchange(number: 1, traceID: nil, step: StepLabel(rawValue: "challenge-401"), method: "GET",
                                        target: "/suite", authority: nil, started: nil, records: [], hops: hops)
        return VerificationReport(policy: PolicySummary(.strict), recordings: [],
                                  path: VerifiedPath(source: .option, taps: [], hops: ScenarioExpectationTests.hops),
                                  exchanges: [exchange], problems: [], warnings: [])
    }

    func testAProductSeenInViaGetsItsRowsAndAnUnknownChangeNoGuess() throws {
        let via = MessageDifference(kind: .fieldAdded, field: "via", after: "1.1 varnish (Varnish/7.1)", text: "Via added (1.1 varnish (Varnish/7.1))")
        let odd = MessageDifference(kind: .fieldAdded, field: "x-odd", after: "1", text: "X-Odd added (1)")
        let seen = report([via, odd])
        XCTAssertEqual(IntermediaryDirective.productSeen(in: seen), "varnish")
        let section = try XCTUnwrap(IntermediaryDirective.section(for: seen, product: nil))
        XCTAssertTrue(section.contains("response Via added (1.1 varnish (Varnish/7.1)): Varnish's builtin VCL — fix: unset resp.http.Via in vcl_deliver"), section)
        XCTAssertFalse(section.contains("X-Odd"), "no guess for a change no row names")
        XCTAssertNil(IntermediaryDirective.section(for: report([odd]), product: nil), "no product seen, no guess")
        XCTAssertNil(IntermediaryDirective.section(for: report([odd]), product: "apache"), "no row matches, nothing")
    }

    func testAHostChangeIsNamedAsSuch() throws {
        let target = MessageDifference(kind: .targetChanged, before: "https://127.0.0.1:1/suite", after: "https://127.0.0.1:2/suite",
                                       text: "target changed (https://127.0.0.1:1/suite → https://127.0.0.1:2/suite)")
        let hints = IntermediaryDirective.hints(in: report([], request: [target]), product: "apache")
        XCTAssertEqual(hints.map(\.difference), ["request Host changed (127.0.0.1:1 → 127.0.0.1:2)"])
        XCTAssertEqual(hints.first?.directive.fix, "ProxyPreserveHost On")
        // A scheme change alone (a plain-HTTP leg) is not a Host change.
        let scheme = MessageDifference(kind: .targetChanged, before: "https://127.0.0.1:1/", after: "http://127.0.0.1:1/", text: "t")
        XCTAssertEqual(IntermediaryDirective.hints(in: report([], request: [scheme]), product: "apache"), [])
    }

    func testVerifyRefusesAnUnknownIntermediary() {
        let output = CapturedOutput(), error = CapturedOutput()
        let status = IntactCommandLine.run(["verify", "/nonexistent.jsonl", "--intermediary", "traefik"],
                                           context: CommandContext(standardOutput: output.writer, standardError: error.writer))
        XCTAssertEqual(status, 2)
        XCTAssertTrue(error.text.contains("--intermediary expects one of nginx, haproxy, apache, caddy, trafficserver, varnish, nghttpx, squid, tinyproxy, got 'traefik'"), error.text)
    }
}
