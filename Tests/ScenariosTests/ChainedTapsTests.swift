import AuthFlow
import Evidence
import Foundation
import IntactTestSupport
import XCTest
@testable import Scenarios

/// The sign-in flow through two chained Intact taps — client → tap A
/// (reverse) → tap B (reverse) → mock server — verified over the client's,
/// A's, B's and the server's recordings: with nothing between the taps the
/// strict policy holds; with a relay between them that drops one
/// `Set-Cookie`, the verification fails and names the hop (tap A → tap B),
/// the exchange and the field, and only that. (A real load balancer between
/// the taps is `LoadBalancerScenarioTests`.)
final class ChainedTapsTests: XCTestCase {
    /// The path's hops, as the verifier labels them.
    static let hopLabels = ["client → tap-a", "inside tap-a", "tap-a → tap-b", "inside tap-b", "tap-b → server"]
    /// The exchanges of a complete sign-in, by the taps' labels.
    static let signInLabels: Set<String> = ["challenge-401", "login-page", "callback-redirect", "bootstrap",
                                            "authenticated-request"]

    private func chain() throws -> TapChain {
        let intact = try XCTUnwrap(ScenarioFixtures.intactExecutable,
                                   "the intact executable is not next to the tests: run swift build --build-tests")
        let missing = ScenarioFixtures.missingCommands(in: intact)
        if !missing.isEmpty {
            throw XCTSkip("this intact has no \(missing.map { "'intact \($0)'" }.joined(separator: ", ")) yet")
        }
        return try TapChain(intact: intact, directory: makeTemporaryDirectory(prefix: "intact-scenario-test"))
    }

    func testTwoChainedTapsChangeNothingAndTheVerificationHolds() throws {
        let chain = try chain()
        defer { chain.stop() }
        try chain.start(tapAUpstream: chain.ports.tapB)
        let client = try chain.runClient()
        chain.stop()
        let report = try chain.verify()

        XCTAssertTrue(client.succeeded, "\(client)")
        XCTAssertTrue(report.policyHolds, ScenarioExpectation.failures(in: report).joined(separator: "\n"))
        XCTAssertEqual(report.path.hops.map(\.label), Self.hopLabels)
        XCTAssertEqual(Set(report.exchanges.compactMap(\.step?.rawValue)), Self.signInLabels)
        for exchange in report.exchanges {
            // Every exchange crossed every hop whole: proof it went through both taps to the server.
            XCTAssertEqual(exchange.hops.count, Self.hopLabels.count)
            XCTAssertTrue(exchange.hops.allSatisfy { $0.verdict == .identical || $0.verdict == .equivalent },
                          "\(exchange.step ?? "?"): \(exchange.hops.map(\.verdict))")
        }
    }

    func testARelayDroppingOneSetCookieBetweenTheTapsIsNamedByHopExchangeAndField() throws {
        let chain = try chain()
        defer { chain.stop() }
        let relay = try SetCookieDroppingRelay(socket: try chain.takeMiddleSocket(), upstreamPort: chain.ports.tapB,
                                               caDirectory: chain.caDirectory, droppedCookie: MockServer.multipartCsrfCookie)
        defer { relay.stop() }
        try chain.start(tapAUpstream: chain.ports.middle)
        let client = try chain.runClient()
        chain.stop()
        relay.stop()
        let report = try chain.verify()

        // The client notices the missing cookie where the bootstrap arrives.
        let diagnosis = try XCTUnwrap(client.outcome?.diagnosis, "\(client)")
        XCTAssertEqual(diagnosis.mode, .stripSetCookie, diagnosis.evidence)
        XCTAssertEqual(diagnosis.step, .tokenExchange)
        XCTAssertTrue(diagnosis.evidence.contains(MockServer.multipartCsrfCookie), diagnosis.evidence)

        // The verifier names the hop, the exchange and the field, and nothing else.
        XCTAssertFalse(report.policyHolds)
        let failing = report.exchanges.flatMap { exchange in
            exchange.hops.filter { !$0.verdict.passes }.map { (exchange, $0) }
        }
        XCTAssertEqual(failing.count, 1, ScenarioExpectation.failures(in: report).joined(separator: "\n"))
        let (exchange, cell) = try XCTUnwrap(failing.first)
        XCTAssertEqual(exchange.step?.rawValue, AuthStep.bootstrap.rawValue)
        XCTAssertEqual(report.path.hops.first { $0.number == cell.hop }?.label, "tap-a → tap-b")
        XCTAssertEqual(cell.verdict, .modified)
        XCTAssertEqual(cell.request.differences.map(\.text), [])
        XCTAssertEqual(cell.response.differences.compactMap(\.field), ["set-cookie"], "\(cell.response.differences.map(\.text))")
    }
}
