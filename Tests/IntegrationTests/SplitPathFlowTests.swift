import AuthFlow
import Demo
import Faults
import Foundation
import SignIn
import Wire
import XCTest

/// The app and the browser on different paths: a per-app VPN that leaves
/// the browser off it, a gateway certificate only the app holds. Each
/// fails with the split's diagnosis, and passes once the browser shares
/// the app's path or certificate.
final class SplitPathFlowTests: XCTestCase {
    /// A loopback proxy address nothing listens on.
    private func deadEnd() throws -> ForwardProxy {
        let socket = try ListeningSocket(bindingTo: .loopbackIPv4(port: 0))
        defer { socket.close() }
        return ForwardProxy(host: "127.0.0.1", port: Int(socket.localAddress.port))
    }

    private func chromium() throws -> ClientRunner.BrowserChoice {
        try installedChromium()
    }

    private func assertOffPath(_ run: FaultFlowRun, netError: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let diagnosis = try XCTUnwrap(run.outcome.diagnosis, file: file, line: line)
        XCTAssertEqual(diagnosis.mode, .browserOffPath, diagnosis.evidence, file: file, line: line)
        XCTAssertEqual(diagnosis.step, .loginPage, file: file, line: line)
        XCTAssertEqual(diagnosis.sentence, .perAppVPN, file: file, line: line)
        XCTAssertTrue(diagnosis.evidence.contains(netError), diagnosis.evidence, file: file, line: line)
        XCTAssertTrue(diagnosis.evidence.contains("the app reaches the server directly, the browser goes through proxy http://127.0.0.1:"),
                      diagnosis.evidence, file: file, line: line)
        XCTAssertTrue(run.outcome.steps.first?.verdict == .pass, "the app's own step passed", file: file, line: line)
    }

    func testPerAppVPNWithTheBrowserOffItIsTheSplitsFault() throws {
        let dead = try deadEnd()
        let run = try FaultFlowRun.run([]) { $0.browserPath = .proxy(dead) }
        try assertOffPath(run, netError: "connection refused")
        let fixed = try FaultFlowRun.run([]) { $0.browserPath = .sameAsApp }
        XCTAssertTrue(fixed.outcome.succeeded, "the browser on the app's path: \(String(describing: fixed.outcome.diagnosis))")
    }

    func testPerAppVPNWithChromiumOffIt() throws {
        let browser = try chromium()
        let dead = try deadEnd()
        let run = try FaultFlowRun.run([]) {
            $0.browser = browser
            $0.browserPath = .proxy(dead)
        }
        try assertOffPath(run, netError: "net::ERR_PROXY_CONNECTION_FAILED")
    }

    func testAGatewayCertificateOnlyTheAppHoldsStopsTheBrowser() throws {
        let rules = try FaultPreset.rules(specification: "client-cert-required")
        let run = try FaultFlowRun.run(rules, clientCertificate: true) { $0.browserPresentsClientCertificate = false }
        let diagnosis = try XCTUnwrap(run.outcome.diagnosis)
        XCTAssertEqual(diagnosis.mode, .browserClientCert, diagnosis.evidence)
        XCTAssertEqual(diagnosis.step, .loginPage)
        XCTAssertEqual(diagnosis.sentence, .certificateGateway)
        XCTAssertTrue(diagnosis.evidence.hasSuffix("the app holds a client certificate, the browser does not"), diagnosis.evidence)
        let fixed = try FaultFlowRun.run(rules, clientCertificate: true) { $0.browserPresentsClientCertificate = true }
        XCTAssertTrue(fixed.outcome.succeeded, "with the browser's certificate: \(String(describing: fixed.outcome.diagnosis))")
    }

    func testChromiumHasNoCertificateForTheGateway() throws {
        let browser = try chromium()
        let rules = try FaultPreset.rules(specification: "client-cert-required")
        let run = try FaultFlowRun.run(rules, clientCertificate: true) { $0.browser = browser }
        let diagnosis = try XCTUnwrap(run.outcome.diagnosis)
        XCTAssertEqual(diagnosis.mode, .browserClientCert, diagnosis.evidence)
        XCTAssertEqual(diagnosis.sentence, .certificateGateway)
        XCTAssertTrue(diagnosis.evidence.contains("the app holds"), diagnosis.evidence)
    }

    func testChromiumGivenTheCertificatePassesTheGateway() throws {
        let browser = try chromium()
        let rules = try FaultPreset.rules(specification: "client-cert-required")
        let run = try FaultFlowRun.run(rules, clientCertificate: true) {
            $0.browser = browser
            $0.browserPresentsClientCertificate = true
        }
        XCTAssertTrue(run.outcome.succeeded, "Chromium presented its certificate unasked: \(String(describing: run.outcome.diagnosis))")
        XCTAssertEqual(run.outcome.steps.filter { $0.agent == .browser }.map(\.verdict), [.pass, .pass])
    }
}
