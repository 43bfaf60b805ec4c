import AuthFlow
import HTTP
import XCTest
@testable import Faults

/// Head actions, answers and gates, through the per-exchange API.
final class ExchangeFaultsTests: XCTestCase {
    private func rule(_ leg: String, _ actions: String, match: String = "") -> FaultEngine {
        Fixture.engine("{\"rules\": [{\"name\": \"r\", \"match\": {\"leg\": \"\(leg)\"\(match)}, \"actions\": [\(actions)]}]}")
    }

    func testHeaderActionsEditTheRequestHead() throws {
        let engine = rule("request", """
            {"action": "remove-header", "name": "x-trace"},
            {"action": "add-header", "name": "Via", "value": "1.1 gw"},
            {"action": "set-header", "name": "accept", "value": "*/*"},
            {"action": "rename-header", "name": "user-agent", "to": "USER-AGENT"},
            {"action": "header-case", "name": "content-type", "style": "upper"}
            """)
        let request = Fixture.request("GET", "/suite/rest/a", [("X-Trace", "1"), ("Accept", "a"), ("User-Agent", "app"),
                                                               ("Accept", "b"), ("Content-Type", "text/plain")])
        let x = Exchange(engine, request: request)
        let head: HTTPRequestHead = try XCTUnwrap(x.requestOut.forwardedHead())
        XCTAssertEqual(head.fields.map(\.description), ["Host: app.example.test", "Accept: */*", "USER-AGENT: app",
                                                        "CONTENT-TYPE: text/plain", "Via: 1.1 gw"])
        XCTAssertTrue(x.requestOut.ended())
        XCTAssertEqual(x.faults.applied.map(\.action), [.removeHeader, .addHeader, .setHeader, .renameHeader, .headerCase])
        XCTAssertEqual(x.faults.applied.first, AppliedFault(rule: "r", action: .removeHeader, leg: .request, change: "removed 1 x-trace field"))
    }

    func testActionsThatFindNothingRecordNothing() {
        let engine = rule("request", #"{"action": "remove-header", "name": "Cookie"}"#)
        let x = Exchange(engine, request: Fixture.request("GET", "/"))
        XCTAssertEqual(x.requestOut, [.forward(.head(Fixture.request("GET", "/"))), .forward(.end(trailers: nil))])
        XCTAssertEqual(x.faults.applied, [])
    }

    func testHeaderCaseTitleOnEveryField() throws {
        let engine = rule("response", #"{"action": "header-case", "style": "title"}"#)
        let x = Exchange(engine, request: Fixture.request("GET", "/"), response: Fixture.response(200, [("content-TYPE", "a"), ("x-csrf-token", "b")], body: ""))
        let head: HTTPResponseHead = try XCTUnwrap(x.responseOut.forwardedHead())
        XCTAssertEqual(head.fields.map(\.name), ["Content-Type", "X-Csrf-Token", "Content-Length"])
    }

    private func bootstrap(_ actions: String) throws -> (HTTPResponseHead, ExchangeFaults) {
        let x = Exchange(rule("response", actions), request: Fixture.request("POST", "/suite/mobileAuthTokenConsumer"),
                         response: Fixture.response(200, Fixture.bootstrapFields, body: "{}"))
        return (try XCTUnwrap(x.responseOut.forwardedHead()), x.faults)
    }

    func testRemoveOneSetCookieByName() throws {
        let (head, faults) = try bootstrap(#"{"action": "remove-set-cookie", "cookie": "__appianCsrfToken"}"#)
        XCTAssertEqual(head.fields.values("Set-Cookie"), ["JSESSIONID=s1; Path=/suite; Secure; HttpOnly",
                                                          "__appianMultipartCsrfToken=m1; Path=/suite; Secure"])
        XCTAssertEqual(faults.applied.map(\.change), ["removed 1 Set-Cookie field (__appianCsrfToken)"])
    }

    func testRewriteSetCookieAttributes() throws {
        let (head, _) = try bootstrap(#"{"action": "rewrite-set-cookie", "cookie": "JSESSIONID", "path": "/", "secure": false, "sameSite": "None", "value": "x"}"#)
        XCTAssertEqual(head.fields.values("Set-Cookie"), ["JSESSIONID=x; Path=/; HttpOnly; SameSite=None",
                                                          "__appianCsrfToken=c1; Path=/suite; Secure",
                                                          "__appianMultipartCsrfToken=m1; Path=/suite; Secure"])
    }

    func testFoldAndAddSetCookie() throws {
        let (head, faults) = try bootstrap(#"{"action": "add-set-cookie", "value": "LB=n1; Path=/"}, {"action": "fold-set-cookie"}"#)
        XCTAssertEqual(head.fields.values("Set-Cookie"), ["JSESSIONID=s1; Path=/suite; Secure; HttpOnly, __appianCsrfToken=c1; Path=/suite; Secure, __appianMultipartCsrfToken=m1; Path=/suite; Secure, LB=n1; Path=/"])
        XCTAssertEqual(head.fields.map(\.name), ["Content-Type", "Set-Cookie", "Content-Length"])
        XCTAssertEqual(faults.applied.map(\.change), ["added Set-Cookie LB", "folded 4 Set-Cookie fields into one"])
    }

    func testCookieCrumbsAcrossSplitCookieFields() throws {
        let engine = rule("request", #"{"action": "remove-cookie", "cookie": "__appianCsrfToken"}, {"action": "rewrite-cookie", "cookie": "JSESSIONID", "value": "stale"}"#)
        let request = Fixture.request("GET", "/suite/rest/a", [("cookie", "JSESSIONID=s1; __appianCsrfToken=c1"), ("cookie", "__appianCsrfToken=c1"), ("cookie", "other=1")])
        let x = Exchange(engine, request: request)
        let head: HTTPRequestHead = try XCTUnwrap(x.requestOut.forwardedHead())
        XCTAssertEqual(head.fields.values("Cookie"), ["JSESSIONID=stale", "other=1"])
        XCTAssertEqual(x.faults.applied.count, 2)
    }

    func testSetStatusTurnsA401IntoARedirect() throws {
        let engine = rule("response", #"{"action": "set-status", "status": 302, "location": "https://gw.example.test/login"}"#)
        let x = Exchange(engine, request: Fixture.request("GET", "/"), response: Fixture.response(401, body: "{}"))
        let head: HTTPResponseHead = try XCTUnwrap(x.responseOut.forwardedHead())
        XCTAssertEqual(head.status, 302)
        XCTAssertEqual(head.reason, "Found")
        XCTAssertEqual(head.fields["Location"], "https://gw.example.test/login")
        XCTAssertEqual(x.faults.applied.map(\.change), ["status 401 → 302, Location: https://gw.example.test/login"])
    }

    func testResponseLegRulesSeeTheStepTheResponseReveals() {
        let engine = Fixture.engine(#"{"rules": [{"name": "b", "match": {"leg": "response", "step": "bootstrap"}, "actions": [{"action": "remove-header", "name": "Set-Cookie"}]}]}"#)
        let classifier = StepClassifier(contextPath: "suite")
        let tokenPost = Fixture.request("POST", "/suite/mobileAuthTokenConsumer")
        for (status, fires) in [(200, true), (401, false)] {
            var faults = engine.begin(ExchangeContext(request: tokenPost, classifier: classifier))
            _ = faults.request(.head(tokenPost))
            _ = faults.response(.head(Fixture.response(status, [("Set-Cookie", "JSESSIONID=a")])))
            XCTAssertEqual(faults.applied.map(\.rule), fires ? ["b"] : [], "status \(status)")
        }
    }

    func testAnswerOnTheRequestLegNeverAsksTheServer() throws {
        let engine = rule("request", #"{"action": "answer", "status": 503, "headers": [["Content-Type", "text/html"]], "body": "down"}, {"action": "add-header", "name": "X", "value": "1"}"#)
        var faults = engine.begin(ExchangeContext(step: .other, request: Fixture.request("POST", "/a")))
        let out = faults.request(.head(Fixture.request("POST", "/a")))
        let answer = try XCTUnwrap(out.answer())
        XCTAssertNil(out.forwardedHead() as HTTPRequestHead?)
        XCTAssertEqual(answer.head?.status, 503)
        XCTAssertEqual(answer.head?.fields.map(\.description), ["Content-Type: text/html", "Content-Length: 4"])
        XCTAssertEqual(answer.bodyText, "down")
        XCTAssertEqual(answer.last, .end(trailers: nil))
        XCTAssertEqual(faults.request(.body([1, 2, 3])), [])
        XCTAssertEqual(faults.request(.end(trailers: nil)), [])
        // The action after the answer is not applied.
        XCTAssertEqual(faults.applied.map(\.action), [.answer])
    }

    func testAnswerOnTheResponseLegReplacesTheResponse() throws {
        let engine = rule("response", #"{"action": "answer", "status": 403, "body": "blocked"}"#)
        var faults = engine.begin(ExchangeContext(step: .other, request: Fixture.request("GET", "/a")))
        _ = faults.request(.head(Fixture.request("GET", "/a")))
        let out = faults.response(.head(HTTPResponseHead(status: 200, version: .http2, fields: ["content-length": "2"])))
        let answer = try XCTUnwrap(out.answer())
        XCTAssertEqual(answer.head?.status, 403)
        XCTAssertEqual(answer.head?.version, .http2)
        XCTAssertEqual(answer.head?.reason, "")
        XCTAssertEqual(faults.response(.body([1, 2])), [])
        XCTAssertEqual(faults.response(.end(trailers: nil)), [])
    }

    func testRegexTarget() throws {
        let engine = rule("request", #"{"action": "regex-target", "pattern": "(?<=[?&])codeChallenge=[^&#]*&|[?&]codeChallenge=[^&#]*(?=$|#)", "template": ""}"#)
        for (path, expected) in [("/suite?codeChallenge=abc&scheme=s", "/suite?scheme=s"),
                                 ("/suite?scheme=s&codeChallenge=abc", "/suite?scheme=s"),
                                 ("/suite?codeChallenge=abc", "/suite"),
                                 ("/suite?a=1&codeChallenge=abc&b=2#f", "/suite?a=1&b=2#f")] {
            let x = Exchange(engine, request: Fixture.request("GET", path))
            let head: HTTPRequestHead = try XCTUnwrap(x.requestOut.forwardedHead())
            XCTAssertEqual(head.path, expected)
        }
    }

    func testRewriteURLsInTargetAndLocation() throws {
        let target = rule("request", #"{"action": "rewrite-urls", "host": "internal.example.test:8080", "scheme": "http", "pathFrom": "/suite", "pathTo": "/app/suite", "in": ["target"]}"#)
        let x = Exchange(target, request: Fixture.request("GET", "/suite/rest?a=b"))
        let head: HTTPRequestHead = try XCTUnwrap(x.requestOut.forwardedHead())
        XCTAssertEqual(head.scheme, "http")
        XCTAssertEqual(head.fields["Host"], "internal.example.test:8080")
        XCTAssertEqual(head.path, "/app/suite/rest?a=b")

        let location = rule("response", #"{"action": "rewrite-urls", "host": "internal.example.test", "onlyHost": "app.example.test"}"#)
        let moved = Exchange(location, request: Fixture.request("GET", "/"),
                             response: Fixture.response(302, [("Location", "https://app.example.test:8443/suite/login?x=1")], body: ""))
        let movedHead: HTTPResponseHead = try XCTUnwrap(moved.responseOut.forwardedHead())
        XCTAssertEqual(movedHead.fields["Location"], "https://internal.example.test:8443/suite/login?x=1")
        let elsewhere = Exchange(location, request: Fixture.request("GET", "/"),
                                 response: Fixture.response(302, [("Location", "https://other.test/x")], body: ""))
        let elsewhereHead: HTTPResponseHead = try XCTUnwrap(elsewhere.responseOut.forwardedHead())
        XCTAssertEqual(elsewhereHead.fields["Location"], "https://other.test/x")
        XCTAssertEqual(elsewhere.faults.applied, [])
    }

    func testGateForwardsWithTheCookieAndRedirectsWithout() throws {
        let engine = rule("request", #"{"action": "gate", "cookie": "GW", "location": "https://gw.example.test/login"}"#)
        let with = Exchange(engine, request: Fixture.request("GET", "/suite", [("Cookie", "a=1; GW=ok")]))
        XCTAssertNotNil(with.requestOut.forwardedHead() as HTTPRequestHead?)
        XCTAssertNil(with.requestOut.answer())
        XCTAssertEqual(with.faults.applied, [])

        let without = Exchange(engine, request: Fixture.request("GET", "/suite", [("Cookie", "GWX=1")]))
        let answer = try XCTUnwrap(without.requestOut.answer())
        XCTAssertNil(without.requestOut.forwardedHead() as HTTPRequestHead?)
        XCTAssertEqual(answer.head?.status, 302)
        XCTAssertEqual(answer.head?.fields["Location"], "https://gw.example.test/login")
        XCTAssertEqual(answer.head?.fields["Content-Type"], "text/html; charset=utf-8")
        XCTAssertEqual(answer.head?.fields["Content-Length"], String(answer.bodyText.utf8.count))
        XCTAssertEqual(without.faults.applied.map(\.change), ["cookie GW missing: answered 302 to https://gw.example.test/login, \(answer.bodyText.utf8.count) bytes of text/html; charset=utf-8"])
    }

    func testGateOnAHeaderAnswers401() throws {
        let engine = rule("request", #"{"action": "gate", "header": "X-Gateway-Auth", "status": 401}"#)
        let without = Exchange(engine, request: Fixture.request("GET", "/"))
        XCTAssertEqual(without.requestOut.answer()?.head?.status, 401)
        let with = Exchange(engine, request: Fixture.request("GET", "/", [("x-gateway-auth", "1")]))
        XCTAssertNil(with.requestOut.answer())
    }

    func testInformationalResponsesPassAndRulesApplyToTheFinalOne() throws {
        let engine = rule("response", #"{"action": "add-header", "name": "X", "value": "1"}"#)
        var faults = engine.begin(ExchangeContext(step: .other, request: Fixture.request("POST", "/")))
        let interim = Fixture.response(100)
        XCTAssertEqual(faults.response(.head(interim)), [.forward(.head(interim))])
        let out = faults.response(.head(Fixture.response(200)))
        let head: HTTPResponseHead = try XCTUnwrap(out.forwardedHead())
        XCTAssertEqual(head.fields["X"], "1")
    }
}
