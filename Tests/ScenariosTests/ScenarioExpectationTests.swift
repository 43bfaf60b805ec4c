import AuthFlow
import Evidence
import Foundation
import XCTest
@testable import Scenarios

/// Judging a run against its expectation, on reports built by hand.
final class ScenarioExpectationTests: XCTestCase {
    /// Hops of the four-tap path, numbered as the verifier numbers them.
    static let hops: [HopInfo] = {
        let points = [ObservationPoint(tap: "client", leg: .client),
                      ObservationPoint(tap: "tap-a", leg: .downstream), ObservationPoint(tap: "tap-a", leg: .upstream),
                      ObservationPoint(tap: "tap-b", leg: .downstream), ObservationPoint(tap: "tap-b", leg: .upstream),
                      ObservationPoint(tap: "server", leg: .server)]
        return zip(points, points.dropFirst()).enumerated().map { index, pair in
            HopInfo(number: index + 1, kind: pair.0.tap == pair.1.tap ? .inside : .network, from: pair.0, to: pair.1)
        }
    }()
    /// The load balancer's hop: tap-a.upstream → tap-b.downstream.
    static let loadBalancerHop = 3

    private func cell(_ hop: Int, _ verdict: HopVerdict, response: [MessageDifference] = [], request: [MessageDifference] = [],
                      failures: [RecordedFailure] = []) -> HopResult {
        let outcome: (HopVerdict, [MessageDifference]) -> HopVerdict = { verdict, differences in
            differences.isEmpty ? .identical : (verdict == .tolerated ? .tolerated : .modified)
        }
        return HopResult(hop: hop, verdict: verdict, pairing: .trace,
                         request: MessageResult(outcome: outcome(verdict, request), before: nil, after: nil, differences: request),
                         response: MessageResult(outcome: outcome(verdict, response), before: nil, after: nil, differences: response),
                         injected: [], failures: failures)
    }

    private func exchange(_ number: Int, _ step: AuthStep, _ cells: [Int: HopResult] = [:]) -> VerifiedExchange {
        let hops = Self.hops.map { cells[$0.number] ?? cell($0.number, .identical) }
        return VerifiedExchange(number: number, traceID: nil, step: StepLabel(rawValue: step.rawValue), method: "GET", target: "/suite",
                                authority: nil, started: nil, records: [], hops: hops)
    }

    private func report(_ exchanges: [VerifiedExchange], policy: VerificationPolicy = .strict) -> VerificationReport {
        VerificationReport(policy: PolicySummary(policy), recordings: [],
                           path: VerifiedPath(source: .option, taps: [], hops: Self.hops),
                           exchanges: exchanges, problems: [], warnings: [])
    }

    private func outcome(_ diagnosis: Diagnosis?) throws -> FlowOutcome {
        var object: [String: Any] = ["succeeded": diagnosis == nil, "signInCompleted": diagnosis == nil, "steps": [Any]()]
        if let diagnosis { object["diagnosis"] = try JSONSerialization.jsonObject(with: JSONEncoder().encode(diagnosis)) }
        return try JSONDecoder().decode(FlowOutcome.self, from: JSONSerialization.data(withJSONObject: object))
    }

    private let removedCookies = MessageDifference(kind: .fieldRemoved, field: "set-cookie", text: "Set-Cookie removed")
    private let strippedCookies = ScenarioExpectation(
        client: .fails(diagnosis: .stripSetCookie, step: .tokenExchange),
        verify: .fails(.init(step: .bootstrap, verdict: .modified,
                             difference: .init(message: .response, kind: .fieldRemoved, field: "set-cookie"))))

    private var strippedReport: VerificationReport {
        report([exchange(1, .challenge401),
                exchange(2, .bootstrap, [Self.loadBalancerHop: cell(Self.loadBalancerHop, .modified, response: [removedCookies])])])
    }

    private func failedClient() throws -> ClientObservation {
        ClientObservation(termination: .exited(1), outcome: try outcome(
            Diagnosis(mode: .stripSetCookie, step: .tokenExchange, evidence: "no cookies")))
    }

    func testAGoodRunMatchesAGoodExpectation() throws {
        let good = ScenarioExpectation(client: .succeeds, verify: .holds(tolerated: []))
        let client = ClientObservation(termination: .exited(0), outcome: try outcome(nil))
        XCTAssertEqual(good.mismatches(client: client, report: report([exchange(1, .challenge401)])), [])
        XCTAssertEqual(client.description, "success")
    }

    func testABrokenRunMatchesWhenTheExchangeHopAndDifferenceAreRight() throws {
        XCTAssertEqual(strippedCookies.mismatches(client: try failedClient(), report: strippedReport), [])
    }

    func testAClientThatSucceedsWhereItShouldFailIsAMismatch() throws {
        let client = ClientObservation(termination: .exited(0), outcome: try outcome(nil))
        XCTAssertEqual(strippedCookies.mismatches(client: client, report: strippedReport),
                       ["client: expected strip-set-cookie at token-exchange, got success"])
    }

    func testAnotherDiagnosisOrAMissingOutcomeIsAMismatch() throws {
        let other = ClientObservation(termination: .exited(1), outcome: try outcome(
            Diagnosis(mode: .html401, step: .protectedRequest, evidence: "401 text/html")))
        XCTAssertEqual(strippedCookies.mismatches(client: other, report: strippedReport),
                       ["client: expected strip-set-cookie at token-exchange, got html-401 at protected-request: 401 text/html"])
        let crashed = ClientObservation(termination: .signalled(11), outcome: nil)
        XCTAssertEqual(strippedCookies.mismatches(client: crashed, report: strippedReport),
                       ["client: expected strip-set-cookie at token-exchange, got no outcome (the client was killed by signal 11)"])
    }

    func testAFailureOnAnotherHopThanTheLoadBalancersIsAMismatch() throws {
        var exchanges = strippedReport.exchanges
        exchanges[0] = exchange(1, .challenge401, [1: cell(1, .modified, request: [
            MessageDifference(kind: .fieldAdded, field: "via", text: "Via added")])])
        let found = strippedCookies.mismatches(client: try failedClient(), report: report(exchanges))
        XCTAssertEqual(found, ["verify: exchange 1 (challenge-401) fails on client → tap-a, not on the load balancer's hop tap-a → tap-b: modified"])
    }

    func testTapAsOwnHopBrokenByTheLoadBalancersFailureIsThatOneFailure() throws {
        let refused = ScenarioExpectation(client: .fails(diagnosis: .transportFailure, step: .protectedRequest),
                                          verify: .fails(.init(step: .unauthenticatedRequest, verdict: .broken)))
        let client = ClientObservation(termination: .exited(1), outcome: try outcome(
            Diagnosis(mode: .transportFailure, step: .protectedRequest, evidence: "502 from proxy")))
        let reset = RecordedFailure(tap: "tap-a", failure: .init(kind: .reset, location: "upstream https://127.0.0.1:2",
                                                                 message: "connection reset by peer"))
        let broken = { (inside: [RecordedFailure]) in
            self.report([self.exchange(1, .unauthenticatedRequest, [2: self.cell(2, .broken, failures: inside),
                                                                    3: self.cell(3, .broken, failures: [reset])])])
        }
        XCTAssertEqual(refused.mismatches(client: client, report: broken([reset])), [])
        // A failure of tap A's own, not the load balancer's, is a second failure.
        let own = RecordedFailure(tap: "tap-a", failure: .init(kind: .internal, location: "downstream", message: "bug"))
        XCTAssertEqual(refused.mismatches(client: client, report: broken([own])),
                       ["verify: exchange 1 (unauthenticated-request) fails on inside tap-a, not on the load balancer's hop tap-a → tap-b: broken"])
    }

    /// Tap B refused the load balancer's handshake and the load balancer
    /// answered itself: tap B's own hop shows the same refusal, one failure.
    func testTapBsOwnHopBrokenByTheRefusalAttachedToAForeignAnswerIsThatOneFailure() throws {
        let foreign = ScenarioExpectation(client: .fails(diagnosis: .transportFailure, step: .protectedRequest),
                                          verify: .fails(.init(step: .unauthenticatedRequest, verdict: .foreign,
                                                               failure: "no client certificate")))
        let client = ClientObservation(termination: .exited(1), outcome: try outcome(
            Diagnosis(mode: .transportFailure, step: .protectedRequest, evidence: "503 from squid")))
        let refusal = RecordedFailure(tap: "tap-b", failure: .init(kind: .tls, location: "downstream TLS handshake",
                                                                   message: "peer presented no client certificate"))
        let answered = report([exchange(1, .unauthenticatedRequest, [3: cell(3, .foreign, failures: [refusal]),
                                                                     4: cell(4, .broken, failures: [refusal])])])
        XCTAssertEqual(foreign.mismatches(client: client, report: answered), [])
    }

    func testTheWrongDifferenceOrVerdictIsAMismatch() throws {
        let otherDifference = report([exchange(1, .bootstrap, [Self.loadBalancerHop: cell(
            Self.loadBalancerHop, .modified, response: [MessageDifference(kind: .bodyChanged, text: "body changed (10 → 12 bytes)")])])])
        XCTAssertEqual(strippedCookies.mismatches(client: try failedClient(), report: otherDifference),
                       ["verify: expected response field-removed set-cookie on tap-a → tap-b at bootstrap, got body-changed \"body changed (10 → 12 bytes)\""])
        let missing = report([exchange(1, .bootstrap, [Self.loadBalancerHop: cell(Self.loadBalancerHop, .missing)])])
        XCTAssertEqual(strippedCookies.mismatches(client: try failedClient(), report: missing),
                       ["verify: expected bootstrap to be modified on tap-a → tap-b, got missing"])
    }

    /// `client.runs`: every run before the last must sign in; `expect.client` is the last's.
    func testAnEarlierRunOfTheClientMustSignIn() throws {
        let good = ScenarioExpectation(client: .succeeds, verify: .holds(tolerated: []))
        let signedIn = ClientObservation(termination: .exited(0), outcome: try outcome(nil))
        let plain = report([exchange(1, .challenge401)])
        XCTAssertEqual(good.mismatches(client: signedIn, earlier: [signedIn], report: plain), [])
        XCTAssertEqual(good.mismatches(client: signedIn, earlier: [try failedClient()], report: plain),
                       ["client run 1 of 2: expected success (only the last run is judged by expect.client), "
                        + "got strip-set-cookie at token-exchange: no cookies"])
    }

    /// `cachedCopy` and `failure`: the foreign answer must be named a copy, and a recorded failure attached.
    func testACachedCopyAndAnAttachedFailureMustBeThere() throws {
        let cached = ScenarioExpectation(client: .fails(diagnosis: .cachedResponse, step: .protectedRequest),
                                         verify: .fails(.init(step: .challenge401, verdict: .foreign, cachedCopy: true,
                                                              failure: "no client certificate")))
        let client = ClientObservation(termination: .exited(1), outcome: try outcome(
            Diagnosis(mode: .cachedResponse, step: .protectedRequest, evidence: "a copy")))
        let refusal = RecordedFailure(tap: "tap-b", failure: .init(kind: .tls, location: "downstream TLS handshake",
                                                                   message: "peer presented no client certificate"))
        func run(copy: Bool, failures: [RecordedFailure]) -> VerificationReport {
            var foreign = cell(Self.loadBalancerHop, .foreign, failures: failures)
            if copy {
                foreign.response.cachedCopy = CachedCopy(exchange: 1, traceID: "t1", earlierBy: 200, otherResource: false,
                                                         carriesSession: false)
            }
            return report([exchange(1, .challenge401), exchange(2, .challenge401, [Self.loadBalancerHop: foreign])])
        }
        XCTAssertEqual(cached.mismatches(client: client, report: run(copy: true, failures: [refusal])), [])
        XCTAssertEqual(cached.mismatches(client: client, report: run(copy: false, failures: [refusal])),
                       ["verify: expected challenge-401 on tap-a → tap-b to be named a cached copy, it is foreign without one"])
        XCTAssertEqual(cached.mismatches(client: client, report: run(copy: true, failures: [])),
                       ["verify: expected a failure saying \"no client certificate\" attached to challenge-401 on tap-a → tap-b, got none"])
    }

    func testAPolicyThatHoldsWhereItShouldFailIsAMismatch() throws {
        let found = strippedCookies.mismatches(client: try failedClient(), report: report([exchange(1, .bootstrap)]))
        XCTAssertEqual(found, ["verify: expected the policy to fail, it holds",
                               "verify: expected bootstrap to be modified on tap-a → tap-b, got identical"])
    }

    func testToleratedFieldsMustShowAsTolerated() throws {
        let tolerant = ScenarioExpectation(client: .succeeds, verify: .holds(tolerated: ["via", "x-forwarded-for"]))
        let via = MessageDifference(kind: .fieldAdded, field: "via", text: "Via added", toleratedBy: "field via added")
        let client = ClientObservation(termination: .exited(0), outcome: try outcome(nil))
        let shown = report([exchange(1, .challenge401, [Self.loadBalancerHop: cell(Self.loadBalancerHop, .tolerated, request: [via])])])
        XCTAssertEqual(tolerant.mismatches(client: client, report: shown),
                       ["verify: expected x-forwarded-for to show as tolerated on tap-a → tap-b, it does not"])
    }

    func testTooFewIntermediaryRequestsIsAMismatch() throws {
        let checked = ScenarioExpectation(client: .succeeds, verify: .holds(tolerated: [], intermediaryRequests: 2))
        let client = ClientObservation(termination: .exited(0), outcome: try outcome(nil))
        XCTAssertEqual(checked.mismatches(client: client, report: report([exchange(1, .challenge401)])),
                       ["verify: expected at least 2 intermediary requests listed, got 0"])
    }

    func testAReportWithoutTheLoadBalancersHopIsAMismatch() throws {
        let empty = VerificationReport(policy: PolicySummary(.strict), recordings: [],
                                       path: VerifiedPath(source: .option, taps: [], hops: []), exchanges: [],
                                       problems: [VerificationProblem(kind: .noExchange, message: "the recordings hold no exchange")],
                                       warnings: [])
        XCTAssertEqual(strippedCookies.mismatches(client: try failedClient(), report: empty),
                       ["verify: no hop from tap-a to tap-b (hops: )", "verify: the recordings hold no exchange"])
    }
}
