import Foundation
import AuthFlow
import HTTP
import XCTest
@testable import Faults

final class FaultPresetTests: XCTestCase {
    private func engine(_ spec: String, seed: UInt64 = 1) throws -> FaultEngine {
        FaultEngine(rules: try FaultPreset.rules(specification: spec), seed: seed)
    }

    private let challengeJSON = #"{"contextUrl": "https://app.example.test/suite", "tokenUrl": "https://app.example.test/suite/mobileAuthTokenConsumer"}"#

    private var challenge: (HTTPResponseHead, [[UInt8]]) {
        Fixture.response(401, [("Content-Type", "application/json")], body: challengeJSON)
    }

    func testCatalogMatchesTheFaultsTable() {
        XCTAssertEqual(FaultPreset.catalog.map(\.name), [
            "auth-redirect", "html-401", "foreign-response", "gateway-cookie", "strip-set-cookie", "rewrite-set-cookie",
            "strip-cookie", "rewrite-urls", "drop-challenge", "alter-token-post", "compress", "client-cert-required",
            "reset-token-post", "latency",
        ])
        for preset in FaultPreset.catalog {
            XCTAssertFalse(preset.summary.isEmpty, preset.name)
            XCTAssertFalse(preset.clientSees.isEmpty, preset.name)
            XCTAssertEqual(preset.breaks.isEmpty, preset.name == "latency", preset.name)
            let rules = try? preset.rules()
            XCTAssertNotNil(rules, preset.name)
            for rule in rules ?? [] { XCTAssertNil(rule.problem?.message, "\(preset.name): \(rule.problem?.message ?? "")") }
        }
    }

    /// The sentences themselves are checked verbatim against the document in
    /// AuthFlowTests; here every preset but the resilience one must cite one.
    func testEveryFailurePresetCitesTheDocument() {
        for preset in FaultPreset.catalog where preset.name != "latency" {
            XCTAssertFalse(preset.breaks.isEmpty, preset.name)
            for sentence in preset.breaks { XCTAssertFalse(sentence.text.isEmpty, preset.name) }
        }
    }

    func testSpecificationErrors() {
        XCTAssertThrowsError(try FaultPreset.rules(specification: "lag")) { error in
            guard case FaultPresetError.unknownPreset("lag", let known) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(known, FaultPreset.catalog.map(\.name))
            XCTAssertTrue("\(error)".contains("latency"))
        }
        XCTAssertThrowsError(try FaultPreset.rules(specification: "latency:ms=5,jiter=2")) { error in
            XCTAssertEqual(error as? FaultPresetError, .unknownParameter(preset: "latency", parameter: "jiter", allowed: ["ms", "jitter"]))
        }
        XCTAssertThrowsError(try FaultPreset.rules(specification: "compress:x=1")) { error in
            XCTAssertTrue("\(error)".contains("it takes none"), "\(error)")
        }
        XCTAssertThrowsError(try FaultPreset.rules(specification: "latency:ms")) { error in
            guard case FaultPresetError.malformed = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try FaultPreset.rules(specification: "latency:ms=fast")) { error in
            guard case FaultPresetError.invalidValue(preset: "latency", parameter: "ms", value: "fast", _) = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try FaultPreset.rules(specification: "rewrite-set-cookie:mode=crumble")) { error in
            XCTAssertTrue("\(error)".contains("path, domain, secure, samesite, fold, affinity"), "\(error)")
        }
        XCTAssertThrowsError(try FaultPreset.rules(specification: "reset-token-post:at=after-body-bytes")) { error in
            guard case FaultPresetError.invalidValue(preset: "reset-token-post", parameter: "bytes", _, _) = error else { return XCTFail("\(error)") }
        }
    }

    func testAuthRedirectTurnsThe401IntoALoginRedirect() throws {
        let x = Exchange(try engine("auth-redirect"), step: .challenge401, request: Fixture.request("GET", "/suite/rest/a"), response: challenge)
        let head: HTTPResponseHead = try XCTUnwrap(x.responseOut.forwardedHead())
        XCTAssertEqual(head.status, 302)
        XCTAssertEqual(head.fields["Location"], "https://gateway.example.test/login")
        XCTAssertEqual(head.fields["Content-Type"], "text/html; charset=utf-8")
        XCTAssertEqual(head.fields["Content-Length"], String(x.responseOut.forwardedBody().count))
        XCTAssertFalse(x.responseOut.forwardedText().contains("contextUrl"))
        XCTAssertEqual(Set(x.faults.applied.map(\.rule)), ["auth-redirect"])
        let other = Exchange(try engine("auth-redirect:location=https://sso.test/"), step: .challenge401, request: Fixture.request("GET", "/"), response: challenge)
        XCTAssertEqual((other.responseOut.forwardedHead() as HTTPResponseHead?)?.fields["Location"], "https://sso.test/")
    }

    func testHTML401ReplacesTheJSONBody() throws {
        let x = Exchange(try engine("html-401"), step: .challenge401, request: Fixture.request("GET", "/suite/rest/a"), response: challenge)
        let head: HTTPResponseHead = try XCTUnwrap(x.responseOut.forwardedHead())
        XCTAssertEqual(head.status, 401)
        XCTAssertEqual(head.fields["Content-Type"], "text/html; charset=utf-8")
        XCTAssertEqual(head.fields["Content-Length"], String(x.responseOut.forwardedBody().count))
        XCTAssertTrue(x.responseOut.forwardedText().hasPrefix("<!DOCTYPE html>"))
        XCTAssertFalse(x.responseOut.forwardedText().contains("tokenUrl"))
    }

    func testForeignResponseAnswersInsteadOfTheServer() throws {
        let x = Exchange(try engine("foreign-response"), step: .unauthenticatedRequest, request: Fixture.request("GET", "/suite/rest/a"))
        let answer = try XCTUnwrap(x.requestOut.answer())
        XCTAssertEqual(answer.head?.status, 503)
        XCTAssertEqual(answer.head?.fields["Retry-After"], "600")
        XCTAssertTrue(answer.bodyText.contains("maintenance"))
        let block = Exchange(try engine("foreign-response:kind=block"), request: Fixture.request("GET", "/"))
        XCTAssertEqual(block.requestOut.answer()?.head?.status, 403)
        let teapot = Exchange(try engine("foreign-response:status=502"), request: Fixture.request("GET", "/"))
        XCTAssertEqual(teapot.requestOut.answer()?.head?.status, 502)
    }

    func testGatewayCookie() throws {
        let e = try engine("gateway-cookie")
        let blocked = Exchange(e, step: .unauthenticatedRequest, request: Fixture.request("GET", "/suite/rest/a"))
        XCTAssertEqual(blocked.requestOut.answer()?.head?.status, 302)
        XCTAssertEqual(blocked.requestOut.answer()?.head?.fields["Location"], "https://gateway.example.test/login")
        let passed = Exchange(e, request: Fixture.request("GET", "/suite/rest/a", [("Cookie", "GATEWAY_SESSION=1")]))
        XCTAssertNotNil(passed.requestOut.forwardedHead() as HTTPRequestHead?)
        let forbidden = Exchange(try engine("gateway-cookie:status=403,cookie=SSO"), request: Fixture.request("GET", "/", [("Cookie", "GATEWAY_SESSION=1")]))
        XCTAssertEqual(forbidden.requestOut.answer()?.head?.status, 403)
    }

    private func bootstrap(_ spec: String) throws -> (HTTPResponseHead, Exchange) {
        let x = Exchange(try engine(spec), step: .bootstrap, request: Fixture.request("POST", "/suite/mobileAuthTokenConsumer"),
                         response: Fixture.response(200, Fixture.bootstrapFields, body: #"{"user": "demo"}"#))
        return (try XCTUnwrap(x.responseOut.forwardedHead()), x)
    }

    func testStripSetCookieRemovesAllThree() throws {
        let (head, x) = try bootstrap("strip-set-cookie")
        XCTAssertEqual(head.fields.values("Set-Cookie"), [])
        XCTAssertEqual(x.faults.applied.map(\.change), ["removed 3 Set-Cookie fields (JSESSIONID, __appianCsrfToken, __appianMultipartCsrfToken)"])
        // Only the bootstrap step.
        let other = Exchange(try engine("strip-set-cookie"), step: .loginPage, request: Fixture.request("GET", "/suite"),
                             response: Fixture.response(200, Fixture.bootstrapFields, body: ""))
        XCTAssertEqual((other.responseOut.forwardedHead() as HTTPResponseHead?)?.fields.values("Set-Cookie").count, 3)
    }

    func testRewriteSetCookieModes() throws {
        XCTAssertEqual(try bootstrap("rewrite-set-cookie").0.fields.values("Set-Cookie").first, "JSESSIONID=s1; Path=/wrong; Secure; HttpOnly")
        XCTAssertEqual(try bootstrap("rewrite-set-cookie:mode=domain").0.fields.values("Set-Cookie").first,
                       "JSESSIONID=s1; Path=/suite; Secure; HttpOnly; Domain=gateway.example.test")
        XCTAssertEqual(try bootstrap("rewrite-set-cookie:mode=secure").0.fields.values("Set-Cookie").first, "JSESSIONID=s1; Path=/suite; HttpOnly")
        XCTAssertEqual(try bootstrap("rewrite-set-cookie:mode=samesite,cookie=__appianCsrfToken").0.fields.values("Set-Cookie")[1],
                       "__appianCsrfToken=c1; Path=/suite; Secure; SameSite=Strict")
        XCTAssertEqual(try bootstrap("rewrite-set-cookie:mode=fold").0.fields.values("Set-Cookie").count, 1)
        XCTAssertEqual(try bootstrap("rewrite-set-cookie:mode=affinity").0.fields.values("Set-Cookie").last, "INTACT_LB=node-1; Path=/; HttpOnly")
    }

    func testStripCookie() throws {
        let request = Fixture.request("GET", "/suite/rest/a", [("Cookie", "JSESSIONID=s1; __appianCsrfToken=c1")])
        let all = Exchange(try engine("strip-cookie"), step: .authenticatedRequest, request: request)
        XCTAssertNil((all.requestOut.forwardedHead() as HTTPRequestHead?)?.fields["Cookie"])
        let one = Exchange(try engine("strip-cookie:cookie=JSESSIONID"), step: .authenticatedRequest, request: request)
        XCTAssertEqual((one.requestOut.forwardedHead() as HTTPRequestHead?)?.fields["Cookie"], "__appianCsrfToken=c1")
    }

    func testRewriteURLsInTheChallengeAndLocation() throws {
        let x = Exchange(try engine("rewrite-urls:host=internal.example.test,scheme=http"), step: .challenge401,
                         request: Fixture.request("GET", "/suite/rest/a"), response: challenge)
        XCTAssertEqual(x.responseOut.forwardedText(), #"{"contextUrl": "http://internal.example.test/suite", "tokenUrl": "http://internal.example.test/suite/mobileAuthTokenConsumer"}"#)
        let head: HTTPResponseHead = try XCTUnwrap(x.responseOut.forwardedHead())
        XCTAssertEqual(head.fields["Content-Length"], String(x.responseOut.forwardedBody().count))
        let redirect = Exchange(try engine("rewrite-urls"), step: .credentialsPost, request: Fixture.request("POST", "/suite/auth"),
                                response: Fixture.response(302, [("Location", "https://app.example.test/suite/home")], body: ""))
        XCTAssertEqual((redirect.responseOut.forwardedHead() as HTTPResponseHead?)?.fields["Location"], "https://internal.example.test/suite/home")
    }

    func testDropChallenge() throws {
        let login = "/suite?codeChallenge=zWNaqbvS3TXav7Kq4TNtwT196dIIB3yS50JG2TrzKkQ&scheme=com.appian.tempo"
        let stripped = Exchange(try engine("drop-challenge"), step: .loginPage, request: Fixture.request("GET", login))
        XCTAssertEqual((stripped.requestOut.forwardedHead() as HTTPRequestHead?)?.path, "/suite?scheme=com.appian.tempo")
        let altered = Exchange(try engine("drop-challenge:mode=alter"), step: .loginPage, request: Fixture.request("GET", login))
        XCTAssertEqual((altered.requestOut.forwardedHead() as HTTPRequestHead?)?.path,
                       "/suite?codeChallenge=\(String(repeating: "A", count: 43))&scheme=com.appian.tempo")
        let elsewhere = Exchange(try engine("drop-challenge"), step: .other, request: Fixture.request("GET", login))
        XCTAssertEqual((elsewhere.requestOut.forwardedHead() as HTTPRequestHead?)?.path, login)
    }

    func testAlterTokenPost() throws {
        let body = "token=jA0E-Cq_x&codeVerifier=v-1"
        func post(_ spec: String) throws -> (HTTPRequestHead?, String) {
            let x = Exchange(try engine(spec), step: .tokenPost,
                             request: Fixture.request("POST", "/suite/mobileAuthTokenConsumer", [("Content-Length", String(body.utf8.count))]),
                             requestBody: [Array(body.utf8)])
            return (x.requestOut.forwardedHead(), x.requestOut.forwardedText())
        }
        let (head, altered) = try post("alter-token-post")
        XCTAssertEqual(altered, "token=altered-jA0E-Cq_x&codeVerifier=v-1")
        XCTAssertEqual(head?.fields["Content-Length"], String(altered.utf8.count))
        XCTAssertEqual(try post("alter-token-post:field=codeVerifier").1, "token=jA0E-Cq_x&codeVerifier=altered-v-1")
        XCTAssertEqual(try post("alter-token-post:mode=reencode").1, "token=jA0E%2DCq%5Fx&codeVerifier=v%2D1")
    }

    func testCompress() throws {
        let x = Exchange(try engine("compress"), step: .bootstrap, request: Fixture.request("POST", "/t"),
                         response: Fixture.response(200, [("Content-Type", "application/json")], body: challengeJSON))
        let head: HTTPResponseHead = try XCTUnwrap(x.responseOut.forwardedHead())
        XCTAssertEqual(head.fields["Content-Encoding"], "gzip")
        XCTAssertEqual(try gunzip(x.responseOut.forwardedBody()), Array(challengeJSON.utf8))
    }

    func testClientCertRequired() throws {
        let e = try engine("client-cert-required:ca=/tmp/client-ca.pem")
        XCTAssertEqual(e.beginConnection().tls, [.requireClientCertificate(caFile: "/tmp/client-ca.pem")])
        XCTAssertEqual(try engine("client-cert-required").beginConnection().tls, [.requireClientCertificate(caFile: nil)],
                       "without ca=, the proxy's own CA")
    }

    func testResetTokenPost() throws {
        let response = Exchange(try engine("reset-token-post"), step: .tokenPost, request: Fixture.request("POST", "/t"),
                                response: Fixture.response(200, body: "{}"))
        XCTAssertNotNil(response.requestOut.forwardedHead() as HTTPRequestHead?, "the server gets the token")
        XCTAssertEqual(response.responseOut, [.network(.reset(.beforeHeaders))])
        let request = Exchange(try engine("reset-token-post:leg=request,at=after-body-bytes,bytes=4"), step: .tokenPost,
                               request: Fixture.request("POST", "/t"), requestBody: [Array("token=abc".utf8)])
        XCTAssertEqual(request.requestOut.forwardedText(), "toke")
        XCTAssertEqual(request.requestOut.last, .network(.reset(.afterBodyBytes(4))))
        let other = Exchange(try engine("reset-token-post"), step: .authenticatedRequest, request: Fixture.request("GET", "/"), response: Fixture.response(200, body: ""))
        XCTAssertEqual(other.responseOut.commands(), [])
        // With a classifier the token POST's 200 is the bootstrap, and the response leg still resets it.
        var bootstrap = try engine("reset-token-post").begin(ExchangeContext(request: Fixture.request("POST", "/suite/mobileAuthTokenConsumer"),
                                                                             classifier: StepClassifier(contextPath: "suite")))
        _ = bootstrap.request(.head(Fixture.request("POST", "/suite/mobileAuthTokenConsumer")))
        XCTAssertEqual(bootstrap.response(.head(Fixture.response(200))), [.network(.reset(.beforeHeaders))])
    }

    func testLatency() throws {
        let e = try engine("latency:ms=200,jitter=50")
        for _ in 0..<20 {
            let x = Exchange(e, request: Fixture.request("GET", "/"), response: Fixture.response(200, body: "ok"))
            guard case .network(.delay(let d))? = x.responseOut.first else { return XCTFail("\(x.responseOut)") }
            XCTAssertTrue((150...250).contains(d.milliseconds), "\(d)")
            XCTAssertEqual(x.responseOut.forwardedText(), "ok")
        }
    }
}
