import ConfigurationFile
import Foundation
import XCTest
@testable import Browser

/// `BrowserSignIn` driven by scripted DevTools messages: no process.
final class BrowserSignInTests: XCTestCase {
    private let loginURL = "https://127.0.0.1:8443/suite?codeChallenge=C&scheme=com.appian.tempo"

    private func message(_ text: String) -> CDPMessage {
        do {
            return try CDPMessage.parse(Array(text.utf8))
        } catch {
            preconditionFailure("bad script line \(text): \(error)")
        }
    }

    private func event(_ method: String, _ params: String) -> CDPMessage {
        message(#"{"method":"\#(method)","params":\#(params),"sessionId":"S"}"#)
    }

    private func answer(_ id: Int, _ result: String = "{}") -> CDPMessage {
        message(#"{"id":\#(id),"result":\#(result),"sessionId":"S"}"#)
    }

    /// A session that has opened the login URL: returns it and the commands so far.
    private func opened(trace: Bool = true, fetchRefused: Bool = false) -> (BrowserSignIn, [CDPCommand]) {
        var session = BrowserSignIn(task: BrowserSignIn.Task(loginURL: loginURL, callbackScheme: "com.appian.tempo",
                                                             username: "demo", password: "secret",
                                                             traceIDs: trace ? ["r-2", "r-3"] : []))
        var sent = session.start()
        XCTAssertEqual(sent.map(\.method), ["Target.createTarget"])
        sent += session.receive(message(#"{"id":1,"result":{"targetId":"T"}}"#))
        sent += session.receive(message(#"{"id":2,"result":{"sessionId":"S"}}"#))
        let enables = sent.filter { $0.method.hasSuffix(".enable") }
        XCTAssertEqual(enables.map(\.method), ["Network.enable", "Page.enable", "Runtime.enable", "Audits.enable"] + (trace ? ["Fetch.enable"] : []))
        XCTAssertTrue(enables.allSatisfy { $0.sessionID == "S" })
        for command in enables {
            if command.method == "Fetch.enable" && fetchRefused {
                sent += session.receive(message(#"{"id":\#(command.id),"error":{"code":-32601,"message":"'Fetch.enable' wasn't found"},"sessionId":"S"}"#))
            } else {
                sent += session.receive(answer(command.id))
            }
        }
        XCTAssertEqual(sent.last?.method, "Page.navigate")
        XCTAssertTrue(String(decoding: sent.last!.encoded, as: UTF8.self).contains(#""url":"https://127.0.0.1:8443/suite?codeChallenge=C&scheme=com.appian.tempo""#))
        return (session, sent)
    }

    /// Loads the login page (200, a cookie, the body) and answers the form filler with `report`.
    private func loadLoginPage(_ session: inout BrowserSignIn, report: String, cookieBlocked: Bool = false) -> [CDPCommand] {
        var sent = session.receive(answer(8, #"{"frameId":"T","loaderId":"L"}"#))
        sent += session.receive(event("Fetch.requestPaused", #"{"requestId":"F1","request":{"url":"\#(loginURL)","method":"GET","headers":{"User-Agent":"HeadlessChrome"}},"frameId":"T","resourceType":"Document","networkId":"L"}"#))
        sent += session.receive(event("Network.requestWillBeSent", #"{"requestId":"L","loaderId":"L","frameId":"T","type":"Document","request":{"url":"\#(loginURL)","method":"GET","headers":{"User-Agent":"HeadlessChrome"}}}"#))
        sent += session.receive(event("Network.requestWillBeSentExtraInfo", #"{"requestId":"L","headers":{":authority":"127.0.0.1:8443","accept":"text/html","intact-trace":"r-2","sec-fetch-mode":"navigate"}}"#))
        let blocked = cookieBlocked ? #"[{"blockedReasons":["SameSiteNoneInsecure"],"cookieLine":"__intactLoginTx=x; Path=/suite; SameSite=None","cookie":{"name":"__intactLoginTx"}}]"# : "[]"
        sent += session.receive(event("Network.responseReceivedExtraInfo", #"{"requestId":"L","statusCode":200,"headers":{"content-type":"text/html","set-cookie":"__intactLoginTx=x; Path=/suite"},"blockedCookies":\#(blocked)}"#))
        sent += session.receive(event("Network.responseReceived", #"{"requestId":"L","type":"Document","response":{"url":"\#(loginURL)","status":200,"protocol":"h2","headers":{"content-type":"text/html"}}}"#))
        sent += session.receive(event("Network.loadingFinished", #"{"requestId":"L"}"#))
        XCTAssertFalse(sent.contains { $0.method == "Network.getResponseBody" }, "the body is read once the page fired load")
        sent += session.receive(event("Page.loadEventFired", #"{"timestamp":1}"#))
        guard let read = sent.last, read.method == "Network.getResponseBody" else {
            XCTFail("no body read: \(sent.map(\.method))")
            return sent
        }
        let body = Data("<form method=POST>".utf8).base64EncodedString()
        sent += session.receive(answer(read.id, #"{"body":"\#(body)","base64Encoded":true}"#))
        guard let evaluate = sent.last, evaluate.method == "Runtime.evaluate" else {
            XCTFail("no form fill: \(sent.map(\.method))")
            return sent
        }
        let quoted = BrowserFormScript.literal(report)
        sent += session.receive(answer(evaluate.id, #"{"result":{"type":"string","value":\#(quoted)}}"#))
        return sent
    }

    private let fullForm = #"{"forms":1,"fields":["csrf:hidden","un:text","pw:password"],"user":"un","password":"pw","submitted":true,"title":"Sign in"}"#

    func testCatchesTheCallbackAfterFillingTheForm() throws {
        var (session, _) = opened()
        let sent = loadLoginPage(&session, report: fullForm)
        let continued = sent.first { $0.method == "Fetch.continueRequest" }
        XCTAssertTrue(String(decoding: try XCTUnwrap(continued).encoded, as: UTF8.self)
            .contains(#"{"name":"Intact-Trace","value":"r-2"}"#), "the page request gets the first trace id")
        XCTAssertFalse(session.isFinished)
        _ = session.receive(event("Fetch.requestPaused", #"{"requestId":"F2","request":{"url":"https://127.0.0.1:8443/favicon.ico","method":"GET","headers":{}},"frameId":"T","resourceType":"Image"}"#))
        let post = session.receive(event("Fetch.requestPaused", #"{"requestId":"F3","request":{"url":"https://127.0.0.1:8443/suite/auth","method":"POST","headers":{}},"frameId":"T","resourceType":"Document"}"#))
        XCTAssertTrue(String(decoding: post[0].encoded, as: UTF8.self).contains(#""value":"r-3""#))
        _ = session.receive(event("Network.requestWillBeSent", #"{"requestId":"P","frameId":"T","type":"Document","request":{"url":"https://127.0.0.1:8443/suite/auth","method":"POST","headers":{},"postDataEntries":[{"bytes":"\#(Data("un=demo".utf8).base64EncodedString())"}]}}"#))
        _ = session.receive(event("Network.responseReceivedExtraInfo", #"{"requestId":"P","statusCode":302,"headers":{"location":"com.appian.tempo://127.0.0.1/suite?result=login&token=T"},"headersText":"HTTP/1.1 302 Found\r\nLocation: com.appian.tempo://127.0.0.1/suite?result=login&token=T\r\n\r\n"}"#))
        _ = session.receive(event("Network.requestWillBeSent", #"{"requestId":"P","frameId":"T","type":"Document","request":{"url":"com.appian.tempo://127.0.0.1/suite?result=login&token=T","method":"GET","headers":{}},"redirectResponse":{"status":302,"protocol":"http/1.1","headers":{"Location":"com.appian.tempo://127.0.0.1/suite?result=login&token=T"}}}"#))
        XCTAssertTrue(session.isFinished)
        let run = session.run
        XCTAssertNil(run.failure)
        XCTAssertEqual(run.callbackURL, "com.appian.tempo://127.0.0.1/suite?result=login&token=T")
        XCTAssertEqual(run.trace, .fetchInterception)
        let login = try XCTUnwrap(run.loginPageExchange)
        XCTAssertEqual(login.traceID, "r-2")
        XCTAssertEqual(login.protocolName, "h2")
        XCTAssertTrue(login.requestFieldsAreFinal)
        XCTAssertEqual(login.requestFields.map(\.name), [":authority", "accept", "intact-trace", "sec-fetch-mode"])
        XCTAssertEqual(run.loginPageBody, Array("<form method=POST>".utf8))
        let credentials = try XCTUnwrap(run.credentialsExchange)
        XCTAssertEqual(credentials.status, 302)
        XCTAssertEqual(credentials.requestBody, Array("un=demo".utf8))
        XCTAssertEqual(credentials.responseHeadText?.hasPrefix("HTTP/1.1 302 Found"), true)
        XCTAssertEqual(run.form?.usernameField, "un")
        XCTAssertTrue(session.receive(event("Page.loadEventFired", "{}")).isEmpty, "nothing after the end")
    }

    func testAPageWithoutAFormEndsTheRunNamingThePage() {
        var (session, _) = opened()
        _ = loadLoginPage(&session, report: #"{"forms":0,"fields":[],"user":null,"password":null,"submitted":false,"title":"Maintenance"}"#)
        XCTAssertTrue(session.isFinished)
        XCTAssertEqual(session.run.failure, .noForm(url: loginURL, status: 200, title: "Maintenance"))
        XCTAssertTrue("\(session.run.failure!)".contains("shows no form to sign in with"))
    }

    func testAFormWithoutAPasswordFieldIsFilledAsFarAsPossibleAndTheFieldNamed() {
        var (session, _) = opened()
        _ = loadLoginPage(&session, report: #"{"forms":1,"fields":["login:email","otp:text"],"user":"login","password":null,"submitted":false,"title":""}"#)
        XCTAssertEqual(session.run.failure, .missingField("password", fields: ["login:email", "otp:text"], filled: ["login"]))
        XCTAssertEqual("\(session.run.failure!)", "the sign-in form has no password field (its fields: login:email, otp:text; filled: login)")
    }

    func testAFormWithoutAUserNameFieldNamesIt() {
        var (session, _) = opened()
        _ = loadLoginPage(&session, report: #"{"forms":1,"fields":["pw:password"],"user":null,"password":"pw","submitted":false,"title":""}"#)
        XCTAssertEqual(session.run.failure, .missingField("user-name", fields: ["pw:password"], filled: ["pw"]))
    }

    func testANavigationErrorEndsTheRunWithTheNetError() {
        var (session, _) = opened()
        _ = session.receive(answer(8, #"{"frameId":"T","errorText":"net::ERR_PROXY_CONNECTION_FAILED"}"#))
        XCTAssertEqual(session.run.failure, .navigationFailed(url: loginURL, netError: "net::ERR_PROXY_CONNECTION_FAILED"))
    }

    func testALoginPageThatFailsToLoadNamesItsNetError() {
        var (session, _) = opened()
        _ = session.receive(event("Network.requestWillBeSent", #"{"requestId":"L","frameId":"T","type":"Document","request":{"url":"\#(loginURL)","method":"GET","headers":{}}}"#))
        _ = session.receive(event("Network.loadingFailed", #"{"requestId":"L","errorText":"net::ERR_BAD_SSL_CLIENT_AUTH_CERT","type":"Document"}"#))
        XCTAssertEqual(session.run.failure, .navigationFailed(url: loginURL, netError: "net::ERR_BAD_SSL_CLIENT_AUTH_CERT"))
        XCTAssertEqual(session.run.loginPageExchange?.netError, "net::ERR_BAD_SSL_CLIENT_AUTH_CERT")
    }

    func testABrowserThatEndsSaysWhatItDidLast() {
        var (session, _) = opened()
        _ = session.receive(event("Network.requestWillBeSent", #"{"requestId":"L","frameId":"T","type":"Document","request":{"url":"\#(loginURL)","method":"GET","headers":{}}}"#))
        session.browserEnded(termination: "was killed by signal 9")
        XCTAssertEqual(session.run.failure, .browserEnded(termination: "was killed by signal 9", lastActivity: "requested GET \(loginURL)"))
    }

    func testATimeoutSaysWhatTheBrowserDidLast() {
        var session = BrowserSignIn(task: BrowserSignIn.Task(loginURL: loginURL, callbackScheme: "s", username: "u", password: "p"))
        _ = session.start()
        session.timedOut(seconds: 2)
        XCTAssertEqual("\(session.run.failure!)", "the browser did not reach the callback within 2.0 s; last it started")
        session.browserEnded(termination: nil)
        XCTAssertEqual(session.run.failure, .timedOut(seconds: 2, lastActivity: "started"), "the first end stays")
    }

    func testARefusedCookieIsAFinding() {
        var (session, _) = opened()
        _ = loadLoginPage(&session, report: fullForm, cookieBlocked: true)
        XCTAssertEqual(session.run.findings, [.cookieRefused(BlockedCookie(name: "__intactLoginTx", reasons: ["SameSiteNoneInsecure"],
                                                                           line: "__intactLoginTx=x; Path=/suite; SameSite=None"), url: loginURL)])
        XCTAssertEqual(session.run.loginPageExchange?.blockedCookies.first?.explanation, "SameSite=None without Secure")
    }

    func testACSPBlockWaitsForTheAuditsIssueThenEnds() {
        var (session, _) = opened()
        _ = loadLoginPage(&session, report: fullForm)
        _ = session.receive(event("Network.requestWillBeSent", #"{"requestId":"P","frameId":"T","type":"Document","request":{"url":"https://127.0.0.1:8443/suite/auth","method":"POST","headers":{}}}"#))
        let barrier = session.receive(event("Network.loadingFailed", #"{"requestId":"P","errorText":"net::ERR_ABORTED","type":"Document","canceled":true}"#))
        XCTAssertEqual(barrier.map(\.method), ["Runtime.evaluate"])
        XCTAssertFalse(session.isFinished)
        _ = session.receive(event("Audits.issueAdded", #"{"issue":{"code":"ContentSecurityPolicyIssue","details":{"contentSecurityPolicyIssueDetails":{"blockedURL":"https://127.0.0.1:8443/suite/auth","violatedDirective":"form-action"}}}}"#))
        _ = session.receive(answer(barrier[0].id, #"{"result":{"type":"number","value":0}}"#))
        XCTAssertTrue(session.isFinished)
        XCTAssertEqual(session.run.failure, .navigationFailed(url: "https://127.0.0.1:8443/suite/auth", netError: "net::ERR_ABORTED"))
        guard case .contentSecurityPolicy(let directive, let blocked, _)? = session.run.findings.first else {
            return XCTFail("no CSP finding: \(session.run.findings)")
        }
        XCTAssertEqual(directive, "form-action")
        XCTAssertEqual(blocked, "https://127.0.0.1:8443/suite/auth")
    }

    func testWithoutFetchTheRunGoesOnUntraced() {
        var (session, sent) = opened(fetchRefused: true)
        XCTAssertEqual(sent.last?.method, "Page.navigate")
        guard case .unavailable(let reason) = session.run.trace else { return XCTFail("\(session.run.trace)") }
        XCTAssertTrue(reason.contains("Fetch.enable failed"))
        XCTAssertFalse(session.isFinished)
        _ = session.receive(event("Page.loadEventFired", "{}"))
    }

    func testWithTracingOffNoInterception() {
        let (session, sent) = opened(trace: false)
        XCTAssertFalse(sent.contains { $0.method == "Fetch.enable" })
        XCTAssertEqual(session.run.trace, .off)
    }

    func testARefusedCommandIsAProtocolError() {
        var session = BrowserSignIn(task: BrowserSignIn.Task(loginURL: loginURL, callbackScheme: "s", username: "u", password: "p"))
        _ = session.start()
        _ = session.receive(message(#"{"id":1,"error":{"code":-32000,"message":"Failed to open a new tab"}}"#))
        XCTAssertEqual("\(session.run.failure!)", "DevTools: Target.createTarget refused: Failed to open a new tab (DevTools error -32000)")
    }

    func testEventsOfAnotherSessionAreIgnored() {
        var (session, _) = opened()
        _ = session.receive(message(#"{"method":"Inspector.targetCrashed","params":{},"sessionId":"OTHER"}"#))
        XCTAssertFalse(session.isFinished)
        _ = session.receive(event("Inspector.targetCrashed", "{}"))
        XCTAssertEqual(session.run.failure, .pageCrashed(lastActivity: "opened \(loginURL)"))
    }

    func testAnHSTSUpgradeIsAFinding() {
        var (session, _) = opened()
        _ = session.receive(event("Network.requestWillBeSent", #"{"requestId":"L","frameId":"T","type":"Document","request":{"url":"http://h.test/suite","method":"GET","headers":{}}}"#))
        _ = session.receive(event("Network.requestWillBeSent", #"{"requestId":"L","frameId":"T","type":"Document","request":{"url":"https://h.test/suite","method":"GET","headers":{}},"redirectResponse":{"status":307,"headers":{"Location":"https://h.test/suite","Non-Authoritative-Reason":"HSTS"}}}"#))
        XCTAssertEqual(session.run.findings, [.hstsUpgrade(from: "http://h.test/suite", to: "https://h.test/suite")])
        XCTAssertEqual("\(session.run.findings[0])", "HSTS made the browser use https: http://h.test/suite became https://h.test/suite")
    }

    func testTheLoginPagesRedirectChainThroughHSTSKeepsTheLoginPagesTraceAndEachHopsOwnStatus() throws {
        var (session, _) = opened()
        _ = session.receive(answer(8, #"{"frameId":"T","loaderId":"L"}"#))
        let http = "http://h.test:8443/suite?c=1", https = "https://h.test:8443/suite?c=1"
        var continued: [CDPCommand] = []
        func paused(_ id: String, _ url: String) {
            continued += session.receive(event("Fetch.requestPaused", #"{"requestId":"\#(id)","request":{"url":"\#(url)","method":"GET","headers":{}},"frameId":"T","resourceType":"Document","networkId":"L"}"#))
        }
        paused("F1", loginURL)
        _ = session.receive(event("Network.requestWillBeSent", #"{"requestId":"L","frameId":"T","type":"Document","request":{"url":"\#(loginURL)","method":"GET","headers":{}}}"#))
        _ = session.receive(event("Network.responseReceivedExtraInfo", #"{"requestId":"L","statusCode":302,"headers":{"location":"\#(http)","strict-transport-security":"max-age=300"}}"#))
        _ = session.receive(event("Network.requestWillBeSent", #"{"requestId":"L","frameId":"T","type":"Document","request":{"url":"\#(http)","method":"GET","headers":{}},"redirectResponse":{"status":302,"headers":{"location":"\#(http)"}}}"#))
        paused("F2", http)
        _ = session.receive(event("Network.requestWillBeSent", #"{"requestId":"L","frameId":"T","type":"Document","request":{"url":"\#(https)","method":"GET","headers":{}},"redirectResponse":{"status":307,"headers":{"Location":"\#(https)","Non-Authoritative-Reason":"HSTS"}}}"#))
        paused("F3", https)
        _ = session.receive(event("Network.responseReceivedExtraInfo", #"{"requestId":"L","statusCode":200,"headers":{"content-type":"text/html"}}"#))
        _ = session.receive(event("Network.loadingFinished", #"{"requestId":"L"}"#))
        let read = session.receive(event("Page.loadEventFired", "{}"))
        XCTAssertEqual(read.map(\.method), ["Network.getResponseBody"], "the chain's last hop is the login page")
        XCTAssertEqual(session.run.loginPage, 2)
        XCTAssertEqual(session.run.exchanges.map(\.status), [302, 307, 200], "the final head does not land on the internal 307")
        XCTAssertEqual(session.run.findings, [.hstsUpgrade(from: http, to: https)])
        let traces = continued.filter { $0.method == "Fetch.continueRequest" }.map { String(decoding: $0.encoded, as: UTF8.self) }
        XCTAssertEqual(traces.count, 3)
        XCTAssertTrue(traces.allSatisfy { $0.contains(#"{"name":"Intact-Trace","value":"r-2"}"#) }, "\(traces)")
    }

    func testAFormPostingToHTTPThatTheBrowserRefusesToSubmitIsNamed() throws {
        var (session, _) = opened()
        _ = loadLoginPage(&session, report: fullForm)
        let action = "http://h.test:8443/suite/auth"
        _ = session.receive(event("Audits.issueAdded", #"{"issue":{"code":"MixedContentIssue","details":{"mixedContentIssueDetails":{"resolutionStatus":"MixedContentWarning","insecureURL":"\#(action)","mainResourceURL":"\#(loginURL)"}}}}"#))
        // No request of the submission: the insecure-form warning stops it, then the error page commits.
        _ = session.receive(event("Network.loadingFailed", #"{"requestId":"X","errorText":"net::ERR_BLOCKED_BY_CLIENT","blockedReason":"other"}"#))
        XCTAssertFalse(session.isFinished, "a failure of a request it never saw does not end the run")
        _ = session.receive(event("Page.frameNavigated", #"{"frame":{"id":"T","url":"chrome-error://chromewebdata/","unreachableUrl":"\#(action)"}}"#))
        XCTAssertTrue(session.isFinished)
        XCTAssertEqual(session.run.failure, .insecureFormBlocked(action: action, page: loginURL))
        XCTAssertEqual(session.run.findings, [.mixedContent(insecureURL: action, page: loginURL)])
    }
}
