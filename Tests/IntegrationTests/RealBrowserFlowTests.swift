import AuthFlow
import Browser
import Demo
import Evidence
import Foundation
import IntactTestSupport
import Proxy
import SignIn
import TLS
import Wire
import XCTest

/// Steps 6–8 in real headless Chromium (`--browser chromium`), through the
/// proxy in both modes and over both HTTP versions, the browser-only
/// diagnoses, and a browser that hangs or is killed. Each run takes a
/// second or two; skipped where Chromium is not installed (`make test`
/// installs it).
final class RealBrowserFlowTests: XCTestCase {
    private func chromium(timeout: Duration = .seconds(20), executable: String? = nil) throws -> ClientRunner.BrowserChoice {
        try installedChromium(timeout: timeout, executable: executable)
    }

    /// The demo (reverse proxy) with Chromium as the browser.
    private func demo(_ protocols: ClientRunner.Protocols, rules: String = #"{"rules": []}"#,
                      timeout: Duration = .seconds(20), executable: String? = nil,
                      _ edit: (inout DemoConfiguration) -> Void = { _ in }) throws -> FaultFlowRun {
        let browser = try chromium(timeout: timeout, executable: executable)
        return try FaultFlowRun.run(rules: rules, protocols: protocols, exchangeTimeout: .seconds(10)) { configuration in
            configuration.browser = browser
            edit(&configuration)
        }
    }

    private func assertSignedInAndVerified(_ run: FaultFlowRun, protocolName: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(run.outcome.succeeded, String(describing: run.outcome.diagnosis), file: file, line: line)
        XCTAssertTrue(run.report.policyHolds, "every exchange crossed the proxy identical or equivalent", file: file, line: line)
        let browserSteps = run.outcome.steps.filter { $0.agent == .browser }
        XCTAssertEqual(browserSteps.map(\.step), [.loginPage, .credentials], file: file, line: line)
        // The browser's page requests carried the trace: the client's and the proxy's records pair by it.
        for step in browserSteps {
            let trace = step.traceID
            XCTAssertNotNil(trace, file: file, line: line)
            XCTAssertTrue(run.clientRecords.contains { $0.traceID == trace }, "client recorded \(step.step)", file: file, line: line)
            XCTAssertTrue(run.proxyRecords.contains { $0.traceID == trace }, "proxy saw trace \(trace ?? "")", file: file, line: line)
        }
        XCTAssertTrue(run.browserView?.contains("\"protocol\":\"\(protocolName)\"") ?? false,
                      "the browser spoke \(protocolName)", file: file, line: line)
    }

    func testSignsInThroughTheReverseProxyOverHTTP2() throws {
        assertSignedInAndVerified(try demo(.http2OrHTTP1), protocolName: "h2")
    }

    func testSignsInThroughTheReverseProxyOverHTTP1() throws {
        assertSignedInAndVerified(try demo(.http1Only), protocolName: "http/1.1")
    }

    func testSignsInThroughAForwardProxyOverBothVersions() throws {
        let browser = try chromium()
        for (protocols, name) in [(ClientRunner.Protocols.http2OrHTTP1, "h2"), (.http1Only, "http/1.1")] {
            let rig = try ForwardRig.start(self)
            var configuration = rig.client(protocols: protocols)
            configuration.browser = browser
            let recording = makeTemporaryDirectory() + "/client.jsonl"
            let recorder = try TapRecorder(path: recording, settings: .init(tap: "client", role: .client), toolVersion: "test", mode: "client")
            let outcome = try ClientRunner(configuration: configuration, recorder: recorder).runAndWait()
            XCTAssertNil(recorder.close())
            XCTAssertTrue(outcome.succeeded, "\(name): \(String(describing: outcome.diagnosis))")
            let proxy = try rig.stop()
            let loginTrace = try XCTUnwrap(outcome.steps.first { $0.step == .loginPage }?.traceID)
            let login = try XCTUnwrap(proxy.records.first { $0.traceID == loginTrace }, "the browser's request crossed the forward proxy")
            XCTAssertEqual(login.legs.first?.request?.version, name == "h2" ? .http2 : .http1_1)
            // Chromium's own traffic (updates, sign-in, time) stayed off the proxy: every record is the flow's or the favicon.
            let targets = proxy.records.compactMap { record in record.legs.first?.request.map { "\($0.authority ?? "") \($0.path ?? "")" } }
            let server = "127.0.0.1:\(rig.started.listenAddress.port)"
            XCTAssertTrue(targets.allSatisfy { $0.hasPrefix(server) },
                          "\(name): \(targets)")
            let view = try String(contentsOfFile: ClientRunner.browserViewPath(forRecording: recording), encoding: .utf8)
            XCTAssertTrue(view.contains("\"protocol\":\"\(name)\""), view)
        }
    }

    func testACookieTheBrowserRefusesIsDiagnosed() throws {
        let run = try demo(.http2OrHTTP1, rules: """
            {"rules": [{"name": "samesite-none", "match": {"leg": "response", "step": "login-page"},
              "actions": [{"action": "rewrite-set-cookie", "cookie": "__intactLoginTx", "secure": false, "sameSite": "None"}]}]}
            """)
        let diagnosis = try XCTUnwrap(run.outcome.diagnosis)
        XCTAssertEqual(diagnosis.mode, .browserCookieRefused)
        XCTAssertEqual(diagnosis.step, .credentials)
        XCTAssertTrue(diagnosis.evidence.hasPrefix("the browser refused cookie __intactLoginTx: SameSite=None without Secure, set by the intermediary"),
                      diagnosis.evidence)
        XCTAssertEqual(diagnosis.sentence, .unmodified)
    }

    func testACSPFormActionThatBlocksTheCallbackIsDiagnosed() throws {
        let run = try demo(.http1Only, rules: """
            {"rules": [{"name": "csp", "match": {"leg": "response", "step": "login-page"},
              "actions": [{"action": "add-header", "name": "Content-Security-Policy", "value": "form-action 'self'"}]}]}
            """)
        let diagnosis = try XCTUnwrap(run.outcome.diagnosis)
        XCTAssertEqual(diagnosis.mode, .browserCSPBlocked)
        XCTAssertTrue(diagnosis.evidence.hasPrefix("the redirect to com.appian.tempo:// was blocked by the page's Content-Security-Policy form-action"),
                      diagnosis.evidence)
        XCTAssertEqual(diagnosis.sentence, .step7Callback)
    }

    /// Examples/faults/browser.json's HSTS rule: the login page answered with a redirect to its own URL over http
    /// (as a TLS-offloading intermediary that writes `http://` does) and `Strict-Transport-Security`, once.
    private static let hstsRule = #"""
        {"rules": [{"name": "hsts-then-http-redirect", "match": {"leg": "response", "step": "login-page", "times": 1},
          "actions": [{"action": "set-status", "status": 302, "location": "http://${authority}${target}"},
                      {"action": "add-header", "name": "Strict-Transport-Security", "value": "max-age=300"}]}]}
        """#

    func testAnHTTPRedirectTheBrowserUpgradesThroughHSTSIsDiagnosed() throws {
        // Chromium keeps HSTS for a name, never for 127.0.0.1: the demo serves under one, mapped to loopback.
        let run = try demo(.http2OrHTTP1, rules: RealBrowserFlowTests.hstsRule) { $0.publicHost = "intact-hsts.test" }
        let diagnosis = try XCTUnwrap(run.outcome.diagnosis)
        XCTAssertEqual(diagnosis.mode, .browserHSTS, diagnosis.evidence)
        XCTAssertEqual(diagnosis.step, .loginPage)
        XCTAssertEqual(diagnosis.sentence, .unmodified)
        XCTAssertTrue(diagnosis.evidence.hasPrefix("HSTS made the browser use https: https://intact-hsts.test:"), diagnosis.evidence)
        XCTAssertTrue(diagnosis.evidence.contains("(an internal 307, Non-Authoritative-Reason: HSTS) because the same answer set "
                                                  + "Strict-Transport-Security: max-age=300"), diagnosis.evidence)
        XCTAssertTrue(diagnosis.evidence.hasSuffix("/suite?… in plain http"), diagnosis.evidence)
        XCTAssertTrue(run.outcome.steps.first?.verdict == .pass, "the app reached intact-hsts.test through --resolve's mapping")
    }

    func testTheDemoServesUnderANameAndTheSimulatedBrowserStopsAtTheRedirectToHTTP() throws {
        // No Chromium needed: the app and the simulated browser dial the name through the client's resolve table.
        let plain = try FaultFlowRun.run([]) { $0.publicHost = "intact-hsts.test" }
        XCTAssertTrue(plain.outcome.succeeded, String(describing: plain.outcome.diagnosis))
        XCTAssertTrue(plain.outcome.steps.allSatisfy { $0.request.url.hasPrefix("https://intact-hsts.test:") }, "every step named the host")
        // The simulated browser keeps no HSTS: it reports the intermediary's redirect itself.
        let redirected = try FaultFlowRun.run(rules: RealBrowserFlowTests.hstsRule) { $0.publicHost = "intact-hsts.test" }
        XCTAssertEqual(redirected.outcome.diagnosis?.mode, .foreignResponse, String(describing: redirected.outcome.diagnosis))
        XCTAssertEqual(redirected.outcome.diagnosis?.step, .loginPage)
    }

    func testAFormActionRewrittenToHTTPIsStoppedByTheInsecureFormWarningNotUpgraded() throws {
        // Under a name (on 127.0.0.1 Chromium counts http as trustworthy and posts in plain http).
        let run = try demo(.http1Only, rules: #"""
            {"rules": [{"name": "http-form-action", "match": {"leg": "response", "step": "login-page"},
              "actions": [{"action": "add-header", "name": "Strict-Transport-Security", "value": "max-age=300"},
                          {"action": "regex-body", "pattern": "action=\"/", "template": "action=\"http://${authority}/"}]}]}
            """#) { $0.publicHost = "intact-hsts.test" }
        let diagnosis = try XCTUnwrap(run.outcome.diagnosis)
        XCTAssertEqual(diagnosis.mode, .browserFailed, diagnosis.evidence)
        XCTAssertEqual(diagnosis.step, .credentials)
        XCTAssertEqual(diagnosis.sentence, .unmodified)
        XCTAssertTrue(diagnosis.evidence.hasPrefix("the browser did not submit the sign-in form: its action http://intact-hsts.test:"),
                      diagnosis.evidence)
        XCTAssertTrue(diagnosis.evidence.contains("insecure-form warning"), diagnosis.evidence)
        XCTAssertTrue(diagnosis.evidence.hasSuffix("the intermediary rewrote it to http"), diagnosis.evidence)
    }

    func testAFormWithUnexpectedFieldsIsFilledAsFarAsPossibleAndTheMissingFieldNamed() throws {
        let page = #"<html><head><title>Sign in</title></head><body><form method=\"POST\" action=\"/suite/auth\"><input type=\"hidden\" name=\"csrf\" value=\"x\"><input type=\"email\" name=\"login\"><input type=\"text\" name=\"otp\"></form></body></html>"#
        let run = try demo(.http1Only, rules: """
            {"rules": [{"name": "odd-form", "match": {"leg": "response", "step": "login-page"},
              "actions": [{"action": "replace-body", "body": "\(page)", "contentType": "text/html"}]}]}
            """)
        let diagnosis = try XCTUnwrap(run.outcome.diagnosis)
        XCTAssertEqual(diagnosis.mode, .browserFailed)
        XCTAssertEqual(diagnosis.evidence, "the sign-in form has no password field (its fields: csrf:hidden, login:email, otp:text; filled: login)")
    }

    func testAPageWithoutAFormIsDiagnosed() throws {
        let run = try demo(.http1Only, rules: """
            {"rules": [{"name": "no-form", "match": {"leg": "response", "step": "login-page"},
              "actions": [{"action": "replace-body", "body": "<html><title>Welcome</title><p>Nothing to sign in with.</p></html>", "contentType": "text/html"}]}]}
            """)
        let diagnosis = try XCTUnwrap(run.outcome.diagnosis)
        XCTAssertEqual(diagnosis.step, .loginPage)
        XCTAssertTrue(diagnosis.evidence.contains("without a sign-in form"), diagnosis.evidence)
    }

    func testABrowserThatNeverLoadsThePageStopsAtTheLimitSayingWhatItDidLast() throws {
        let started = ContinuousClock.now
        let run = try demo(.http1Only, rules: """
            {"rules": [{"name": "hold", "match": {"leg": "response", "step": "login-page"}, "actions": [{"action": "stall"}]}]}
            """, timeout: .seconds(5))
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(20))
        let diagnosis = try XCTUnwrap(run.outcome.diagnosis)
        XCTAssertEqual(diagnosis.mode, .browserFailed)
        // Last it opened or requested the login URL (which, depends on how fast the browser got there).
        XCTAssertTrue(diagnosis.evidence.hasPrefix("the browser did not reach the callback within 5.0 s; last it "), diagnosis.evidence)
        XCTAssertTrue(diagnosis.evidence.contains(" https://127.0.0.1:"), diagnosis.evidence)
        XCTAssertTrue(run.browserView?.contains("\"activity\"") ?? false, "what was seen is recorded")
    }

    func testABrowserKilledMidFlowIsDiagnosedAndItsProfileRemoved() throws {
        guard case .chromium(let settings) = try chromium() else { return }
        let wrapper = makeTemporaryDirectory(prefix: "intact-killed-chromium") + "/chromium"
        // Kills the browser (the wrapper's pid, once exec'd) 3 s after it starts; the page is held meanwhile.
        try "#!/bin/sh\n( sleep 3; kill -9 $$ ) &\nexec \(settings.executable) \"$@\"\n".write(toFile: wrapper, atomically: true, encoding: .utf8)
        chmod(wrapper, 0o755)
        // Profiles go under TMPDIR: a directory of this test's own, so another run's browser
        // (a parallel test process) can neither hide a leftover nor look like one.
        let temporary = makeTemporaryDirectory(prefix: "intact-killed-chromium-tmp")
        let savedTemporary = getenv("TMPDIR").map { String(cString: $0) }
        setenv("TMPDIR", temporary, 1)
        defer { if let savedTemporary { setenv("TMPDIR", savedTemporary, 1) } else { unsetenv("TMPDIR") } }
        XCTAssertTrue(NSTemporaryDirectory().hasPrefix(temporary), "profiles are made under this test's TMPDIR")
        let run = try demo(.http1Only, rules: """
            {"rules": [{"name": "hold", "match": {"leg": "response", "step": "login-page"}, "actions": [{"action": "stall"}]}]}
            """, executable: wrapper) { configuration in
            // The browser holds a client certificate: its key is in the profile that must go.
            configuration.presentsClientCertificate = true
            configuration.browserPresentsClientCertificate = true
        }
        let diagnosis = try XCTUnwrap(run.outcome.diagnosis)
        XCTAssertEqual(diagnosis.mode, .browserFailed)
        XCTAssertTrue(diagnosis.evidence.hasPrefix("the browser was killed by signal 9"), diagnosis.evidence)
        XCTAssertTrue(diagnosis.evidence.contains("before the callback; last it "), diagnosis.evidence)
        let left = ((try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? [])
            .filter { $0.hasPrefix("intact-chromium-") || $0.hasPrefix("org.chromium.Chromium.") }
        XCTAssertEqual(left, [], "no profile left behind, nor Chromium's singleton directory in TMPDIR")
    }
}

extension XCTestCase {
    /// Chromium as the browser, or a skip where it is not installed (`make test` installs it).
    func installedChromium(timeout: Duration = .seconds(20), executable: String? = nil) throws -> ClientRunner.BrowserChoice {
        guard let found = try? ChromiumSettings.locate(environment: ProcessInfo.processInfo.environment) else {
            throw XCTSkip("Chromium is not installed (Debian package chromium)")
        }
        return .chromium(ChromiumSettings(executable: executable ?? found, timeout: timeout))
    }
}

/// A mock server and a forward proxy (CONNECT, leaves from one CA) in
/// front of it, both on loopback, the proxy recording.
struct ForwardRig {
    let directory: String
    let authority: CertificateAuthority
    let server: MockServerHost
    let started: MockServerHost.Started
    let proxy: ProxyServer
    let proxyAddress: SocketAddress
    let proxyRecording: String

    static func start(_ test: XCTestCase) throws -> ForwardRig {
        let directory = test.makeTemporaryDirectory(prefix: "intact-forward-rig")
        let authority = try CertificateAuthority.create(in: directory + "/ca")
        let server = MockServerHost(configuration: MockServerHost.Configuration(
            server: MockServerConfiguration(externalOrigin: Origin(scheme: "https", host: "127.0.0.1")),
            listenAddress: .loopbackIPv4(port: 0), externalOriginFollowsListener: true, certificate: .authority(authority)))
        let started = try server.start()
        var settings = ProxyConfiguration(authority: authority)
        settings.mode = .forward
        settings.listenPort = 0
        settings.upstreamVerification = .caFile(authority.certificatePath)
        settings.recording = ProxyConfiguration.Recording(path: directory + "/proxy.jsonl")
        settings.toolVersion = "test"
        let proxy = ProxyServer(configuration: settings)
        let address = try proxy.start()
        test.addTeardownBlock {
            _ = proxy.stopAndWait(drainTimeout: .seconds(2))
            server.stop()
        }
        return ForwardRig(directory: directory, authority: authority, server: server, started: started, proxy: proxy,
                          proxyAddress: address, proxyRecording: directory + "/proxy.jsonl")
    }

    func client(protocols: ClientRunner.Protocols) -> ClientRunner.Configuration {
        var flow = SignInFlow.Configuration(resourceURL: AbsoluteURL(started.server.contextURL.serialized + "/rest/whatever")!)
        flow.expectsTraceEcho = true
        return ClientRunner.Configuration(flow: flow, proxy: ForwardProxy(host: "127.0.0.1", port: Int(proxyAddress.port)),
                                          trust: .caFile(authority.certificatePath), protocols: protocols)
    }

    /// Stops the proxy and the server; returns the proxy's recording.
    func stop() throws -> Recording {
        _ = proxy.stopAndWait(drainTimeout: .seconds(2))
        server.stop()
        return try RecordingReader.read(path: proxyRecording)
    }
}
