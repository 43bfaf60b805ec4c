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
        let run = try FaultFlowRun.run(preset: "auth-redirect")
        try assertDiagnosis(run, preset: "auth-redirect", at: .protectedRequest)
        let exchange = try assertVerdict(run, fault: "auth-redirect", step: "unauthenticated-request", verdict: .modified)
        XCTAssertEqual(run.hop(run.proxyHop.map { $0 + 1 }, of: exchange)?.verdict, .identical, "the server's 401 left it intact")
    }

    func testHTML401() throws {
        let run = try FaultFlowRun.run(preset: "html-401")
        try assertDiagnosis(run, preset: "html-401", at: .protectedRequest)
        try assertVerdict(run, fault: "html-401", step: "challenge-401", verdict: .modified)
    }

    func testForeignResponse() throws {
        let run = try FaultFlowRun.run(preset: "foreign-response")
        try assertDiagnosis(run, preset: "foreign-response", at: .protectedRequest)
        let exchange = try assertVerdict(run, fault: "foreign-response", step: "unauthenticated-request", verdict: .foreign)
        XCTAssertEqual(run.hop(run.proxyHop.map { $0 + 1 }, of: exchange)?.verdict, .notReached, "the server was never asked")
    }

    func testGatewayCookie() throws {
        let run = try FaultFlowRun.run(preset: "gateway-cookie")
        try assertDiagnosis(run, preset: "gateway-cookie", at: .protectedRequest)
        try assertVerdict(run, fault: "gateway-cookie", step: "unauthenticated-request", verdict: .foreign)
    }

    func testStripSetCookie() throws {
        let run = try FaultFlowRun.run(preset: "strip-set-cookie")
        try assertDiagnosis(run, preset: "strip-set-cookie", at: .tokenExchange)
        try assertVerdict(run, fault: "strip-set-cookie", step: "bootstrap", verdict: .modified)
    }

    func testRewriteSetCookie() throws {
        let run = try FaultFlowRun.run(preset: "rewrite-set-cookie")
        try assertDiagnosis(run, preset: "rewrite-set-cookie", at: .tokenExchange)
        try assertVerdict(run, fault: "rewrite-set-cookie", step: "bootstrap", verdict: .modified)
    }

    func testStripCookie() throws {
        let run = try FaultFlowRun.run(preset: "strip-cookie")
        try assertDiagnosis(run, preset: "strip-cookie", at: .credentials)
        try assertVerdict(run, fault: "strip-cookie", step: "credentials-post", verdict: .modified)
    }

    func testRewriteURLs() throws {
        let run = try FaultFlowRun.run(preset: "rewrite-urls")
        try assertDiagnosis(run, preset: "rewrite-urls", at: .protectedRequest)
        try assertVerdict(run, fault: "rewrite-urls", step: "challenge-401", verdict: .modified)
    }

    func testDropChallenge() throws {
        let run = try FaultFlowRun.run(preset: "drop-challenge")
        try assertDiagnosis(run, preset: "drop-challenge", at: .loginPage)
        try assertVerdict(run, fault: "drop-challenge", step: "login-page", verdict: .modified)
    }

    func testAlterTokenPost() throws {
        let run = try FaultFlowRun.run(preset: "alter-token-post")
        try assertDiagnosis(run, preset: "alter-token-post", at: .tokenExchange)
        try assertVerdict(run, fault: "alter-token-post", step: "token-post", verdict: .modified)
    }

    func testCompress() throws {
        let run = try FaultFlowRun.run(preset: "compress")
        try assertDiagnosis(run, preset: "compress", at: .protectedRequest)
        try assertVerdict(run, fault: "compress", step: "challenge-401", verdict: .modified)
    }

    func testClientCertRequiredWithoutACertificate() throws {
        let run = try FaultFlowRun.run(preset: "client-cert-required", protocols: .http2Only)
        try assertDiagnosis(run, preset: "client-cert-required", at: .protectedRequest)
        // The failed handshake is a connection record of the proxy: no request, so no step.
        try assertVerdict(run, fault: "client-cert-required", step: nil, verdict: .broken)
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
