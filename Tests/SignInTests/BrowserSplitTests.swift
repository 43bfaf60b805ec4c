import XCTest
@testable import AuthFlow
@testable import SignIn

/// A failure at a browser step on a path the app does not share is the split's.
final class BrowserSplitTests: XCTestCase {
    private func outcome(_ mode: FailureMode, at step: FlowStep) -> FlowOutcome {
        FlowOutcome(succeeded: false, signInCompleted: false, username: nil, steps: [],
                    diagnosis: Diagnosis(mode: mode, step: step, evidence: "503 from a portal"))
    }

    private let split = AgentPaths(app: "through proxy http://127.0.0.1:3128", browser: "directly", differ: true, appHasCertificate: false)

    func testAPortalAnsweringTheBrowserOffTheVPNIsTheSplit() throws {
        let attributed = BrowserSteps.attributingToSplit(outcome(.foreignResponse, at: .loginPage), paths: split)
        let diagnosis = try XCTUnwrap(attributed.diagnosis)
        XCTAssertEqual(diagnosis.mode, .browserOffPath)
        XCTAssertEqual(diagnosis.sentence, .perAppVPN)
        XCTAssertEqual(diagnosis.evidence, "503 from a portal; the app reaches the server through proxy http://127.0.0.1:3128, the browser goes directly")
    }

    func testOnOnePathTheFlowsOwnDiagnosisStays() {
        let shared = AgentPaths(app: "directly", browser: "directly", differ: false, appHasCertificate: false)
        XCTAssertEqual(BrowserSteps.attributingToSplit(outcome(.foreignResponse, at: .loginPage), paths: shared).diagnosis?.mode,
                       .foreignResponse)
        XCTAssertEqual(BrowserSteps.attributingToSplit(outcome(.foreignResponse, at: .tokenExchange), paths: split).diagnosis?.mode,
                       .foreignResponse, "an app step is never the browser's")
    }

    func testACertificateOnlyTheAppHoldsIsTheSplit() throws {
        let paths = AgentPaths(app: "directly", browser: "directly", differ: false, appHasCertificate: true)
        let diagnosis = try XCTUnwrap(BrowserSteps.attributingToSplit(outcome(.clientCertRequired, at: .loginPage), paths: paths).diagnosis)
        XCTAssertEqual(diagnosis.mode, .browserClientCert)
        XCTAssertEqual(diagnosis.sentence, .certificateGateway)
        XCTAssertTrue(diagnosis.evidence.hasSuffix("the app holds a client certificate, the browser does not"))
    }
}
