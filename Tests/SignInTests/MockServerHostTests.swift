import AuthFlow
import IntactTestSupport
import Foundation
import HTTP
import Transport
import XCTest
@testable import SignIn

/// Bad input to the mock server over real connections: each gets the status
/// and reason `AUTH_FLOW.md` gives.
final class MockServerHostTests: XCTestCase {
    private func flow(_ loopback: Loopback, _ edit: (inout SignInFlow.Configuration) -> Void = { _ in }) -> SignInFlow {
        var configuration = SignInFlow.Configuration(resourceURL: loopback.resourceURL, traceRunID: "bad", expectsTraceEcho: true)
        edit(&configuration)
        return SignInFlow(configuration: configuration)
    }

    private func get(_ driver: LoopbackDriver, _ path: String, fields: HTTPFields = [:]) throws -> HTTPClientResponse {
        try driver.send(HTTPRequestHead(method: "GET", path: path, fields: fields))
    }

    private let validChallenge = PKCE.challenge(for: PKCE.makeVerifier())

    func testMalformedCodeChallengeIs400WithTheReason() throws {
        let driver = try LoopbackDriver(Loopback.start(self))
        let response = try get(driver, "/suite?codeChallenge=short&scheme=com.appian.tempo")
        XCTAssertEqual(response.head.status, 400)
        XCTAssertEqual(response.head.fields[MockServer.reasonFieldName], "malformed codeChallenge: must match ^[A-Za-z0-9_-]{43}$")
    }

    func testUnknownSchemeIs400WithTheReason() throws {
        let driver = try LoopbackDriver(Loopback.start(self))
        let response = try get(driver, "/suite?codeChallenge=\(validChallenge)&scheme=evil")
        XCTAssertEqual(response.head.status, 400)
        XCTAssertTrue(response.head.fields[MockServer.reasonFieldName]?.hasPrefix("callback scheme \"evil\" is not allowed") ?? false)
    }

    func testWrongPasswordShowsTheFormAgainWithAnError() throws {
        let loopback = try Loopback.start(self)
        var driver = try LoopbackDriver(loopback)
        var flow = flow(loopback) { $0.password = "wrong" }
        let outcome = try driver.run(&flow)
        XCTAssertEqual(outcome.diagnosis?.mode, .credentialsRejected)
        let form = try XCTUnwrap(driver.response(at: .credentials))
        XCTAssertEqual(form.head.status, 200)
        XCTAssertTrue(String(decoding: form.body, as: UTF8.self).contains("Wrong user name or password."))
    }

    /// Runs the flow up to the token POST, tampering with it; returns the server's answer to it.
    private func tokenPost(_ loopback: Loopback, plan: LoopbackDriver.Plan = .send,
                           edit: @escaping (inout HTTPRequestHead, inout [UInt8]) -> Void = { _, _ in }) throws -> HTTPClientResponse {
        var driver = try LoopbackDriver(loopback)
        var flow = flow(loopback)
        _ = try driver.run(&flow) { step, head, body in
            guard step == .tokenExchange else { return .send }
            edit(&head, &body)
            return plan
        }
        return try XCTUnwrap(driver.response(at: .tokenExchange))
    }

    private func assertChallenge(_ response: HTTPClientResponse, reason: MockServer.TokenRejection, _ loopback: Loopback,
                                 file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(response.head.status, 401, file: file, line: line)
        XCTAssertEqual(response.head.fields[MockServer.reasonFieldName], reason.rawValue, file: file, line: line)
        let json = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: String]
        XCTAssertEqual(json?["tokenUrl"], loopback.started.server.tokenURL.serialized, file: file, line: line)
    }

    func testWrongVerifierIs401WithTheChallengeJSON() throws {
        let loopback = try Loopback.start(self)
        let response = try tokenPost(loopback) { _, body in
            let pairs = (FormEncoding.decode(String(decoding: body, as: UTF8.self)) ?? []).map {
                ($0.name, $0.name == "codeVerifier" ? PKCE.makeVerifier() : $0.value)
            }
            body = Array(FormEncoding.encode(pairs).utf8)
        }
        assertChallenge(response, reason: .verifierMismatch, loopback)
    }

    func testReusedTokenIs401() throws {
        let loopback = try Loopback.start(self)
        assertChallenge(try tokenPost(loopback, plan: .sendTwice), reason: .alreadyUsed, loopback)
    }

    func testExpiredTokenIs401() throws {
        let loopback = try Loopback.start(self) { $0.server.tokenLifetime = 0.2 }
        assertChallenge(try tokenPost(loopback, plan: .delay(0.4)), reason: .expired, loopback)
    }

    func testTokenPostWithAMissingFieldIs400() throws {
        let loopback = try Loopback.start(self)
        let response = try tokenPost(loopback) { _, body in
            let pairs = (FormEncoding.decode(String(decoding: body, as: UTF8.self)) ?? []).filter { $0.name != "codeVerifier" }
            body = Array(FormEncoding.encode(pairs.map { ($0.name, $0.value) }).utf8)
        }
        XCTAssertEqual(response.head.status, 400)
        XCTAssertEqual(response.head.fields[MockServer.reasonFieldName], "token POST body has no \"codeVerifier\" field")
    }

    func testTokenPostWithTheWrongContentTypeIs400() throws {
        let loopback = try Loopback.start(self)
        let response = try tokenPost(loopback) { head, _ in head.fields.set("Content-Type", "text/plain") }
        XCTAssertEqual(response.head.status, 400)
        XCTAssertEqual(response.head.fields[MockServer.reasonFieldName],
                       "expected Content-Type application/x-www-form-urlencoded, got text/plain")
    }

    func testUnsafeMethodWithoutTheCSRFHeaderIs403() throws {
        let loopback = try Loopback.start(self)
        var driver = try LoopbackDriver(loopback)
        var flow = flow(loopback) { $0.followUpMethod = "POST" }
        let outcome = try driver.run(&flow) { step, head, _ in
            if step == .followUp { _ = head.fields.remove(MockServer.csrfHeader) }
            return .send
        }
        XCTAssertTrue(outcome.signInCompleted)
        let response = try XCTUnwrap(driver.response(at: .followUp))
        XCTAssertEqual(response.head.status, 403)
        XCTAssertEqual(response.head.fields[MockServer.reasonFieldName], "POST without \(MockServer.csrfHeader)")
    }

    func testUnknownSessionIs401WithTheChallenge() throws {
        let loopback = try Loopback.start(self)
        let response = try get(try LoopbackDriver(loopback), "/suite/rest/whatever", fields: ["Cookie": "JSESSIONID=forged"])
        XCTAssertEqual(response.head.status, 401)
        XCTAssertEqual(response.head.fields[MockServer.reasonFieldName], "unknown session")
    }

    func testExpiredSessionIs401WithTheChallenge() throws {
        let loopback = try Loopback.start(self) { $0.server.sessionIdleTimeout = 0.2 }
        var driver = try LoopbackDriver(loopback)
        var flow = flow(loopback)
        let outcome = try driver.run(&flow) { step, _, _ in step == .followUp ? .delay(0.4) : .send }
        XCTAssertTrue(outcome.signInCompleted)
        XCTAssertFalse(outcome.succeeded)
        let response = try XCTUnwrap(driver.response(at: .followUp))
        XCTAssertEqual(response.head.status, 401)
        XCTAssertEqual(response.head.fields[MockServer.reasonFieldName], "session expired after the idle timeout")
    }

    func testABodyPastTheLimitIsAnswered413BeforeItEnds() throws {
        let loopback = try Loopback.start(self) { $0.server.maxRequestBodyBytes = 1024 }
        for protocols in [HTTPProtocolChoice.http1, .http2] {
            let driver = try LoopbackDriver(loopback, protocols: protocols)
            let body = [UInt8](repeating: UInt8(ascii: "a"), count: 200_000)
            let head = HTTPRequestHead(method: "POST", path: "/suite/mobileAuthTokenConsumer",
                                       fields: ["Content-Type": "application/x-www-form-urlencoded"])
            let response = try driver.send(head, body: body)
            XCTAssertEqual(response.head.status, 413, "\(protocols)")
            XCTAssertTrue(response.head.fields[MockServer.reasonFieldName]?.hasSuffix("exceeds the limit of 1024") ?? false,
                          "\(protocols): \(response.head.fields)")
        }
    }
}

/// The certificate the mock server presents without SNI names its external
/// host and its listen address, so a tap reaching it by address (as `--mode
/// reverse:https://127.0.0.1:PORT` does) verifies it too.
final class MockServerCertificateNameTests: XCTestCase {
    func testTheDefaultCertificateNamesTheExternalHostAndTheListenAddress() throws {
        let loopback = try Loopback.start(self) { configuration in
            configuration.server = MockServerConfiguration(externalOrigin: Origin(scheme: "https", host: "appian.test"))
            configuration.externalOriginFollowsListener = false
        }
        let port = loopback.started.listenAddress.port
        let run = try ToolRun.run("/bin/sh", ["-c", "openssl s_client -connect 127.0.0.1:\(port) -noservername < /dev/null "
                                              + "2>/dev/null | openssl x509 -noout -ext subjectAltName"])
        XCTAssertTrue(run.output.contains("DNS:appian.test"), run.output)
        XCTAssertTrue(run.output.contains("IP Address:127.0.0.1"), run.output)
    }
}
