import AuthFlow
import Evidence
import Faults
import SignIn
import XCTest

/// Network faults through the whole flow, asserted by what happened and in
/// which order (what reached the client, what the records say), never by
/// how long anything took.
final class NetworkFaultFlowTests: XCTestCase {
    func testDelayWithJitterOnEveryRequestKeepsTheFlowCorrectAndRecordsEachDrawnDelay() throws {
        let run = try FaultFlowRun.run(rules: """
            {"rules": [{"name": "slow", "match": {"leg": "request"}, "actions": [{"action": "delay", "ms": 10, "jitter": 5}]}]}
            """)
        XCTAssertTrue(run.outcome.succeeded, String(describing: run.outcome.diagnosis))
        XCTAssertTrue(run.report.policyHolds)
        XCTAssertEqual(run.proxyRecords.count, 5)
        for record in run.proxyRecords {
            XCTAssertEqual(record.faults.map(\.name), ["slow"])
            XCTAssertTrue(record.faults.first?.detail?.hasPrefix("delay on the request: delayed ") ?? false)
        }
    }

    func testABandwidthLimitDeliversEveryResponseWhole() throws {
        // 20 000 bytes/s: bodies go out in 2 000-byte slices.
        let run = try FaultFlowRun.run(rules: """
            {"rules": [{"name": "narrow", "match": {"leg": "response"}, "actions": [{"action": "throttle", "bytesPerSecond": 20000}]}]}
            """, protocols: .http2Only)
        XCTAssertTrue(run.outcome.succeeded, String(describing: run.outcome.diagnosis))
        XCTAssertTrue(run.report.policyHolds, "throttling changes no byte")
        for record in run.proxyRecords {
            XCTAssertEqual(record.leg(.downstream)?.response?.digest.body, record.leg(.upstream)?.response?.digest.body)
            XCTAssertEqual(record.faults.first?.detail, "throttle on the response: limited to 20000 bytes/s")
        }
    }

    func testAResetAfterSomeBodyBytesSendsThemFirstThenBreaksTheExchange() throws {
        for protocols in [ClientRunner.Protocols.http1Only, .http2Only] {
            let run = try FaultFlowRun.run(preset: "reset-token-post:at=after-body-bytes,bytes=10", protocols: protocols)
            try assertDiagnosis(run, preset: "reset-token-post", at: .tokenExchange)
            let record = try XCTUnwrap(run.proxyRecords(with: "reset-token-post").first)
            XCTAssertEqual(record.leg(.downstream)?.response?.status, 200, "\(protocols): the head went out first")
            XCTAssertEqual(record.leg(.downstream)?.response?.digest.body.length, 10, "\(protocols): then exactly 10 body bytes")
            XCTAssertGreaterThan(record.leg(.upstream)?.response?.digest.body.length ?? 0, 10)
            XCTAssertEqual(record.error?.kind, .reset)
            try assertVerdict(run, fault: "reset-token-post", step: "bootstrap", verdict: .broken)
        }
    }

    func testCloseWithoutAnswerEndsTheFlowWhereItHappened() throws {
        for protocols in [ClientRunner.Protocols.http1Only, .http2Only] {
            try closeWithoutAnswer(protocols)
        }
    }

    private func closeWithoutAnswer(_ protocols: ClientRunner.Protocols) throws {
        let run = try FaultFlowRun.run(rules: """
            {"rules": [{"name": "hang-up", "match": {"leg": "request", "step": "login-page"}, "actions": [{"action": "close"}]}]}
            """, protocols: protocols)
        XCTAssertFalse(run.outcome.succeeded)
        let diagnosis = try XCTUnwrap(run.outcome.diagnosis)
        XCTAssertEqual(diagnosis.step, .loginPage)
        XCTAssertEqual(diagnosis.mode, .transportFailure)
        XCTAssertEqual(run.outcome.steps.last?.transportFailure, .closedWithoutResponse)
        let record = try XCTUnwrap(run.proxyRecords(with: "hang-up").first)
        XCTAssertEqual(record.error?.kind, .closedEarly)
        XCTAssertNil(record.leg(.upstream), "the server was never asked")
        XCTAssertNil(record.leg(.downstream)?.response)
        try assertVerdict(run, fault: "hang-up", step: "login-page", verdict: .broken)
    }

    func testAStallEndsWithTheClientsTimeoutNotWithAHang() throws {
        for protocols in [ClientRunner.Protocols.http1Only, .http2Only] {
            try stall(protocols)
        }
    }

    private func stall(_ protocols: ClientRunner.Protocols) throws {
        let run = try FaultFlowRun.run(rules: """
            {"rules": [{"name": "hang", "match": {"leg": "response", "step": "challenge-401"}, "actions": [{"action": "stall"}]}]}
            """, protocols: protocols, exchangeTimeout: .milliseconds(300))
        XCTAssertFalse(run.outcome.succeeded)
        XCTAssertEqual(run.outcome.steps.count, 1)
        XCTAssertEqual(run.outcome.steps.last?.transportFailure, .timedOut)
        let record = try XCTUnwrap(run.proxyRecords(with: "hang").first)
        XCTAssertEqual(record.error?.kind, .timeout, "the stall is what the record blames")
        XCTAssertEqual(record.leg(.upstream)?.response?.status, 401, "the server answered")
        XCTAssertNil(record.leg(.downstream)?.response, "the client got nothing")
    }
}
