import AuthFlow
import Evidence
import Foundation
import IntactTestSupport
import XCTest
@testable import IntactCLI
@testable import Scenarios

/// Every example scenario, end to end: the built `intact` runs the mock
/// server, both taps and the client around real nginx and HAProxy on
/// loopback, and each scenario must give its expected verdict and diagnosis.
/// Scenarios run one after the other (each test starts and stops its own
/// processes).
final class LoadBalancerScenarioTests: XCTestCase {
    /// The scenarios this file runs; `testEveryExampleIsRun` keeps it complete.
    static let covered: Set<String> = [
        "nginx/good", "nginx/hide-set-cookie", "nginx/error-page-401", "nginx/sub-filter", "nginx/proxy-redirect",
        "nginx/auth-request", "nginx/maintenance-return", "nginx/plain-to-tls-port", "nginx/client-cert", "nginx/client-cert-missing",
        "nginx/forwarding-fields", "nginx/forwarding-fields-strict", "nginx/proxy-cookie-path",
        "haproxy/good", "haproxy/del-set-cookie", "haproxy/html-401", "haproxy/compression",
        "haproxy/compression-by-server", "haproxy/plain-http", "haproxy/replace-location",
        "haproxy/cookie-gate", "haproxy/maintenance-return", "haproxy/client-cert", "haproxy/client-cert-missing",
        "haproxy/forwarding-fields", "haproxy/forwarding-fields-strict", "haproxy/ip-allowlist",
        "haproxy/health-check", "haproxy/sticky-cookie", "haproxy/redirect-scheme-https",
    ]

    private func options() throws -> ScenarioRunner.Options { try scenarioRunOptions() }

    @discardableResult
    private func run(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws -> ScenarioResult {
        try runExample(name, file: file, line: line)
    }

    func testEveryExampleIsRun() throws {
        let names = Set(try ScenarioCatalog.load([ScenarioFixtures.examples]).map(\.name))
        let covered = Self.covered.union(IntermediaryScenarioTests.covered)
        XCTAssertEqual(names.subtracting(covered), [], "examples without a test here or in IntermediaryScenarioTests")
        XCTAssertEqual(covered.subtracting(names), [], "tests of examples that do not exist")
    }

    // MARK: nginx

    func testNginxGood() throws {
        let result = try run("nginx/good")
        // Proof the path really crossed nginx: every exchange reached the server on every hop.
        XCTAssertGreaterThanOrEqual(result.report.exchanges.count, 5)
        for exchange in result.report.exchanges {
            XCTAssertTrue(exchange.hops.allSatisfy { $0.verdict == .identical || $0.verdict == .equivalent }, "\(exchange.hops)")
        }
    }

    func testNginxHideSetCookie() throws { try run("nginx/hide-set-cookie") }
    func testNginxErrorPage401() throws { try run("nginx/error-page-401") }
    func testNginxSubFilter() throws { try run("nginx/sub-filter") }
    func testNginxProxyRedirect() throws { try run("nginx/proxy-redirect") }
    func testNginxAuthRequest() throws { try run("nginx/auth-request") }
    func testNginxMaintenanceReturn() throws { try run("nginx/maintenance-return") }

    /// nginx's `proxy_pass http://` to tap B's TLS port: tap B's refused
    /// handshake is listed beside the exchange nginx answered itself, in
    /// words that name the cause, and counted as a failed handshake.
    func testNginxPlainHTTPToATLSPortNamesTapBsRefusal() throws {
        let result = try run("nginx/plain-to-tls-port")
        let exchange = try XCTUnwrap(result.report.exchanges.first)
        let hop = try XCTUnwrap(exchange.hops.first { $0.verdict == .foreign })
        let explanation = try XCTUnwrap(hop.failures.first?.explanation, "\(hop.failures)")
        XCTAssertTrue(explanation.hasPrefix("tap-b refused plain HTTP on its TLS port at "), explanation)
        XCTAssertTrue(explanation.hasSuffix(": the intermediary in front of it speaks http:// to it"), explanation)
        XCTAssertEqual(result.report.connections.first?.outcomes, [.handshakeFailed: 1])
        XCTAssertEqual(result.report.connections.first?.failures.first?.pairedExchange, exchange.number)
    }
    func testNginxClientCert() throws { try run("nginx/client-cert") }
    func testNginxClientCertMissing() throws { try run("nginx/client-cert-missing") }
    func testNginxForwardingFields() throws { try run("nginx/forwarding-fields") }
    func testNginxForwardingFieldsStrict() throws { try run("nginx/forwarding-fields-strict") }

    /// proxy_cookie_path changes only the cookies' Path: the report and the
    /// client name that attribute, never a changed secret.
    func testNginxProxyCookiePathNamesTheAttribute() throws {
        let result = try run("nginx/proxy-cookie-path")
        let hop = try XCTUnwrap(ScenarioExpectation.loadBalancerHop(in: result.report))
        let bootstrap = try XCTUnwrap(result.report.exchanges.first { $0.step == "bootstrap" })
        let texts = try XCTUnwrap(bootstrap.hops.first { $0.hop == hop.number }).response.differences.map(\.text)
        XCTAssertEqual(texts, ["JSESSIONID: Path changed (/suite → /)", "__appianCsrfToken: Path changed (/suite → /)",
                               "__appianMultipartCsrfToken: Path changed (/suite → /)"])
        XCTAssertEqual(result.client.outcome?.diagnosis?.evidence, "JSESSIONID: Path changed (/suite → /)")
    }

    // MARK: HAProxy

    func testHAProxyGood() throws { try run("haproxy/good") }
    func testHAProxyDelSetCookie() throws { try run("haproxy/del-set-cookie") }
    func testHAProxyHTML401() throws { try run("haproxy/html-401") }
    /// The app asks for gzip (the client's default), the server answers
    /// unencoded, HAProxy encodes on the way: the client says so.
    func testHAProxyCompression() throws {
        let result = try run("haproxy/compression")
        XCTAssertEqual(result.client.outcome?.diagnosis?.evidence,
                       "response has Content-Encoding: gzip, which the app accepts, but the server sent its body unencoded "
                           + "(no Intact-Content-Encoding: gzip): it was compressed on the way")
    }

    /// Tap A speaks plain HTTP to a HAProxy listener without TLS: the scheme
    /// change is tap A's own choice, shown as an equivalence, never a modification.
    func testHAProxyPlainHTTPListener() throws {
        let result = try run("haproxy/plain-http")
        let reasons = result.report.exchanges.flatMap { $0.hops.flatMap(\.request.reasons) }
        XCTAssertTrue(reasons.contains { $0.kind == .tapScheme && $0.text.hasPrefix("scheme https → http: tap-a's own upstream (reverse:http://") },
                      "\(reasons)")
        XCTAssertTrue(reasons.contains { $0.kind == .tapScheme && $0.text.hasPrefix("scheme http → https: tap-a's own upstream") })
    }

    /// The same HAProxy in front of a server that gzips its own answers: no alarm.
    func testHAProxyCompressionByServer() throws {
        let result = try run("haproxy/compression-by-server")
        let checks = (result.client.outcome?.steps ?? []).flatMap(\.checks).map(\.message)
        XCTAssertTrue(checks.contains("body gzip-encoded by the server itself (Intact-Content-Encoding), decoded"), "\(checks)")
    }
    func testHAProxyReplaceLocation() throws { try run("haproxy/replace-location") }
    func testHAProxyCookieGate() throws { try run("haproxy/cookie-gate") }
    /// `http-request redirect scheme https` behind a TLS terminator: the
    /// redirect to the app's own resource is HAProxy answering itself.
    func testHAProxyRedirectSchemeHTTPSIsAForeignRedirectToTheSameResource() throws {
        let result = try run("haproxy/redirect-scheme-https")
        let evidence = try XCTUnwrap(result.client.outcome?.diagnosis?.evidence)
        XCTAssertTrue(evidence.contains(": a redirect to the very URL requested (a loop: "), evidence)
    }

    func testHAProxyMaintenanceReturn() throws { try run("haproxy/maintenance-return") }
    func testHAProxyClientCert() throws { try run("haproxy/client-cert") }
    func testHAProxyClientCertMissing() throws { try run("haproxy/client-cert-missing") }
    func testHAProxyForwardingFields() throws { try run("haproxy/forwarding-fields") }
    func testHAProxyForwardingFieldsStrict() throws { try run("haproxy/forwarding-fields-strict") }
    func testHAProxyIPAllowlistRefusesConnections() throws { try run("haproxy/ip-allowlist") }

    /// HAProxy's own health checks (option httpchk) reach tap B, never tap A:
    /// listed as intermediary requests, and the strict policy holds.
    func testHAProxyHealthChecksAreIntermediaryRequests() throws {
        let result = try run("haproxy/health-check")
        let checks = result.report.intermediaryRequests
        XCTAssertGreaterThanOrEqual(checks.total, 1)
        XCTAssertEqual(checks.groups.map(\.target), ["/suite/cors/ping"])
        XCTAssertEqual(checks.groups.map(\.tap), ["tap-b"])
        XCTAssertEqual(checks.groups.first?.statuses, [200])
        XCTAssertFalse(result.report.exchanges.contains { $0.target == "/suite/cors/ping" }, "a check is not an exchange of the app")
        XCTAssertTrue(result.report.policyHolds)
        // A policy that forbids them fails on the same recordings.
        let recordings = try ScenarioPlan.tapNames.map { try RecordingReader.read(path: result.plan.files.recordings[$0] ?? "") }
        let forbidding = Verifier(Verifier.Configuration(policy: VerificationPolicy(name: "no-checks", intermediaryRequests: .forbid),
                                                         path: ScenarioPlan.tapNames))
        XCTAssertFalse(try forbidding.verify(recordings).policyHolds)
    }

    /// HAProxy's `cookie SERVERID insert indirect nocache`: the affinity
    /// cookie added to responses and removed from requests, tolerated by the
    /// shipped load-balancer policy by name; the strict policy fails on it.
    func testHAProxyStickyCookieIsToleratedByTheLoadBalancerPolicy() throws {
        let result = try run("haproxy/sticky-cookie")
        let hop = try XCTUnwrap(ScenarioExpectation.loadBalancerHop(in: result.report))
        let cells = result.report.exchanges.compactMap { $0.hops.first { $0.hop == hop.number } }
        let requestTexts = Set(cells.flatMap(\.request.differences).map(\.text))
        let responseTexts = Set(cells.flatMap(\.response.differences).map(\.text))
        XCTAssertEqual(requestTexts, ["SERVERID removed"])
        XCTAssertEqual(responseTexts, ["SERVERID added"])
        XCTAssertTrue(cells.flatMap { $0.request.differences + $0.response.differences }.allSatisfy { $0.toleratedBy != nil })
        let recordings = try ScenarioPlan.tapNames.map { try RecordingReader.read(path: result.plan.files.recordings[$0] ?? "") }
        XCTAssertFalse(try Verifier(Verifier.Configuration(path: ScenarioPlan.tapNames)).verify(recordings).policyHolds,
                       "the strict policy does not tolerate the affinity cookie")
    }

    // MARK: Bad input

    /// A load balancer that is not running: the client cannot reach it
    /// through tap A (whose 502 says so in Proxy-Status), and both the
    /// client and the report say where the exchange broke.
    func testALoadBalancerThatIsNotRunningIsDiagnosedWithWhere() throws {
        var options = try options()
        options.loadBalancerDown = true
        let result = try ScenarioRunner(options: options).run(try ScenarioFixtures.example("nginx/good"))
        XCTAssertNil(result.mismatches)
        XCTAssertFalse(result.client.succeeded)
        let diagnosis = try XCTUnwrap(result.client.outcome?.diagnosis, result.summary)
        XCTAssertEqual(diagnosis.step, .protectedRequest, result.summary)
        XCTAssertEqual(diagnosis.mode, .transportFailure, result.summary)
        let address = "127.0.0.1:\(result.plan.ports.loadBalancer)"
        XCTAssertTrue(diagnosis.evidence.contains("it could not reach its upstream (Proxy-Status error=connection_refused")
                      && diagnosis.evidence.contains(address), diagnosis.evidence)
        XCTAssertFalse(result.report.policyHolds)
        let hop = try XCTUnwrap(ScenarioExpectation.loadBalancerHop(in: result.report))
        let first = try XCTUnwrap(result.report.exchanges.first)
        let cell = try XCTUnwrap(first.hops.first { $0.hop == hop.number })
        XCTAssertEqual(cell.verdict, .broken, result.summary)
        XCTAssertTrue(cell.failures.contains { $0.tap == "tap-a" && "\($0)".contains(address) },
                      "the failure names tap A and the load balancer's address: \(cell.failures)")
    }

    /// An HAProxy template written before `{{LISTEN}}` existed binds the
    /// address and port itself: it still runs (the runner releases the
    /// reservation just before HAProxy starts and waits until it listens).
    func testAnHAProxyTemplateThatBindsTheAddressAndPortStillRuns() throws {
        let directory = try makeScenarioDirectory([
            "scenario.json": ScenarioTests.minimalManifest.replacingOccurrences(of: "nginx", with: "haproxy"),
            "haproxy.cfg": try String(contentsOfFile: ScenarioFixtures.examples + "/haproxy/good/haproxy.cfg", encoding: .utf8)
                .replacingOccurrences(of: "bind {{LISTEN}}", with: "bind {{LISTEN_ADDRESS}}:{{LISTEN_PORT}}"),
        ])
        let scenario = try Scenario.load(from: directory)
        XCTAssertFalse(scenario.configBindsListen)
        let result = try ScenarioRunner(options: try options()).run(scenario)
        XCTAssertEqual(result.mismatches, [], result.summary)
        XCTAssertFalse(result.plan.services.first { $0.role == .loadBalancer }?.inheritsListener ?? true)
    }

    /// An nginx whose `listen` names another address than the socket it
    /// inherits closes that socket: a clear error naming it and the address,
    /// and nothing left running.
    func testAnNginxThatDropsTheHandedSocketIsAClearError() throws {
        let directory = try makeScenarioDirectory([
            "scenario.json": ScenarioTests.minimalManifest,
            "nginx.conf": "events {}\nhttp {\n    server {\n        listen 127.0.0.2:{{LISTEN_PORT}};\n"
                + "        return 200;\n    }\n}\n",
        ])
        let runner = ScenarioRunner(options: try options())
        let error = scenarioError { try runner.run(try Scenario.load(from: directory)) }
        guard case let .droppedListener(role, address, _)? = error else { return XCTFail("\(String(describing: error))") }
        XCTAssertEqual(role, "nginx (configuration \(directory)/nginx.conf)", "the product and its file")
        XCTAssertTrue(address.hasPrefix("127.0.0.1:"), address)
        let port = try XCTUnwrap(address.split(separator: ":").last.flatMap { Int($0) })
        XCTAssertFalse(LoopbackSocket.isListening(port: port), "nothing of the run keeps the port")
    }

    /// The command line prints the verdict and keeps nothing of a run that went as expected.
    func testTheCommandPrintsTheVerdict() throws {
        let options = try options()
        let output = CapturedOutput()
        let error = CapturedOutput()
        let status = IntactCommandLine.run(
            ["scenario", "run", ScenarioFixtures.examples + "/haproxy/del-set-cookie", "--intact", options.intactExecutable,
             "--run-dir", options.runParent],
            context: CommandContext(standardOutput: output.writer, standardError: error.writer))
        XCTAssertEqual(status, 0, output.text + error.text)
        XCTAssertTrue(output.text.contains("  client:   FAILED, strip-set-cookie at token-exchange"), output.text)
        XCTAssertTrue(output.text.contains("  verify:   policy strict FAILS"), output.text)
        XCTAssertTrue(output.text.contains("  result:   as expected (a broken configuration, caught)"), output.text)
        XCTAssertTrue(output.text.hasSuffix("1 scenario: every outcome as expected.\n"), output.text)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: options.runParent), [])
    }
}
