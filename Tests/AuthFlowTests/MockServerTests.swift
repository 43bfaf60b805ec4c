import Foundation
import HTTP
import XCTest
@testable import AuthFlow

final class MockServerTests: XCTestCase {
    private let t0 = Date(timeIntervalSince1970: 1_700_000_000)
    private let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    private var challenge: String { PKCE.challenge(for: verifier) }

    private func get(_ path: String, _ fields: HTTPFields = [:]) -> MockRequest {
        MockRequest(head: HTTPRequestHead(method: "GET", path: path, fields: fields))
    }

    private func post(_ path: String, _ body: String, contentType: String? = FormEncoding.mediaType,
                      _ fields: HTTPFields = [:]) -> MockRequest {
        var fields = fields
        if let contentType { fields.append("Content-Type", contentType) }
        return MockRequest(head: HTTPRequestHead(method: "POST", path: path, fields: fields), body: Array(body.utf8))
    }

    private func json(_ response: MockResponse) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
    }

    /// Cookie `name=value` pairs a response sets.
    private func setCookies(_ response: MockResponse) -> [String: SetCookie] {
        var out: [String: SetCookie] = [:]
        for field in response.head.fields.values("Set-Cookie") { if let c = SetCookie(parsing: field) { out[c.name] = c } }
        return out
    }

    /// Login page + credentials: returns the callback token.
    private func callbackToken(_ server: inout MockServer, scheme: String = "com.appian.tempo", now: Date? = nil) -> String? {
        let page = server.handle(get("/suite?codeChallenge=\(challenge)&scheme=\(scheme)"), now: now ?? t0)
        guard let tx = setCookies(page)[MockServer.loginTransactionCookie]?.value,
              let csrf = HTMLForm(html: page.bodyText)?.hiddenFields.first(where: { $0.name == "csrf" })?.value else { return nil }
        let reply = server.handle(post("/suite/auth", FormEncoding.encode([("csrf", csrf), ("un", "demo"), ("pw", "intact-demo")]),
                                       ["Cookie": "\(MockServer.loginTransactionCookie)=\(tx)"]), now: now ?? t0)
        return reply.head.fields["Location"].flatMap { AbsoluteURL($0)?.queryValue("token") }
    }

    private func tokenPost(_ token: String, verifier: String) -> MockRequest {
        post("/suite/mobileAuthTokenConsumer", FormEncoding.encode([("token", token), ("codeVerifier", verifier)]))
    }

    /// A full sign-in: returns the session id and CSRF token.
    private func signIn(_ server: inout MockServer) -> (session: String, csrf: String)? {
        guard let token = callbackToken(&server) else { return nil }
        let bootstrap = server.handle(tokenPost(token, verifier: verifier), now: t0)
        let cookies = setCookies(bootstrap)
        guard let session = cookies["JSESSIONID"]?.value, let csrf = cookies["__appianCsrfToken"]?.value else { return nil }
        return (session, csrf)
    }

    private func assertRejected(_ response: MockResponse, _ status: HTTPStatus, containing reason: String,
                                file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(response.head.status, status, response.bodyText, file: file, line: line)
        let stated = response.head.fields[MockServer.reasonFieldName] ?? ""
        XCTAssertTrue(stated.contains(reason), "reason \"\(stated)\" lacks \"\(reason)\"", file: file, line: line)
    }

    // MARK: step 3

    func testUnauthenticatedRequestGets401JSONFromConfigurationNotHost() {
        var server = Fixture.server()
        let response = server.handle(get("/suite/rest/a/sites", ["Host": "evil.test:1234"]), now: t0)
        XCTAssertEqual(response.head.status, 401)
        XCTAssertEqual(response.head.fields["Content-Type"], "application/json")
        XCTAssertEqual(json(response)["contextUrl"] as? String, "https://mysite.test:8443/suite")
        XCTAssertEqual(json(response)["tokenUrl"] as? String, "https://mysite.test:8443/suite/mobileAuthTokenConsumer")
        XCTAssertEqual(response.bodyText, #"{"contextUrl":"https://mysite.test:8443/suite","tokenUrl":"https://mysite.test:8443/suite/mobileAuthTokenConsumer"}"#)
        XCTAssertEqual(response.head.fields["Content-Length"], String(response.body.count))
        XCTAssertEqual(response.step, .challenge401)
    }

    func testDefaultPortIsNeverAppended() {
        var server = Fixture.server { $0.externalOrigin = Origin(scheme: "https", host: "MySite.test", port: 443) }
        let response = server.handle(get("/suite/rest/x"), now: t0)
        XCTAssertEqual(json(response)["contextUrl"] as? String, "https://mysite.test/suite")
    }

    func testContextPathIsConfigurable() {
        var server = Fixture.server { $0.contextPath = "/custom/" }
        XCTAssertEqual(server.configuration.contextPath, "custom")
        let response = server.handle(get("/custom/rest/x"), now: t0)
        XCTAssertEqual(json(response)["tokenUrl"] as? String, "https://mysite.test:8443/custom/mobileAuthTokenConsumer")
        XCTAssertEqual(server.handle(get("/suite/rest/x"), now: t0).head.status, 404)
    }

    func testResponsesEchoTheTraceField() {
        var server = Fixture.server()
        XCTAssertEqual(server.handle(get("/suite/rest/x", ["Intact-Trace": "r-1"]), now: t0).head.fields["Intact-Trace"], "r-1")
        var quiet = Fixture.server { $0.echoesTraceField = false }
        XCTAssertNil(quiet.handle(get("/suite/rest/x", ["Intact-Trace": "r-1"]), now: t0).head.fields["Intact-Trace"])
    }

    func testResponsesCarryDateAndServerLikeARealOrigin() {
        var server = Fixture.server()
        let head = server.handle(get("/suite/rest/x"), now: Date(timeIntervalSince1970: 1_445_412_480)).head
        XCTAssertEqual(head.fields["Date"], "Wed, 21 Oct 2015 07:28:00 GMT")
        XCTAssertEqual(head.fields["Server"], "intact-mock/1")
    }

    // MARK: step 6: login URL

    func testMalformedOrMissingChallengeIs400() {
        var server = Fixture.server()
        assertRejected(server.handle(get("/suite?codeChallenge=short&scheme=appian"), now: t0), 400, containing: "malformed codeChallenge")
        assertRejected(server.handle(get("/suite?codeChallenge=\(challenge)=&scheme=appian"), now: t0), 400, containing: "malformed codeChallenge")
        assertRejected(server.handle(get("/suite?scheme=appian"), now: t0), 400, containing: "missing codeChallenge")
        let response = server.handle(get("/suite?codeChallenge=\(String(repeating: "+", count: 43))&scheme=appian"), now: t0)
        assertRejected(response, 400, containing: "malformed codeChallenge")
        XCTAssertEqual(response.head.fields["Content-Type"], "text/plain; charset=utf-8")
        XCTAssertTrue(response.bodyText.contains("malformed codeChallenge"))
    }

    func testUnknownSchemeIs400() {
        var server = Fixture.server()
        assertRejected(server.handle(get("/suite?codeChallenge=\(challenge)&scheme=evil"), now: t0), 400, containing: "\"evil\" is not allowed")
        assertRejected(server.handle(get("/suite?codeChallenge=\(challenge)"), now: t0), 400, containing: "missing scheme")
    }

    func testLoginPageShowsFormBoundToATransaction() {
        var server = Fixture.server()
        let page = server.handle(get("/suite?codeChallenge=\(challenge)&scheme=appian"), now: t0)
        XCTAssertEqual(page.head.status, 200)
        XCTAssertEqual(page.step, .loginPage)
        let form = HTMLForm(html: page.bodyText)
        XCTAssertEqual(form?.method, "POST")
        XCTAssertEqual(form?.action, "/suite/auth")
        XCTAssertEqual(form?.hiddenFields.first?.name, "csrf")
        XCTAssertTrue(form?.hasInput(named: "un") ?? false)
        XCTAssertTrue(form?.hasInput(named: "pw") ?? false)
        XCTAssertEqual(HTMLForm.meta(named: "intact-code-challenge", in: page.bodyText), challenge)
        let tx = setCookies(page)[MockServer.loginTransactionCookie]
        XCTAssertEqual(tx?.path, "/suite")
        XCTAssertEqual(tx?.httpOnly, true)
        XCTAssertNil(setCookies(page)["JSESSIONID"], "no session to end")
    }

    func testLoginPageEndsAnExistingBrowserSession() {
        var server = Fixture.server()
        guard let (session, _) = signIn(&server) else { return XCTFail("sign-in failed") }
        XCTAssertEqual(server.handle(get("/suite/rest/x", ["Cookie": "JSESSIONID=\(session)"]), now: t0).head.status, 200)
        let page = server.handle(get("/suite?codeChallenge=\(challenge)&scheme=appian", ["Cookie": "JSESSIONID=\(session)"]), now: t0)
        XCTAssertEqual(page.head.status, 200)
        XCTAssertTrue(page.head.fields.values("Set-Cookie").contains("JSESSIONID=; Path=/suite; Max-Age=0; Secure"))
        assertRejected(server.handle(get("/suite/rest/x", ["Cookie": "JSESSIONID=\(session)"]), now: t0), 401, containing: "unknown session")
    }

    // MARK: step 6b–7: credentials

    func testWrongPasswordShowsTheFormAgainWithAnError() {
        var server = Fixture.server()
        let page = server.handle(get("/suite?codeChallenge=\(challenge)&scheme=appian"), now: t0)
        let tx = setCookies(page)[MockServer.loginTransactionCookie]!.value
        let csrf = HTMLForm(html: page.bodyText)!.hiddenFields[0].value
        let cookie: HTTPFields = ["Cookie": "\(MockServer.loginTransactionCookie)=\(tx)"]
        let wrong = server.handle(post("/suite/auth", "csrf=\(csrf)&un=demo&pw=wrong", cookie), now: t0)
        XCTAssertEqual(wrong.head.status, 200)
        XCTAssertTrue(wrong.bodyText.contains("Wrong user name or password."))
        XCTAssertNotNil(HTMLForm(html: wrong.bodyText))
        XCTAssertEqual(wrong.step, .credentialsPost)
        // The transaction survives: the right password still works.
        let right = server.handle(post("/suite/auth", "csrf=\(csrf)&un=demo&pw=intact-demo", cookie), now: t0)
        XCTAssertEqual(right.head.status, 302)
        XCTAssertEqual(right.step, .callbackRedirect)
        let location = AbsoluteURL(right.head.fields["Location"] ?? "")
        XCTAssertEqual(location?.origin.serialized, "appian://mysite.test:8443")
        XCTAssertEqual(location?.path, "/suite")
        XCTAssertEqual(location?.queryValue("result"), "login")
        XCTAssertEqual(location?.queryValue("token")?.count, 43)
    }

    func testCredentialsWithoutTransactionOrCSRFAreRejected() {
        var server = Fixture.server()
        let page = server.handle(get("/suite?codeChallenge=\(challenge)&scheme=appian"), now: t0)
        let tx = setCookies(page)[MockServer.loginTransactionCookie]!.value
        let csrf = HTMLForm(html: page.bodyText)!.hiddenFields[0].value
        assertRejected(server.handle(post("/suite/auth", "csrf=\(csrf)&un=demo&pw=intact-demo"), now: t0), 400, containing: "cookie")
        assertRejected(server.handle(post("/suite/auth", "csrf=nope&un=demo&pw=intact-demo",
                                          ["Cookie": "\(MockServer.loginTransactionCookie)=\(tx)"]), now: t0), 403, containing: "CSRF")
        assertRejected(server.handle(post("/suite/auth", "csrf=\(csrf)&un=demo&pw=intact-demo",
                                          ["Cookie": "\(MockServer.loginTransactionCookie)=other"]), now: t0), 400, containing: "unknown or expired")
        assertRejected(server.handle(post("/suite/auth", "csrf=\(csrf)", contentType: "text/plain"), now: t0), 400, containing: "expected Content-Type")
        // The transaction expires.
        let late = t0.addingTimeInterval(server.configuration.loginTransactionLifetime + 1)
        assertRejected(server.handle(post("/suite/auth", "csrf=\(csrf)&un=demo&pw=intact-demo",
                                          ["Cookie": "\(MockServer.loginTransactionCookie)=\(tx)"]), now: late), 400, containing: "unknown or expired")
    }

    func testUsersFromAFileCanSignIn() throws {
        let users = try MockUser.parseUsersFile(Array(#"{"users":[{"username":"alice","password":"pw1","displayName":"Alice"}]}"#.utf8))
        var server = Fixture.server { $0.users = users }
        let page = server.handle(get("/suite?codeChallenge=\(challenge)&scheme=appian"), now: t0)
        let tx = setCookies(page)[MockServer.loginTransactionCookie]!.value
        let csrf = HTMLForm(html: page.bodyText)!.hiddenFields[0].value
        let reply = server.handle(post("/suite/auth", "csrf=\(csrf)&un=alice&pw=pw1", ["Cookie": "\(MockServer.loginTransactionCookie)=\(tx)"]), now: t0)
        let token = AbsoluteURL(reply.head.fields["Location"] ?? "")?.queryValue("token") ?? ""
        let bootstrap = server.handle(tokenPost(token, verifier: verifier), now: t0)
        XCTAssertEqual(json(bootstrap)["displayName"] as? String, "Alice")
        XCTAssertEqual(json(bootstrap)["email"] as? String, "alice@example.invalid")
    }

    // MARK: steps 9–11: token exchange

    func testTokenExchangeGivesBootstrapWithThreeSeparateCookies() {
        var server = Fixture.server()
        guard let token = callbackToken(&server) else { return XCTFail("no token") }
        let bootstrap = server.handle(tokenPost(token, verifier: verifier), now: t0)
        XCTAssertEqual(bootstrap.head.status, 200)
        XCTAssertEqual(bootstrap.step, .bootstrap)
        XCTAssertEqual(bootstrap.head.fields["Content-Type"], "application/json")
        let fields = bootstrap.head.fields.values("Set-Cookie")
        XCTAssertEqual(fields.count, 3)
        XCTAssertEqual(fields.compactMap { SetCookie(parsing: $0)?.name }, ["JSESSIONID", "__appianCsrfToken", "__appianMultipartCsrfToken"])
        let cookies = setCookies(bootstrap)
        XCTAssertEqual(cookies["JSESSIONID"]?.httpOnly, true)
        XCTAssertEqual(cookies["JSESSIONID"]?.secure, true)
        XCTAssertEqual(cookies["JSESSIONID"]?.path, "/suite")
        XCTAssertEqual(cookies["__appianCsrfToken"]?.httpOnly, false)
        XCTAssertEqual(cookies["__appianMultipartCsrfToken"]?.path, "/suite")
        let body = json(bootstrap)
        for key in ["username", "displayName", "email", "locale", "timeZone", "serverVersion"] {
            XCTAssertNotNil(body[key] as? String, key)
        }
        XCTAssertNil(body["clientCertificateSubject"])
    }

    func testWrongVerifierIs401AndSpendsTheToken() {
        var server = Fixture.server()
        guard let token = callbackToken(&server) else { return XCTFail("no token") }
        let wrong = server.handle(tokenPost(token, verifier: PKCE.makeVerifier()), now: t0)
        assertRejected(wrong, 401, containing: "code verifier does not match")
        XCTAssertEqual(json(wrong)["contextUrl"] as? String, "https://mysite.test:8443/suite")
        XCTAssertNotNil(json(wrong)["tokenUrl"])
        assertRejected(server.handle(tokenPost(token, verifier: verifier), now: t0), 401, containing: "token already used")
    }

    func testReusedTokenIs401() {
        var server = Fixture.server()
        guard let token = callbackToken(&server) else { return XCTFail("no token") }
        XCTAssertEqual(server.handle(tokenPost(token, verifier: verifier), now: t0).head.status, 200)
        assertRejected(server.handle(tokenPost(token, verifier: verifier), now: t0), 401, containing: "token already used")
    }

    func testExpiredTokenIs401() {
        var server = Fixture.server()
        guard let token = callbackToken(&server) else { return XCTFail("no token") }
        assertRejected(server.handle(tokenPost(token, verifier: verifier), now: t0.addingTimeInterval(120)), 401, containing: "token expired")
    }

    func testTokenJustBeforeExpiryIsAccepted() {
        var server = Fixture.server()
        guard let token = callbackToken(&server) else { return XCTFail("no token") }
        XCTAssertEqual(server.handle(tokenPost(token, verifier: verifier), now: t0.addingTimeInterval(119)).head.status, 200)
    }

    func testUnknownTokenIs401() {
        var server = Fixture.server()
        assertRejected(server.handle(tokenPost("nope", verifier: verifier), now: t0), 401, containing: "unknown token")
    }

    func testTokenPostWithMissingFieldsOrWrongContentTypeIs400() {
        var server = Fixture.server()
        assertRejected(server.handle(post("/suite/mobileAuthTokenConsumer", "token=abc"), now: t0), 400, containing: "no \"codeVerifier\" field")
        assertRejected(server.handle(post("/suite/mobileAuthTokenConsumer", "codeVerifier=abc"), now: t0), 400, containing: "no \"token\" field")
        assertRejected(server.handle(post("/suite/mobileAuthTokenConsumer", "token=a&codeVerifier=b", contentType: "application/json"), now: t0),
                       400, containing: "expected Content-Type application/x-www-form-urlencoded, got application/json")
        assertRejected(server.handle(post("/suite/mobileAuthTokenConsumer", "token=a", contentType: nil), now: t0),
                       400, containing: "got none")
        assertRejected(server.handle(post("/suite/mobileAuthTokenConsumer", "token=%zz&codeVerifier=b"), now: t0), 400, containing: "malformed")
        // Parameters on the media type are fine.
        assertRejected(server.handle(post("/suite/mobileAuthTokenConsumer", "token=a&codeVerifier=b",
                                          contentType: "application/x-www-form-urlencoded; charset=UTF-8"), now: t0), 401, containing: "unknown token")
    }

    // MARK: sessions and protected resources

    func testSessionServesProtectedResourcesAndCSRFGuardsUnsafeMethods() {
        var server = Fixture.server()
        guard let (session, csrf) = signIn(&server) else { return XCTFail("sign-in failed") }
        let cookie = "JSESSIONID=\(session); __appianCsrfToken=\(csrf)"
        let ok = server.handle(get("/suite/rest/a/sites", ["Cookie": cookie]), now: t0)
        XCTAssertEqual(ok.head.status, 200)
        XCTAssertEqual(ok.step, .authenticatedRequest)
        XCTAssertEqual(json(ok)["user"] as? String, "demo")
        for method in ["POST", "PUT", "PATCH", "DELETE"] {
            let bare = MockRequest(head: HTTPRequestHead(method: HTTPMethod(method), path: "/suite/rest/x", fields: ["Cookie": cookie]))
            assertRejected(server.handle(bare, now: t0), 403, containing: "without X-APPIAN-CSRF-TOKEN")
            let wrong = MockRequest(head: HTTPRequestHead(method: HTTPMethod(method), path: "/suite/rest/x",
                                                          fields: ["Cookie": cookie, "X-APPIAN-CSRF-TOKEN": "nope"]))
            assertRejected(server.handle(wrong, now: t0), 403, containing: "does not match")
            let good = MockRequest(head: HTTPRequestHead(method: HTTPMethod(method), path: "/suite/rest/x",
                                                         fields: ["Cookie": cookie, "x-appian-csrf-token": csrf]))
            XCTAssertEqual(server.handle(good, now: t0).head.status, 200, method)
        }
    }

    func testUnknownOrExpiredSessionIs401WithStep3JSON() {
        var server = Fixture.server()
        let unknown = server.handle(get("/suite/rest/x", ["Cookie": "JSESSIONID=nope"]), now: t0)
        assertRejected(unknown, 401, containing: "unknown session")
        XCTAssertNotNil(json(unknown)["tokenUrl"])
        assertRejected(server.handle(get("/suite/rest/x"), now: t0), 401, containing: "no session cookie")
        guard let (session, _) = signIn(&server) else { return XCTFail("sign-in failed") }
        let idle = server.configuration.sessionIdleTimeout
        // Use within the idle timeout keeps it alive…
        XCTAssertEqual(server.handle(get("/suite/rest/x", ["Cookie": "JSESSIONID=\(session)"]), now: t0.addingTimeInterval(idle - 1)).head.status, 200)
        XCTAssertEqual(server.liveSessionCount(now: t0.addingTimeInterval(idle)), 2, "browser session expired, app session alive")
        // …and idleness past it ends it.
        let late = t0.addingTimeInterval(2 * idle)
        let expired = server.handle(get("/suite/rest/x", ["Cookie": "JSESSIONID=\(session)"]), now: late)
        assertRejected(expired, 401, containing: "session expired")
        XCTAssertEqual(json(expired)["contextUrl"] as? String, "https://mysite.test:8443/suite")
    }

    func testCORSPingSaysWhetherTheRequestIsAuthenticated() {
        var server = Fixture.server()
        let anonymous = server.handle(get("/suite/cors/ping"), now: t0)
        XCTAssertEqual(anonymous.head.status, 200)
        XCTAssertEqual(anonymous.bodyText, #"{"authed":false}"#)
        XCTAssertEqual(anonymous.step, .corsPing)
        guard let (session, _) = signIn(&server) else { return XCTFail("sign-in failed") }
        XCTAssertEqual(server.handle(get("/suite/cors/ping", ["Cookie": "JSESSIONID=\(session)"]), now: t0).bodyText, #"{"authed":true}"#)
    }

    func testUnknownPathIs404AndWrongMethodIs405() {
        var server = Fixture.server()
        assertRejected(server.handle(get("/suite/nothing"), now: t0), 404, containing: "/suite/nothing")
        assertRejected(server.handle(get("/elsewhere"), now: t0), 404, containing: "no resource")
        assertRejected(server.handle(get("/suite/restless"), now: t0), 404, containing: "no resource")
        let wrong = server.handle(get("/suite/mobileAuthTokenConsumer"), now: t0)
        assertRejected(wrong, 405, containing: "use POST")
        XCTAssertEqual(wrong.head.fields["Allow"], "POST")
    }

    func testOversizedBodyIs413() {
        var server = Fixture.server()
        let big = MockRequest(head: HTTPRequestHead(method: "POST", path: "/suite/mobileAuthTokenConsumer"),
                              body: [UInt8](repeating: 0x61, count: 64 * 1024 + 1))
        assertRejected(server.handle(big, now: t0), 413, containing: "exceeds the limit of 65536")
    }

    func testClientCertificateRequirementAndSubjectRecording() {
        var server = Fixture.server { $0.requiresClientCertificate = true }
        assertRejected(server.handle(get("/suite/rest/x"), now: t0), 403, containing: "client certificate required")
        var withSubject = get("/suite/rest/x")
        withSubject.clientCertificateSubject = "CN=alice"
        XCTAssertEqual(server.handle(withSubject, now: t0).head.status, 401)

        var open = Fixture.server()
        guard let token = callbackToken(&open) else { return XCTFail("no token") }
        var request = tokenPost(token, verifier: verifier)
        request.clientCertificateSubject = "CN=alice,O=Example"
        let bootstrap = open.handle(request, now: t0)
        XCTAssertEqual(json(bootstrap)["clientCertificateSubject"] as? String, "CN=alice,O=Example")
        let session = setCookies(bootstrap)["JSESSIONID"]?.value ?? ""
        XCTAssertEqual(open.clientCertificateSubject(ofSession: session), "CN=alice,O=Example")
    }
}
