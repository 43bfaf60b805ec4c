import Compression
import Foundation
import HTTP
import XCTest
@testable import AuthFlow

/// Answers an intermediary made itself, diagnosed from what they carry:
/// Squid's error pages.
final class IntermediaryAnswerTests: XCTestCase {
    private func run(flow: SignInFlow = Fixture.flow(), _ configure: (inout InMemoryDriver) -> Void) -> FlowOutcome {
        var driver = InMemoryDriver(server: Fixture.server())
        configure(&driver)
        var flow = flow
        return driver.run(&flow)
    }

    // MARK: Squid

    /// Squid 5.7's page when ssl-bump cannot shake hands with the server (as seen on loopback in front of a
    /// server requiring a client certificate over TLS 1.2), trimmed.
    private static let squidPage = """
        <html><head><title>ERROR: The requested URL could not be retrieved</title></head><body>
        <p><b>Failed to establish a secure connection to [unknown]</b></p>
        <p>The system returned:</p>
        <blockquote id="data">
        <pre>[No Error] (TLS code: SQUID_TLS_ERR_CONNECT+TLS_LIB_ERR=A000410+TLS_IO_ERR=1)</pre>
        <p>Failed to establish a secure connection: error:0A000410:SSL routines::sslv3 alert handshake failure</p>
        </blockquote></body></html>
        """

    private func squid(_ error: String, holdsCertificate: Bool) -> Diagnosis? {
        run(flow: Fixture.flow { $0.holdsClientCertificate = holdsCertificate }) { driver in
            driver.onRequest = { _, _ in
                .answer(HTTPResponseHead(status: 503, fields: ["Server": "squid/5.7", "Content-Type": "text/html;charset=utf-8",
                                                               "X-Squid-Error": error]),
                        Array(Self.squidPage.utf8))
            }
        }.diagnosis
    }

    func testATLSInspectingSquidInFrontOfACertificateGatewayNamesTheCertificateThatCannotCross() throws {
        let d = try XCTUnwrap(squid("ERR_SECURE_CONNECT_FAIL 0", holdsCertificate: true))
        XCTAssertEqual(d.mode, .clientCertRequired)
        XCTAssertEqual(d.evidence, "foreign 503 from squid/5.7, not from the server (X-Squid-Error: ERR_SECURE_CONNECT_FAIL 0: "
                       + "\"Failed to establish a secure connection: error:0A000410:SSL routines::sslv3 alert handshake failure\"); "
                       + "behind it the gateway refused a TLS handshake, for want of a client certificate: a TLS-inspecting proxy "
                       + "terminates the app's TLS and cannot carry the app's certificate (this client holds one)")
        XCTAssertTrue(d.advice.contains("ssl_bump splice"), d.advice)
        XCTAssertFalse(d.advice.contains("Import the client certificate"), "the client has one: \(d.advice)")
        // TLS 1.3: the gateway's refusal comes after the handshake, and Squid sees an empty answer.
        XCTAssertEqual(squid("ERR_ZERO_SIZE_OBJECT 0", holdsCertificate: true)?.mode, .clientCertRequired)
    }

    func testSquidsOtherErrorsAreNamedAsItsOwnAnswers() {
        let noCertificate = squid("ERR_SECURE_CONNECT_FAIL 0", holdsCertificate: false)
        XCTAssertEqual(noCertificate?.mode, .transportFailure)
        XCTAssertEqual(noCertificate?.evidence.hasSuffix("its own TLS connection to the server failed"), true)
        XCTAssertEqual(squid("ERR_CONNECT_FAIL 111", holdsCertificate: false)?.mode, .transportFailure)
        let denied = squid("ERR_ACCESS_DENIED 0", holdsCertificate: false)
        XCTAssertEqual(denied?.mode, .foreignResponse)
        XCTAssertEqual(denied?.evidence.hasPrefix("foreign 503 from squid/5.7, not from the server (X-Squid-Error: ERR_ACCESS_DENIED 0"), true)
        // A field that is not Squid's code is no evidence.
        XCTAssertNotEqual(squid("nonsense", holdsCertificate: true)?.mode, .clientCertRequired)
    }

    // MARK: Caches

    /// What a cache stored: the first answer to the protected resource.
    private final class Store: @unchecked Sendable {
        var answer: (HTTPResponseHead, [UInt8])?
    }

    /// The follow-up request (after sign-in, with the session cookie) gets the cache's copy of exchange 1's 401.
    private func cachedFollowUp(_ edit: @escaping (inout HTTPResponseHead) -> Void = { _ in }) -> FlowOutcome {
        let store = Store()
        return run { driver in
            driver.delay = { $0 == .followUp ? 31 : 0 }
            driver.onResponse = { request, head, body in
                if request.step == .protectedRequest, store.answer == nil {
                    edit(&head)
                    store.answer = (head, body)
                }
            }
            driver.onRequest = { request, _ in
                guard request.step == .followUp, let (head, body) = store.answer else { return .forward }
                var copy = head
                copy.fields.append("Via", "1.1 varnish (Varnish/7.1)")
                return .answer(copy, body)
            }
        }
    }

    func testACachedAnswerIsNamedAsACopyOfTheEarlierExchange() throws {
        let outcome = cachedFollowUp()
        let d = try XCTUnwrap(outcome.diagnosis, "\(outcome.steps.map(\.checks))")
        XCTAssertEqual(d.mode, .cachedResponse)
        XCTAssertEqual(d.step, .followUp)
        XCTAssertTrue(d.evidence.contains(": a copy of the server's answer to exchange 1 (another request, 31 s earlier), "
                                          + "served by the intermediary: a cached response (Via: 1.1 varnish (Varnish/7.1))"),
                      d.evidence)
        XCTAssertFalse(d.evidence.contains("the server did not send it"), d.evidence)
        XCTAssertFalse(d.advice.contains("maintenance"), d.advice)
        XCTAssertTrue(d.advice.contains("caching"), d.advice)
        XCTAssertFalse(d.evidence.contains("WARNING"), "exchange 1 had no cookies and the copy sets none: \(d.evidence)")
    }

    func testACachedCopyCarryingASessionIsAWarning() throws {
        let outcome = cachedFollowUp { head in head.fields.append("Set-Cookie", "JSESSIONID=someone-else; Path=/suite") }
        let d = try XCTUnwrap(outcome.diagnosis)
        XCTAssertEqual(d.mode, .cachedResponse)
        XCTAssertTrue(d.evidence.contains("WARNING: the copy carries a session (Set-Cookie): one user's session handed to another"),
                      d.evidence)
    }

    /// With or without `--expect-echo`: the echo of another request's trace is
    /// the mock server's field, so even the run's first answer is known a copy
    /// (a second app behind a cache that stored the first app's 401).
    /// A signed-in request (the follow-up, with the session cookie) answered
    /// with another client's copy: answers shared across sessions, said loudly.
    func testAnotherClientsCopyOfASignedInRequestIsAWarning() throws {
        let outcome = run { driver in
            driver.onRequest = { request, _ in
                guard request.step == .followUp else { return .forward }
                return .answer(HTTPResponseHead(status: 200, fields: ["Content-Type": "application/json",
                                                                      SignInFlow.traceFieldName: "otherrun-5"]),
                               Array("{}".utf8))
            }
        }
        let d = try XCTUnwrap(outcome.diagnosis)
        XCTAssertEqual(d.mode, .cachedResponse)
        XCTAssertEqual(d.step, .followUp)
        XCTAssertTrue(d.evidence.hasSuffix("WARNING: this request carried a session (cookies) and got another client's answer: "
                                           + "one user's answers handed to another"), d.evidence)
    }

    func testAnotherClientsCopyIsNamedWithItsAge() throws {
        for echo in [true, false] {
            try anotherClientsCopyIsNamedWithItsAge(expectingEcho: echo)
        }
    }

    private func anotherClientsCopyIsNamedWithItsAge(expectingEcho: Bool) throws {
        let outcome = run(flow: Fixture.flow { $0.expectsTraceEcho = expectingEcho }) { driver in
            driver.onRequest = { request, _ in
                var fields: HTTPFields = ["Content-Type": "application/json", "Age": "12",
                                          SignInFlow.traceFieldName: "otherrun-1"]
                fields.append("Server", "intact-mock/1")
                return .answer(HTTPResponseHead(status: 401, fields: fields), Array("{}".utf8))
            }
        }
        let d = try XCTUnwrap(outcome.diagnosis)
        XCTAssertEqual(d.mode, .cachedResponse)
        XCTAssertTrue(d.evidence.contains("a copy of the server's answer to a request this client never sent "
                                          + "(Intact-Trace: otherrun-1, another client's), served by the intermediary: "
                                          + "a cached response (12 s in the cache, its Age field)"), d.evidence)
        XCTAssertFalse(d.evidence.contains("WARNING"), "the first request has no session: \(d.evidence)")
    }

    // MARK: Redirects to the same resource

    private func redirect(to location: String, at step: FlowStep = .protectedRequest, echo: Bool = true) -> Diagnosis? {
        run(flow: Fixture.flow { $0.expectsTraceEcho = echo }) { driver in
            driver.onRequest = { request, _ in
                guard request.step == step else { return .forward }
                return .answer(HTTPResponseHead(status: 301, fields: ["content-length": "0", "location": location]), [])
            }
        }.diagnosis
    }

    func testARedirectToTheSameResourceOverHTTPSIsTheIntermediaryAnsweringItself() throws {
        // The app asked https://mysite.test:8443/suite/rest/a/sites/latest.
        let d = try XCTUnwrap(redirect(to: "https://mysite.test/suite/rest/a/sites/latest"))
        XCTAssertEqual(d.mode, .foreignResponse)
        XCTAssertEqual(d.evidence, "301 to https://mysite.test/suite/rest/a/sites/latest: a redirect to the same resource "
                       + "on port the default, from an intermediary, not the server's answer")
        XCTAssertTrue(d.advice.contains("http-request redirect scheme https"), d.advice)
        let http = try XCTUnwrap(redirect(to: "http://mysite.test:8443/suite/rest/a/sites/latest"))
        XCTAssertTrue(http.evidence.contains("a redirect to the same resource over http,"), http.evidence)
        let loop = try XCTUnwrap(redirect(to: "/suite/rest/a/sites/latest"))
        XCTAssertTrue(loop.evidence.contains(": a redirect to the very URL requested (a loop: "), loop.evidence)
        // At a later step too (the login page redirected to itself over another scheme).
        let later = run { driver in
            driver.onRequest = { request, _ in
                guard request.step == .loginPage else { return .forward }
                let target = "http://mysite.test:8443" + request.url.pathAndQuery
                return .answer(HTTPResponseHead(status: 301, fields: ["content-length": "0", "location": target]), [])
            }
        }.diagnosis
        XCTAssertEqual(later?.mode, .foreignResponse)
        XCTAssertEqual(later?.step, .loginPage)
    }

    func testARedirectElsewhereIsStillAnAuthenticationRedirect() {
        XCTAssertEqual(redirect(to: "https://sso.mysite.test/login?next=%2Fsuite", echo: false)?.mode, .authRedirect)
        // Another path on the same origin is a login page too, not the same resource.
        XCTAssertEqual(redirect(to: "https://mysite.test:8443/login", echo: false)?.mode, .authRedirect)
        // Against the echoing mock server, a redirect elsewhere without the echo is a gateway's own sign-in.
        XCTAssertEqual(redirect(to: "https://mysite.test:8443/login")?.mode, .gatewayCookie)
        // Without the echo expected, the same resource is still named.
        XCTAssertEqual(redirect(to: "https://mysite.test/suite/rest/a/sites/latest", echo: false)?.mode, .foreignResponse)
    }
}

/// What the client compares beyond the step's own checks: the coding the
/// server states against the one that arrived, and an HTTP/3 advertisement.
final class ArrivalComparisonTests: XCTestCase {
    func testABodyTheServerEncodedThatArrivesDecodedIsCompress() throws {
        // Caddy asked the server for gzip on the app's behalf and decoded the answer.
        var driver = InMemoryDriver(server: Fixture.server { $0.gzipsResponses = true })
        driver.onResponse = { _, head, body in
            guard head.fields["Content-Encoding"] != nil else { return }
            body = (try? Decompressor.decompress(body, format: .gzip, outputLimit: 1 << 20)) ?? body
            var fields = HTTPFields()
            for field in head.fields where field.lowercasedName != "content-encoding" && field.lowercasedName != "content-length" {
                fields.append(field.name, field.value)
            }
            head.fields = fields
        }
        var flow = Fixture.flow()
        let outcome = driver.run(&flow)
        let d = try XCTUnwrap(outcome.diagnosis)
        XCTAssertEqual(d.mode, .compress)
        XCTAssertTrue(d.evidence.hasPrefix("the server sent its body gzip-encoded (Intact-Content-Encoding: gzip) but it arrived "
                                           + "unencoded"), d.evidence)
    }

    func testAnHTTP3AdvertisementIsAWarning() {
        var driver = InMemoryDriver(server: Fixture.server())
        driver.onResponse = { _, head, _ in head.fields.append("Alt-Svc", "h3=\":443\"; ma=2592000") }
        var flow = Fixture.flow()
        let outcome = driver.run(&flow)
        XCTAssertTrue(outcome.succeeded, "a warning, not a failure")
        let notes = outcome.steps.flatMap(\.checks).filter { $0.kind == .note }.map(\.message)
        XCTAssertTrue(notes.contains { $0.hasPrefix("WARNING: Alt-Svc: h3=\":443\"; ma=2592000: the intermediary advertises HTTP/3") },
                      "\(notes)")
        XCTAssertFalse(AltSvc.advertisesHTTP3("h2=\":443\""))
        XCTAssertTrue(AltSvc.advertisesHTTP3("h2=\":443\", h3-29=\":443\""))
    }

    func testAnErrorPageInPlaceOfThe401IsHTML401WithOrWithoutTheEcho() throws {
        // Apache ProxyErrorOverride: the server's 401 JSON replaced by Apache's page, the echo gone with it.
        for echo in [true, false] {
            var driver = InMemoryDriver(server: Fixture.server())
            driver.onResponse = { request, head, body in
                guard request.step == .protectedRequest else { return }
                head = HTTPResponseHead(status: 401, fields: ["Server": "Apache/2.4.57", "Content-Type": "text/html; charset=iso-8859-1"])
                body = Array("<!DOCTYPE HTML PUBLIC><html><head><title>401 Unauthorized</title></head></html>".utf8)
            }
            var flow = Fixture.flow { $0.expectsTraceEcho = echo }
            let d = try XCTUnwrap(driver.run(&flow).diagnosis)
            XCTAssertEqual(d.mode, .html401, "expect-echo \(echo): \(d.evidence)")
        }
    }
}
