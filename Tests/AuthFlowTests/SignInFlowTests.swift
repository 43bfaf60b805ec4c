import Foundation
import HTTP
import XCTest
@testable import AuthFlow

final class SignInFlowTests: XCTestCase {
    private func run(server: MockServer = Fixture.server(), flow: SignInFlow = Fixture.flow(),
                     _ configure: (inout InMemoryDriver) -> Void = { _ in }) -> (FlowOutcome, InMemoryDriver) {
        var driver = InMemoryDriver(server: server)
        configure(&driver)
        var flow = flow
        let outcome = driver.run(&flow)
        return (outcome, driver)
    }

    // MARK: the whole flow

    func testSignInSucceedsEndToEndWithFollowUp200() {
        let (outcome, driver) = run()
        XCTAssertTrue(outcome.succeeded, "\(outcome.diagnosis.map { "\($0.mode): \($0.evidence)" } ?? "")")
        XCTAssertTrue(outcome.signInCompleted)
        XCTAssertNil(outcome.diagnosis)
        XCTAssertEqual(outcome.username, "demo")
        XCTAssertEqual(outcome.steps.map(\.step), [.protectedRequest, .loginPage, .credentials, .tokenExchange, .followUp])
        XCTAssertEqual(outcome.steps.map(\.label), [.challenge401, .loginPage, .callbackRedirect, .bootstrap, .authenticatedRequest])
        XCTAssertEqual(outcome.steps.map(\.agent), [.app, .browser, .browser, .app, .app])
        XCTAssertTrue(outcome.steps.allSatisfy { $0.verdict == .pass })
        XCTAssertEqual(outcome.steps.map { $0.response?.status }, [401, 200, 302, 200, 200])
        XCTAssertEqual(driver.serverLog.map(\.1.step), [.challenge401, .loginPage, .callbackRedirect, .bootstrap, .authenticatedRequest])
        // Step 1 carries no cookies; the follow-up carries the session.
        XCTAssertFalse(driver.sent[0].head.fields.contains("Cookie"))
        XCTAssertTrue(driver.sent[4].head.fields["Cookie"]?.contains("JSESSIONID=") ?? false)
        // Step 9 goes to exactly the tokenUrl of step 3.
        XCTAssertEqual(driver.sent[3].url.serialized, "https://mysite.test:8443/suite/mobileAuthTokenConsumer")
        XCTAssertEqual(driver.sent[3].head.fields["Content-Type"], "application/x-www-form-urlencoded")
        // The login URL carries the challenge and the default scheme.
        XCTAssertEqual(driver.sent[1].url.queryValue("scheme"), "com.appian.tempo")
        XCTAssertTrue(PKCE.isWellFormedChallenge(driver.sent[1].url.queryValue("codeChallenge") ?? ""))
    }

    func testEveryRequestCarriesAUniqueTraceID() {
        let (_, driver) = run()
        let traces = driver.sent.map { $0.head.fields[SignInFlow.traceFieldName] }
        XCTAssertEqual(traces, ["run1-1", "run1-2", "run1-3", "run1-4", "run1-5"])
        XCTAssertEqual(driver.sent.map(\.traceID), traces)
    }

    func testTraceFieldCanBeTurnedOff() {
        let (outcome, driver) = run(flow: Fixture.flow { $0.traceRunID = nil })
        XCTAssertTrue(outcome.succeeded)
        XCTAssertTrue(driver.sent.allSatisfy { !$0.head.fields.contains(SignInFlow.traceFieldName) })
    }

    func testBrowserJarIsDroppedAndAppJarHoldsTheThreeCookies() {
        var driver = InMemoryDriver(server: Fixture.server())
        var flow = Fixture.flow()
        _ = driver.run(&flow)
        XCTAssertTrue(flow.browserJar.cookies.isEmpty)
        XCTAssertEqual(Set(flow.appJar.cookies.map(\.name)), ["JSESSIONID", "__appianCsrfToken", "__appianMultipartCsrfToken"])
        // The browser never saw the app's cookies: the credentials POST had only the login-transaction cookie.
        XCTAssertEqual(driver.sent[2].head.fields["Cookie"]?.hasPrefix(MockServer.loginTransactionCookie + "="), true)
    }

    func testUnsafeFollowUpCarriesTheCSRFHeader() {
        let (outcome, driver) = run(flow: Fixture.flow { $0.followUpMethod = "POST" })
        XCTAssertTrue(outcome.succeeded)
        let followUp = driver.sent[4]
        XCTAssertEqual(followUp.head.method, "POST")
        let csrf = followUp.head.fields[MockServer.csrfHeader]
        XCTAssertNotNil(csrf)
        XCTAssertTrue(followUp.head.fields["Cookie"]?.contains("__appianCsrfToken=\(csrf ?? "")") ?? false)
    }

    func testCustomTokenFieldsAndJSONEncodingWorkWhenBothSidesAgree() {
        let format = TokenPostFormat(tokenField: "t", verifierField: "v", encoding: .json)
        let (outcome, driver) = run(server: Fixture.server { $0.tokenPost = format }, flow: Fixture.flow { $0.tokenPost = format })
        XCTAssertTrue(outcome.succeeded)
        XCTAssertEqual(driver.sent[3].head.fields["Content-Type"], "application/json")
    }

    func testOutcomeRoundTripsThroughJSON() throws {
        let (outcome, _) = run(server: Fixture.server(), flow: Fixture.flow()) { driver in
            driver.onResponse = { request, head, _ in if request.step == .tokenExchange { head.fields.remove("Set-Cookie") } }
        }
        let data = try JSONEncoder().encode(outcome)
        XCTAssertEqual(try JSONDecoder().decode(FlowOutcome.self, from: data), outcome)
        let text = String(decoding: data, as: UTF8.self)
        XCTAssertTrue(text.contains("\"strip-set-cookie\""))
        XCTAssertTrue(text.contains("\"challenge-401\""))
    }

    func testNextKeepsReturningTheSameRequestUntilAnswered() {
        let flow = Fixture.flow()
        XCTAssertEqual(flow.next(), flow.next())
        guard case .send(let request) = flow.next() else { return XCTFail("expected a request") }
        XCTAssertEqual(request.step, .protectedRequest)
        XCTAssertEqual(request.head.fields["Host"], "mysite.test:8443")
    }

    // MARK: diagnoses of tampered exchanges

    private func diagnosis(server: MockServer = Fixture.server(), flow: SignInFlow = Fixture.flow(),
                           _ configure: (inout InMemoryDriver) -> Void) -> Diagnosis? {
        let (outcome, _) = run(server: server, flow: flow, configure)
        XCTAssertFalse(outcome.succeeded)
        XCTAssertEqual(outcome.steps.last?.verdict, .fail)
        return outcome.diagnosis
    }

    func testHTMLBodyOn401IsHTML401() {
        let d = diagnosis { driver in
            driver.onResponse = { request, head, body in
                guard request.step == .protectedRequest else { return }
                head.fields.set("Content-Type", "text/html")
                body = Array("<html><body>Unauthorized</body></html>".utf8)
            }
        }
        XCTAssertEqual(d?.mode, .html401)
        XCTAssertEqual(d?.step, .protectedRequest)
        XCTAssertEqual(d?.quote, "The response has a 401 status code with contextUrl and tokenUrl keys and came from an Appian server.")
        XCTAssertFalse(d?.advice.isEmpty ?? true)
    }

    func testRedirectInsteadOf401IsAuthRedirect() {
        let d = diagnosis { driver in
            driver.onResponse = { request, head, body in
                guard request.step == .protectedRequest else { return }
                head.status = 302
                head.fields.set("Location", "https://gateway.test/login")
                body = []
            }
        }
        XCTAssertEqual(d?.mode, .authRedirect)
        XCTAssertEqual(d?.sentence, .directCommunication)
        XCTAssertTrue(d?.evidence.contains("https://gateway.test/login") ?? false)
    }

    func testGatewayRedirectSettingItsCookieIsGatewayCookie() {
        let d = diagnosis { driver in
            driver.onRequest = { request, _ in
                guard request.step == .protectedRequest else { return .forward }
                return .answer(HTTPResponseHead(status: 302, fields: ["Location": "https://gw.test/sso", "Set-Cookie": "GWSESSION=x; Path=/"]), [])
            }
        }
        XCTAssertEqual(d?.mode, .gatewayCookie)
        XCTAssertEqual(d?.quote, DocumentSentence.noAuthenticationCookies.text)
    }

    func testBootstrapWithoutSetCookieIsStripSetCookie() {
        let (outcome, _) = run { driver in
            driver.onResponse = { request, head, _ in if request.step == .tokenExchange { head.fields.remove("Set-Cookie") } }
        }
        XCTAssertEqual(outcome.diagnosis?.mode, .stripSetCookie)
        XCTAssertEqual(outcome.diagnosis?.step, .tokenExchange)
        XCTAssertFalse(outcome.signInCompleted)
        XCTAssertEqual(outcome.steps.count, 4)
    }

    func testOneMissingSessionCookieIsStripSetCookie() {
        let d = diagnosis { driver in
            driver.onResponse = { request, head, _ in
                guard request.step == .tokenExchange else { return }
                head.fields.removeAll { $0.lowercasedName == "set-cookie" && $0.value.hasPrefix("__appianMultipartCsrfToken=") }
            }
        }
        XCTAssertEqual(d?.mode, .stripSetCookie)
        XCTAssertTrue(d?.evidence.contains("__appianMultipartCsrfToken") ?? false)
    }

    func testFoldedOrRewrittenSetCookieIsRewriteSetCookie() {
        let folded = diagnosis { driver in
            driver.onResponse = { request, head, _ in
                guard request.step == .tokenExchange else { return }
                let joined = head.fields.values("Set-Cookie").joined(separator: ", ")
                head.fields.set("Set-Cookie", joined)
            }
        }
        XCTAssertEqual(folded?.mode, .rewriteSetCookie)
        let rePathed = diagnosis { driver in
            driver.onResponse = { request, head, _ in
                guard request.step == .tokenExchange else { return }
                head.fields.mapInPlace { field in
                    if field.lowercasedName == "set-cookie" { field.value = field.value.replacingOccurrences(of: "Path=/suite", with: "Path=/other") }
                }
            }
        }
        XCTAssertEqual(rePathed?.mode, .rewriteSetCookie)
        XCTAssertTrue(rePathed?.evidence.contains("JSESSIONID: Path changed (/suite → /other)") ?? false, rePathed?.evidence ?? "")
        let noHttpOnly = diagnosis { driver in
            driver.onResponse = { request, head, _ in
                guard request.step == .tokenExchange else { return }
                head.fields.mapInPlace { $0.value = $0.value.replacingOccurrences(of: "; HttpOnly", with: "") }
            }
        }
        XCTAssertEqual(noHttpOnly?.mode, .rewriteSetCookie)
    }

    func testAffinityCookieIsNotedNotFailed() {
        let (outcome, _) = run { driver in
            driver.onResponse = { request, head, _ in
                if request.step == .tokenExchange { head.fields.append("Set-Cookie", "LB_AFFINITY=node2; Path=/") }
            }
        }
        XCTAssertTrue(outcome.succeeded)
        let notes = outcome.steps[3].checks.filter { $0.kind == .note }.map(\.message)
        XCTAssertTrue(notes.contains { $0.contains("LB_AFFINITY") })
    }

    func testCookieStrippedFromFollowUpIsStripCookie() {
        let (outcome, driver) = run { driver in
            driver.onRequest = { request, mock in
                if request.step == .followUp { mock.head.fields.remove("Cookie") }
                return .forward
            }
        }
        XCTAssertEqual(outcome.diagnosis?.mode, .stripCookie)
        XCTAssertTrue(outcome.signInCompleted)
        XCTAssertFalse(outcome.succeeded)
        XCTAssertEqual(driver.serverLog.last?.1.head.status, 401)
        XCTAssertTrue(outcome.diagnosis?.evidence.contains("no session cookie") ?? false)
    }

    func testCookieStrippedFromCredentialsPostIsStripCookie() {
        let d = diagnosis { driver in
            driver.onRequest = { request, mock in
                if request.step == .credentials { mock.head.fields.remove("Cookie") }
                return .forward
            }
        }
        XCTAssertEqual(d?.mode, .stripCookie)
        XCTAssertEqual(d?.step, .credentials)
    }

    func testAlteredTokenPostIsAlterTokenPost() {
        // The verifier changed: the server had the app's challenge (it echoed it), so the POST was altered.
        let verifier = diagnosis { driver in
            driver.onRequest = { request, mock in
                guard request.step == .tokenExchange else { return .forward }
                let text = String(decoding: mock.body, as: UTF8.self)
                let pairs = FormEncoding.decode(text)!.map { ($0.name, $0.name == "codeVerifier" ? PKCE.makeVerifier() : $0.value) }
                mock.body = Array(FormEncoding.encode(pairs).utf8)
                return .forward
            }
        }
        XCTAssertEqual(verifier?.mode, .alterTokenPost)
        XCTAssertTrue(verifier?.evidence.contains("verifier changed on the way") ?? false)
        // Re-encoded as JSON: the server cannot read it.
        let reencoded = diagnosis { driver in
            driver.onRequest = { request, mock in
                guard request.step == .tokenExchange else { return .forward }
                mock.head.fields.set("Content-Type", "application/json")
                mock.body = Array("{}".utf8)
                return .forward
            }
        }
        XCTAssertEqual(reencoded?.mode, .alterTokenPost)
        XCTAssertTrue(reencoded?.evidence.contains("expected Content-Type") ?? false)
        // The token truncated.
        let token = diagnosis { driver in
            driver.onRequest = { request, mock in
                if request.step == .tokenExchange { mock.body = Array(mock.body.dropFirst(8)) }
                return .forward
            }
        }
        XCTAssertEqual(token?.mode, .alterTokenPost)
    }

    func testForeignAnswerIsForeignResponse() {
        let d = diagnosis { driver in
            driver.onRequest = { request, _ in
                guard request.step == .loginPage else { return .forward }
                return .answer(HTTPResponseHead(status: 503, fields: ["Content-Type": "text/html"]), Array("<h1>Maintenance</h1>".utf8))
            }
        }
        XCTAssertEqual(d?.mode, .foreignResponse)
        XCTAssertEqual(d?.quote, DocumentSentence.onlyAppianResponses.text)
    }

    func testCompressedResponseIsCompress() {
        let d = diagnosis { driver in
            driver.onResponse = { request, head, _ in
                if request.step == .tokenExchange { head.fields.append("Content-Encoding", "gzip") }
            }
        }
        XCTAssertEqual(d?.mode, .compress)
    }

    func testServerConfiguredForAnotherHostIsRewriteURLs() {
        let server = Fixture.server { $0.externalOrigin = Origin(scheme: "https", host: "internal.lan") }
        let d = diagnosis(server: server) { _ in }
        XCTAssertEqual(d?.mode, .rewriteURLs)
        XCTAssertTrue(d?.evidence.hasPrefix("context URL mismatch") ?? false)
        let http = diagnosis { driver in
            driver.onResponse = { request, _, body in
                guard request.step == .protectedRequest else { return }
                body = Array(String(decoding: body, as: UTF8.self).replacingOccurrences(of: "https://", with: "http://").utf8)
            }
        }
        XCTAssertEqual(http?.mode, .rewriteURLs)
    }

    func testCallbackWithAnotherSchemeIsRewriteURLs() {
        let d = diagnosis { driver in
            driver.onResponse = { request, head, _ in
                guard request.step == .credentials, let location = head.fields["Location"] else { return }
                head.fields.set("Location", location.replacingOccurrences(of: "com.appian.tempo://", with: "https://"))
            }
        }
        XCTAssertEqual(d?.mode, .rewriteURLs)
        XCTAssertEqual(d?.sentence, .step7Callback)
    }

    func testChallengeDroppedOrAlteredIsDropChallenge() {
        let dropped = diagnosis { driver in
            driver.onRequest = { request, mock in
                if request.step == .loginPage { mock.head.path = "/suite?scheme=com.appian.tempo" }
                return .forward
            }
        }
        XCTAssertEqual(dropped?.mode, .dropChallenge)
        let altered = diagnosis { driver in
            driver.onRequest = { request, mock in
                if request.step == .loginPage {
                    mock.head.path = "/suite?codeChallenge=\(PKCE.challenge(for: PKCE.makeVerifier()))&scheme=com.appian.tempo"
                }
                return .forward
            }
        }
        XCTAssertEqual(altered?.mode, .dropChallenge)
        XCTAssertEqual(altered?.step, .loginPage)
    }

    func testUnknownCallbackSchemeIsLoginURLRejected() {
        let d = diagnosis(flow: Fixture.flow { $0.callbackScheme = "evil" }) { _ in }
        XCTAssertEqual(d?.mode, .loginURLRejected)
        XCTAssertTrue(d?.evidence.contains("not allowed") ?? false)
    }

    func testWrongPasswordIsCredentialsRejected() {
        let d = diagnosis(flow: Fixture.flow { $0.password = "nope" }) { _ in }
        XCTAssertEqual(d?.mode, .credentialsRejected)
        XCTAssertEqual(d?.step, .credentials)
    }

    func testRedirectOfSignedInRequestIsGatewayCookie() {
        let d = diagnosis { driver in
            driver.onRequest = { request, _ in
                guard request.step == .followUp else { return .forward }
                return .answer(HTTPResponseHead(status: 302, fields: ["Location": "https://gw.test/login"]), [])
            }
        }
        XCTAssertEqual(d?.mode, .gatewayCookie)
        XCTAssertEqual(d?.step, .followUp)
    }

    func testStrippedCSRFHeaderIsCSRFRejected() {
        let d = diagnosis(flow: Fixture.flow { $0.followUpMethod = "DELETE" }) { driver in
            driver.onRequest = { request, mock in
                if request.step == .followUp { mock.head.fields.remove(MockServer.csrfHeader) }
                return .forward
            }
        }
        XCTAssertEqual(d?.mode, .csrfRejected)
    }

    func testResetDuringTokenPostIsResetTokenPost() {
        let (outcome, _) = run { driver in
            driver.onRequest = { request, _ in
                request.step == .tokenExchange ? .fail(.connectionReset("after 12 body bytes")) : .forward
            }
        }
        XCTAssertEqual(outcome.diagnosis?.mode, .resetTokenPost)
        XCTAssertNil(outcome.steps.last?.response)
        XCTAssertEqual(outcome.steps.last?.transportFailure, .connectionReset("after 12 body bytes"))
    }

    func testTLSFailureAfterCertificateRequestIsClientCertRequired() {
        let (outcome, _) = run { driver in
            driver.onRequest = { _, _ in .fail(.tlsFailed("alert certificate required", clientCertificateRequested: true)) }
        }
        XCTAssertEqual(outcome.diagnosis?.mode, .clientCertRequired)
        let (other, _) = run { driver in
            driver.onRequest = { _, _ in .fail(.connectFailed("connection refused")) }
        }
        XCTAssertEqual(other.diagnosis?.mode, .transportFailure)
    }

    // MARK: intermediaries that answer themselves and say why

    /// A proxy's own error answer (as `intact proxy` makes it) at `step`.
    private func proxyAnswer(at step: FlowStep, status: Int = 502, _ proxyStatus: String) -> Diagnosis? {
        diagnosis { driver in
            driver.onRequest = { request, _ in
                guard request.step == step else { return .forward }
                let head = HTTPResponseHead(status: HTTPStatus(status), fields: ["Content-Type": "text/plain", "Proxy-Status": proxyStatus])
                return .answer(head, Array("intact: upstream https://10.0.0.7:8443: failed\n".utf8))
            }
        }
    }

    func testAProxyThatCannotReachItsUpstreamIsATransportFailureNamingIt() {
        let d = proxyAnswer(at: .protectedRequest,
                            #"intact; error=connection_refused; details="TCP connect failed: connection refused by 10.0.0.7:8443""#)
        XCTAssertEqual(d?.mode, .transportFailure)
        XCTAssertEqual(d?.step, .protectedRequest)
        XCTAssertEqual(d?.quote, DocumentSentence.directCommunication.text)
        XCTAssertEqual(d?.evidence, #"502 from proxy "intact" answering for mysite.test:8443, not from the server: it could not "#
                       + "reach its upstream (Proxy-Status error=connection_refused: TCP connect failed: connection refused by 10.0.0.7:8443)")
        // The plain-text body says more (where), and holds the details: it is quoted instead.
        let said = proxyAnswer(at: .protectedRequest, "intact; error=connection_terminated; details=\"failed\"")
        XCTAssertTrue(said?.evidence.hasSuffix("(Proxy-Status error=connection_terminated: intact: upstream https://10.0.0.7:8443: failed)") ?? false,
                      said?.evidence ?? "")
        let slow = proxyAnswer(at: .loginPage, status: 504, "gw; error=http_response_timeout")
        XCTAssertEqual(slow?.mode, .transportFailure)
        // No details: the body's words stand in.
        XCTAssertTrue(slow?.evidence.hasSuffix("it got no usable response from its upstream "
                                               + "(Proxy-Status error=http_response_timeout: intact: upstream https://10.0.0.7:8443: failed)") ?? false,
                      slow?.evidence ?? "")
    }

    /// An app that has a certificate but goes through a forward proxy: the set-up is the cause, and the fix named.
    func testAClientCertificateThroughAForwardProxyNamesWhereItMustGo() {
        let details = #"intact; error=tls_protocol_error; details="TLS failed: server requires a client certificate and none was presented""#
        let d = diagnosis(flow: Fixture.flow { $0.clientCertificateThroughForwardProxy = true }) { driver in
            driver.onRequest = { request, _ in
                guard request.step == .protectedRequest else { return .forward }
                return .answer(HTTPResponseHead(status: 502, fields: ["Content-Type": "text/plain", "Proxy-Status": details]), [])
            }
        }
        XCTAssertEqual(d?.mode, .clientCertRequired)
        XCTAssertTrue(d?.evidence.hasSuffix("the certificate must be given to the tap in front "
                                            + "(intact proxy --upstream-client-cert FILE.p12)") ?? false, d?.evidence ?? "")
        XCTAssertFalse(proxyAnswer(at: .protectedRequest, details)?.evidence.contains("tap in front") ?? true,
                       "without a certificate the usual advice stands")
    }

    func testAnUpstreamHandshakeWantingAClientCertificateIsClientCertRequired() {
        let missing = proxyAnswer(at: .protectedRequest, #"intact; error=tls_protocol_error; details="TLS failed: server "#
                                  + #"requires a client certificate and none was presented (alert received: certificate required)""#)
        XCTAssertEqual(missing?.mode, .clientCertRequired)
        XCTAssertEqual(missing?.quote, DocumentSentence.clientCertificateImport.text)
        XCTAssertTrue(missing?.evidence.contains("its upstream demanded a client certificate it did not have or did not accept") ?? false)
        let alert = proxyAnswer(at: .credentials, "gw; error=tls_alert_received; alert-id=48")
        XCTAssertEqual(alert?.mode, .clientCertRequired)
        XCTAssertEqual(alert?.step, .credentials)
        // The proxy distrusting its upstream's certificate is not about a client certificate.
        let untrusted = proxyAnswer(at: .protectedRequest,
                                    #"intact; error=tls_certificate_error; details="TLS failed: certificate verify failed""#)
        XCTAssertEqual(untrusted?.mode, .transportFailure)
    }

    func testATokenPostBrokenBehindAProxyIsResetTokenPost() {
        let d = proxyAnswer(at: .tokenExchange, "intact; error=connection_terminated")
        XCTAssertEqual(d?.mode, .resetTokenPost)
        XCTAssertEqual(d?.step, .tokenExchange)
    }

    func testAProxyRefusingByPolicyIsAForeignResponse() {
        let d = proxyAnswer(at: .protectedRequest, status: 403, "waf.example; error=http_request_denied")
        XCTAssertEqual(d?.mode, .foreignResponse)
        XCTAssertTrue(d?.evidence.hasPrefix(#"403 from proxy "waf.example" answering for mysite.test:8443, not from the server: it answered itself"#) ?? false,
                      d?.evidence ?? "")
    }

    func testAProxyStatusWithoutAnErrorIsNoFailure() {
        let (outcome, _) = run { driver in
            driver.onResponse = { _, head, _ in head.fields.append("Proxy-Status", "cdn.example; received-status=200") }
        }
        XCTAssertTrue(outcome.succeeded, outcome.diagnosis?.evidence ?? "")
    }

    func testNginxsAnswerToAMissingClientCertificateIsClientCertRequired() {
        let page = "<html>\r\n<head><title>400 No required SSL certificate was sent</title></head>\r\n<body>\r\n"
            + "<center><h1>400 Bad Request</h1></center>\r\n<center>No required SSL certificate was sent</center>\r\n"
            + "<hr><center>nginx/1.22.1</center>\r\n</body>\r\n</html>\r\n"
        let d = diagnosis { driver in
            driver.onRequest = { request, _ in
                guard request.step == .protectedRequest else { return .forward }
                return .answer(HTTPResponseHead(status: 400, fields: ["Content-Type": "text/html"]), Array(page.utf8))
            }
        }
        XCTAssertEqual(d?.mode, .clientCertRequired)
        XCTAssertTrue(d?.evidence.contains(#""No required SSL certificate was sent" (nginx's answer when ssl_verify_client"#) ?? false,
                      d?.evidence ?? "")
        // The same words in an answer the server itself sent (it echoed the trace) are the server's business.
        let own = diagnosis { driver in
            driver.onResponse = { request, head, body in
                guard request.step == .protectedRequest else { return }
                head.status = 400
                body = Array(page.utf8)
            }
        }
        XCTAssertEqual(own?.mode, .unexpectedResponse)
    }

    func testLoginPageCookiesStrippedAreStripSetCookieAtTheCredentialsPost() {
        let d = diagnosis { driver in
            driver.onResponse = { request, head, _ in
                if request.step == .loginPage { head.fields.remove("Set-Cookie") }
            }
        }
        XCTAssertEqual(d?.mode, .stripSetCookie)
        XCTAssertEqual(d?.step, .credentials)
        XCTAssertEqual(d?.quote, DocumentSentence.unmodified.text)
        XCTAssertTrue(d?.evidence.hasSuffix("the login page arrived with no Set-Cookie field") ?? false, d?.evidence ?? "")
    }

    func testRetriedTokenPostIsTokenReplayed() {
        let (outcome, _) = run { driver in
            driver.onRequest = { request, _ in request.step == .tokenExchange ? .forwardTwice : .forward }
        }
        XCTAssertEqual(outcome.diagnosis?.mode, .tokenReplayed)
    }

    func testSlowTokenPostIsTokenExpired() {
        let (outcome, _) = run { driver in
            driver.delay = { $0 == .tokenExchange ? 121 : 0 }
        }
        XCTAssertEqual(outcome.diagnosis?.mode, .tokenExpired)
    }
}
