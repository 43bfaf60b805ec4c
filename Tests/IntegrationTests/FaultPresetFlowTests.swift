import AuthFlow
import Evidence
import Faults
import SignIn
import XCTest

/// Every preset of `FaultPreset.catalog` through the whole flow (client →
/// proxy with the preset → mock server): the client's diagnosis names the
/// preset and quotes a sentence it breaks, and the verifier's verdict on the
/// proxy's inside hop of the affected exchange shows the injected fault.
final class FaultPresetFlowTests: XCTestCase {
    /// The presets these tests cover, one test each.
    static let covered = ["auth-redirect", "html-401", "foreign-response", "gateway-cookie", "strip-set-cookie",
                          "rewrite-set-cookie", "strip-cookie", "rewrite-urls", "drop-challenge", "alter-token-post",
                          "compress", "client-cert-required", "reset-token-post", "latency"]

    /// Runs the flow with the preset (default parameters, HTTP/1.1): the
    /// client's diagnosis at `step`, the verdict on the proxy's inside hop of
    /// the exchange labelled `label`.
    @discardableResult
    private func assertPreset(_ preset: String, diagnosedAt step: FlowStep, verdict: HopVerdict, onExchange label: String,
                              file: StaticString = #filePath, line: UInt = #line) throws -> (FaultFlowRun, VerifiedExchange) {
        let run = try FaultFlowRun.run(preset: preset)
        try assertDiagnosis(run, preset: preset, at: step, file: file, line: line)
        let exchange = try assertVerdict(run, fault: preset, step: label, verdict: verdict, file: file, line: line)
        return (run, exchange)
    }

    func testEveryPresetOfTheCatalogHasAFlowTest() {
        XCTAssertEqual(Set(FaultPreset.catalog.map(\.name)), Set(Self.covered))
    }

    func testWithoutFaultsTheFlowSucceedsAndEveryHopPasses() throws {
        for protocols in [ClientRunner.Protocols.http1Only, .http2Only] {
            let run = try FaultFlowRun.run([], protocols: protocols)
            XCTAssertTrue(run.outcome.succeeded, "\(protocols): \(String(describing: run.outcome.diagnosis))")
            XCTAssertTrue(run.report.policyHolds)
            XCTAssertEqual(run.report.exchanges.count, 5)
            XCTAssertTrue(run.proxyRecords.allSatisfy { $0.faults.isEmpty })
        }
    }

    func testAuthRedirect() throws {
        let (run, exchange) = try assertPreset("auth-redirect", diagnosedAt: .protectedRequest, verdict: .modified,
                                               onExchange: "unauthenticated-request")
        XCTAssertEqual(run.hop(run.proxyHop.map { $0 + 1 }, of: exchange)?.verdict, .identical, "the server's 401 left it intact")
    }

    func testHTML401() throws {
        try assertPreset("html-401", diagnosedAt: .protectedRequest, verdict: .modified, onExchange: "challenge-401")
    }

    func testForeignResponse() throws {
        let (run, exchange) = try assertPreset("foreign-response", diagnosedAt: .protectedRequest, verdict: .foreign,
                                               onExchange: "unauthenticated-request")
        XCTAssertEqual(run.hop(run.proxyHop.map { $0 + 1 }, of: exchange)?.verdict, .notReached, "the server was never asked")
    }

    func testGatewayCookie() throws {
        try assertPreset("gateway-cookie", diagnosedAt: .protectedRequest, verdict: .foreign, onExchange: "unauthenticated-request")
    }

    func testStripSetCookie() throws {
        try assertPreset("strip-set-cookie", diagnosedAt: .tokenExchange, verdict: .modified, onExchange: "bootstrap")
    }

    func testRewriteSetCookie() throws {
        try assertPreset("rewrite-set-cookie", diagnosedAt: .tokenExchange, verdict: .modified, onExchange: "bootstrap")
    }

    func testStripCookie() throws {
        try assertPreset("strip-cookie", diagnosedAt: .credentials, verdict: .modified, onExchange: "credentials-post")
    }

    func testRewriteURLs() throws {
        try assertPreset("rewrite-urls", diagnosedAt: .protectedRequest, verdict: .modified, onExchange: "challenge-401")
    }

    func testDropChallenge() throws {
        try assertPreset("drop-challenge", diagnosedAt: .loginPage, verdict: .modified, onExchange: "login-page")
    }

    func testAlterTokenPost() throws {
        try assertPreset("alter-token-post", diagnosedAt: .tokenExchange, verdict: .modified, onExchange: "token-post")
    }

    func testCompress() throws {
        try assertPreset("compress", diagnosedAt: .protectedRequest, verdict: .modified, onExchange: "challenge-401")
    }

    func testClientCertRequiredWithoutACertificate() throws {
        let run = try FaultFlowRun.run(preset: "client-cert-required", protocols: .http2Only)
        try assertDiagnosis(run, preset: "client-cert-required", at: .protectedRequest)
        // The failed handshake is a connection event of the proxy, paired with the client's failed
        // exchange (the client's label): one attempt, seen from both sides of hop 1.
        let exchange = try assertVerdict(run, fault: "client-cert-required", step: "unauthenticated-request", verdict: .broken)
        XCTAssertEqual(exchange.hops[0].verdict, .broken)
        XCTAssertEqual(exchange.hops[0].failures.map(\.tap), ["client", "proxy"])
        XCTAssertEqual(exchange.hops[0].failures.map(\.side), [.upstream, .client])
        XCTAssertEqual(run.report.connections.first?.failures.first?.pairedExchange, exchange.number)
        let record = try XCTUnwrap(run.proxyRecords(with: "client-cert-required").first)
        XCTAssertEqual(record.error?.kind, .tls)
        XCTAssertEqual(run.proxyRecords.count, 1, "nothing got past the handshake")
    }

    func testClientCertRequiredWithACertificateSucceeds() throws {
        let run = try FaultFlowRun.run(preset: "client-cert-required", protocols: .http2Only, clientCertificate: true)
        XCTAssertTrue(run.outcome.succeeded, String(describing: run.outcome.diagnosis))
        XCTAssertTrue(run.report.policyHolds)
        XCTAssertEqual(run.exchanges(injecting: "client-cert-required").count, 5,
                       "every exchange of the connection shows the requirement")
        for record in run.proxyRecords {
            XCTAssertEqual(record.leg(.downstream)?.tls?.clientCertificateSubject, "CN=intact demo client",
                           "the proxy records who presented the certificate")
        }
    }

    func testResetTokenPost() throws {
        for protocols in [ClientRunner.Protocols.http1Only, .http2Only] {
            let run = try FaultFlowRun.run(preset: "reset-token-post", protocols: protocols)
            try assertDiagnosis(run, preset: "reset-token-post", at: .tokenExchange)
            // The server answered (the token is used up); the proxy reset before the response's head.
            try assertVerdict(run, fault: "reset-token-post", step: "bootstrap", verdict: .broken)
            let record = try XCTUnwrap(run.proxyRecords(with: "reset-token-post").first)
            XCTAssertEqual(record.error?.kind, .reset)
            XCTAssertNil(record.leg(.downstream)?.response, "\(protocols): nothing of the response reached the client")
            XCTAssertEqual(record.leg(.upstream)?.response?.status, 200)
        }
    }

    func testLatencyIsTolerated() throws {
        let run = try FaultFlowRun.run(preset: "latency:ms=20,jitter=10", protocols: .http2Only)
        XCTAssertTrue(run.outcome.succeeded, String(describing: run.outcome.diagnosis))
        XCTAssertTrue(run.report.policyHolds, "a delay changes no byte")
        let delayed = run.exchanges(injecting: "latency")
        XCTAssertEqual(delayed.count, 5, "every response was delayed")
        for exchange in delayed {
            XCTAssertTrue(run.hop(run.proxyHop, of: exchange)?.verdict.passes ?? false)
        }
        for record in run.proxyRecords {
            let detail = try XCTUnwrap(record.faults.first?.detail)
            let ms = try XCTUnwrap(Int(detail.split(separator: " ").dropLast().last ?? ""), detail)
            XCTAssertTrue((10...30).contains(ms), "jitter stays within ±10 ms of 20: \(detail)")
        }
    }
}
