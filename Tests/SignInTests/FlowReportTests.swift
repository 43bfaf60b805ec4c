import AuthFlow
import Foundation
import HTTP
import XCTest
@testable import SignIn

final class FlowReportTests: XCTestCase {
    private let resource = AbsoluteURL("https://127.0.0.1:8443/suite/rest/whatever")!

    /// A run against the sans-io mock server, answered in memory.
    private func signIn(_ tamper: (FlowRequest, inout HTTPResponseHead, inout [UInt8]) -> Void = { _, _, _ in }) -> FlowOutcome {
        var server = MockServer(configuration: MockServerConfiguration(externalOrigin: resource.origin))
        var flow = SignInFlow(configuration: SignInFlow.Configuration(resourceURL: resource, traceRunID: "t1",
                                                                      expectsTraceEcho: true))
        let now = Date()
        while case .send(let request) = flow.next() {
            let response = server.handle(MockRequest(head: request.head, body: request.body), now: now)
            var head = response.head
            var body = response.body
            tamper(request, &head, &body)
            flow.receive(head, body: body, elapsed: 0.0123, now: now)
        }
        guard case .finished(let outcome) = flow.next() else { preconditionFailure("the loop ends only when finished") }
        return outcome
    }

    func testTextShowsEveryStepWithWhatWasSentReceivedTimeAndVerdict() {
        let outcome = signIn()
        XCTAssertTrue(outcome.succeeded)
        let text = FlowReport.text(outcome)
        XCTAssertTrue(text.contains("1. protected-request (steps 1-5), app: pass, 12.3 ms\n"), text)
        XCTAssertTrue(text.contains("   sent      GET https://127.0.0.1:8443/suite/rest/whatever [trace t1-1]\n"), text)
        XCTAssertTrue(text.contains("   received  401 application/json"), text)
        XCTAssertTrue(text.contains("   ok   status 401\n"), text)
        XCTAssertTrue(text.contains("2. login-page (step 6), browser: pass"), text)
        XCTAssertTrue(text.contains("5. follow-up (after sign-in), app: pass"), text)
        XCTAssertTrue(text.contains("sets JSESSIONID, __appianCsrfToken, __appianMultipartCsrfToken"), text)
        XCTAssertTrue(text.hasSuffix("Signed in as demo; the follow-up request succeeded with the session cookies.\n"), text)
        XCTAssertFalse(text.contains("FAIL"), text)
    }

    func testFailureNamesTheModeAndQuotesTheDocument() {
        let outcome = signIn { request, head, _ in
            if request.step == .tokenExchange { head.fields.removeAll { $0.lowercasedName == "set-cookie" } }
        }
        XCTAssertFalse(outcome.succeeded)
        let text = FlowReport.text(outcome)
        XCTAssertTrue(text.contains("   FAIL the bootstrap response has no Set-Cookie field"), text)
        XCTAssertTrue(text.contains("Sign-in FAILED at token-exchange (steps 9-11): strip-set-cookie\n"), text)
        XCTAssertTrue(text.contains("  the document:  \"\(DocumentSentence.step11Bootstrap.text)\"\n"), text)
        XCTAssertTrue(text.contains("  check:         \(FailureMode.stripSetCookie.advice)\n"), text)
    }

    func testTransportFailureShowsWhatCameBackInstead() {
        var flow = SignInFlow(configuration: SignInFlow.Configuration(resourceURL: resource, traceRunID: nil))
        flow.fail(.tlsFailed("server requires a client certificate", clientCertificateRequested: true), elapsed: 0.002)
        guard case .finished(let outcome) = flow.next() else { return XCTFail("a failure ends the run") }
        let text = FlowReport.text(outcome)
        XCTAssertTrue(text.contains("   sent      GET https://127.0.0.1:8443/suite/rest/whatever\n"), text)
        XCTAssertTrue(text.contains("   received  nothing: TLS failed (client certificate requested)"), text)
        XCTAssertTrue(text.contains("Sign-in FAILED at protected-request (steps 1-5): client-cert-required"), text)
        XCTAssertTrue(text.contains(DocumentSentence.clientCertificateImport.text), text)
    }

    func testJSONRoundTripsTheOutcome() throws {
        let outcome = signIn()
        let json = FlowReport.json(outcome)
        let decoded = try JSONDecoder().decode(FlowOutcome.self, from: Data(json.utf8))
        XCTAssertEqual(decoded, outcome)
        XCTAssertTrue(json.contains("\"url\" : \"https://127.0.0.1:8443/suite/rest/whatever\""), json)
    }
}
