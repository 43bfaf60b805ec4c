import Browser
import HTTP
import XCTest
@testable import AuthFlow
@testable import SignIn

/// What Chromium's run becomes in the flow when HSTS upgraded a page
/// request, without Chromium: a login page redirected to http and turned
/// back into https by the browser is `browser-hsts` at the login page.
final class BrowserStepsHSTSTests: XCTestCase {
    private let origin = "https://intact-hsts.test:8443"

    /// A flow past step 1 (the 401 with contextUrl and tokenUrl), waiting for the browser's login page.
    private func flowAtTheLoginPage(expectsTraceEcho: Bool) throws -> SignInFlow {
        var configuration = SignInFlow.Configuration(resourceURL: try XCTUnwrap(AbsoluteURL(origin + "/suite/rest/x")))
        configuration.expectsTraceEcho = expectsTraceEcho
        var flow = SignInFlow(configuration: configuration)
        var fields = HTTPFields([HTTPField(name: "Content-Type", value: "application/json")])
        if expectsTraceEcho, case .send(let request) = flow.next(), let trace = request.traceID {
            fields.append(SignInFlow.traceFieldName, trace)
        }
        let body = #"{"contextUrl":"\#(origin)/suite","tokenUrl":"\#(origin)/suite/mobileAuthTokenConsumer"}"#
        flow.receive(HTTPResponseHead(status: 401, fields: fields), body: Array(body.utf8), elapsed: 0.01)
        XCTAssertTrue(flow.awaitsBrowserLoginPage, "\(flow.results.last?.checks ?? [])")
        return flow
    }

    private func redirectedRun() -> BrowserRun {
        let login = origin + "/suite?codeChallenge=C&scheme=com.appian.tempo"
        let http = login.replacingOccurrences(of: "https://", with: "http://")
        var run = BrowserRun()
        var first = BrowserExchange(requestID: "L", url: login, method: "GET", resourceType: "Document", isMainDocument: true)
        first.status = 302
        first.responseFields = [("location", http), ("strict-transport-security", "max-age=300")]
        first.redirectedTo = http
        var upgraded = BrowserExchange(requestID: "L", url: http, method: "GET", resourceType: "Document", isMainDocument: true)
        upgraded.status = 307
        upgraded.responseFields = [("Location", login), ("Non-Authoritative-Reason", "HSTS")]
        upgraded.redirectedTo = login
        var page = BrowserExchange(requestID: "L", url: login, method: "GET", resourceType: "Document", isMainDocument: true)
        page.status = 200
        page.responseFields = [("content-type", "text/html")]
        run.exchanges = [first, upgraded, page]
        run.loginPage = 2
        run.loginPageBody = Array("<form method=\"post\" action=\"/suite/auth\"></form>".utf8)
        run.findings = [.hstsUpgrade(from: http, to: login)]
        run.callbackURL = "com.appian.tempo://intact-hsts.test:8443/suite?result=login&token=T"
        return run
    }

    func testAnUpgradedRedirectOfTheLoginPageIsBrowserHSTSThere() throws {
        var flow = try flowAtTheLoginPage(expectsTraceEcho: true)
        let paths = AgentPaths(app: "directly", browser: "directly", differ: false, appHasCertificate: false)
        BrowserSteps.apply(redirectedRun(), to: &flow, paths: paths, elapsed: 0.5)
        guard case .finished(let outcome) = flow.next() else { return XCTFail("the run goes on") }
        let diagnosis = try XCTUnwrap(outcome.diagnosis)
        XCTAssertEqual(diagnosis.mode, .browserHSTS)
        XCTAssertEqual(diagnosis.step, .loginPage)
        XCTAssertEqual(diagnosis.sentence, .unmodified)
        XCTAssertEqual(diagnosis.evidence,
                       "HSTS made the browser use https: \(origin)/suite?… was answered with 302 to http://intact-hsts.test:8443/suite?…, "
                       + "and the browser turned that into https itself (an internal 307, Non-Authoritative-Reason: HSTS) because the "
                       + "same answer set Strict-Transport-Security: max-age=300; the mock server sends neither an http URL nor "
                       + "Strict-Transport-Security: both came from the intermediary; the sign-in went on only because the browser "
                       + "honoured that field: a browser that never saw it goes to http://intact-hsts.test:8443/suite?… in plain http")
    }

    func testAgainstAnotherServerNothingIsSaidOfTheMockServer() throws {
        var flow = try flowAtTheLoginPage(expectsTraceEcho: false)
        let paths = AgentPaths(app: "directly", browser: "directly", differ: false, appHasCertificate: false)
        BrowserSteps.apply(redirectedRun(), to: &flow, paths: paths, elapsed: 0.5)
        guard case .finished(let outcome) = flow.next() else { return XCTFail("the run goes on") }
        XCTAssertEqual(outcome.diagnosis?.mode, .browserHSTS)
        XCTAssertEqual(outcome.diagnosis?.sentence, FailureMode.browserHSTS.sentence)
        XCTAssertFalse(outcome.diagnosis?.evidence.contains("mock server") ?? true)
    }
}
