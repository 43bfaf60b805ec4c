import Evidence
import Foundation
import XCTest
@testable import Scenarios

/// The example scenarios of the products beyond nginx and HAProxy, end to
/// end against the real product on loopback (Apache httpd, Caddy, Traffic
/// Server, Varnish behind hitch, nghttpx, Squid with ssl-bump, tinyproxy,
/// and a product run by a scenario's own commands). Each must give its
/// expected verdict and diagnosis; a few assert more than the expectation.
final class IntermediaryScenarioTests: XCTestCase {
    /// The scenarios this file runs (`LoadBalancerScenarioTests.testEveryExampleIsRun` keeps the union complete).
    static let covered: Set<String> = [
        "apache/good", "apache/defaults", "apache/error-override", "apache/deflate",
        "caddy/good", "caddy/defaults", "caddy/encode-gzip", "caddy/cookie-path",
        "trafficserver/good", "trafficserver/defaults", "trafficserver/normalize-accept-encoding",
        "trafficserver/strip-set-cookie",
        "varnish/good", "varnish/defaults", "varnish/strip-cookies", "varnish/gzip",
        "nghttpx/good", "nghttpx/defaults", "nghttpx/add-forwarded", "nghttpx/hsts",
        "squid/good", "squid/defaults", "squid/connect-ssl-ports", "squid/reply-body-limit",
        "tinyproxy/good", "tinyproxy/connect-port-443", "tinyproxy/filter-deny",
        "command/good",
        "apache/forwarding-fields", "caddy/forwarding-fields", "trafficserver/forwarding-fields", "nghttpx/forwarding-fields",
        "squid/forwarding-fields", "varnish/forwarding-fields",
        "varnish/cache-401", "varnish/cache-session", "squid/client-cert-gateway",
    ]

    private func run(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws -> ScenarioResult {
        try runExample(name, file: file, line: line)
    }

    @discardableResult
    private func runAll(_ names: [String], file: StaticString = #filePath, line: UInt = #line) throws -> [ScenarioResult] {
        try names.map { try run($0, file: file, line: line) }
    }

    func testApache() throws {
        let results = try runAll(["apache/good", "apache/defaults", "apache/error-override", "apache/deflate",
                                  "apache/forwarding-fields"])
        // ProxyPreserveHost Off: the upstream's address as Host, said as a Host change from tap A's to tap B's.
        let defaults = results[1]
        let hop = try XCTUnwrap(ScenarioExpectation.loadBalancerHop(in: defaults.report))
        let targets = defaults.report.exchanges.compactMap { $0.hops.first { $0.hop == hop.number } }
            .flatMap(\.request.differences).filter { $0.kind == .targetChanged }.map(\.text)
        XCTAssertEqual(Set(targets), ["Host changed (127.0.0.1:\(defaults.plan.ports.tapA) → 127.0.0.1:\(defaults.plan.ports.tapB))"])
        // ProxyErrorOverride: one diagnosis from one piece of evidence, Apache's HTML page in the 401's place.
        let override = results[2]
        XCTAssertEqual(override.client.outcome?.diagnosis?.mode, .html401)
        XCTAssertTrue(override.client.outcome?.diagnosis?.evidence.contains("401 with text/html") ?? false,
                      override.client.description)
        let challenge = try XCTUnwrap(override.report.exchanges.first { $0.step?.rawValue == "challenge-401" })
        XCTAssertEqual(challenge.hops.first { $0.hop == hop.number }?.response.outcome, .modified)
    }

    func testCaddy() throws {
        try runAll(["caddy/good", "caddy/defaults", "caddy/encode-gzip", "caddy/cookie-path", "caddy/forwarding-fields"])
    }

    func testTrafficServer() throws {
        let results = try runAll(["trafficserver/good", "trafficserver/defaults", "trafficserver/normalize-accept-encoding",
                                  "trafficserver/strip-set-cookie", "trafficserver/forwarding-fields"])
        // Its private runroot: nothing outside the run directory.
        let runroot = try String(contentsOfFile: results[0].plan.files.workDirectory + "/runroot.yaml", encoding: .utf8)
        XCTAssertTrue(runroot.contains("sysconfdir: \(results[0].plan.files.workDirectory)/etc"), runroot)
    }

    func testVarnish() throws {
        let results = try runAll(["varnish/good", "varnish/defaults", "varnish/strip-cookies", "varnish/gzip",
                                  "varnish/forwarding-fields"])
        // hitch in front, Varnish on the inner port, plain HTTP to tap B.
        let plan = results[0].plan
        XCTAssertEqual(plan.services.map(\.role), [.server, .tapB, .innerIntermediary, .loadBalancer, .tapA])
        XCTAssertTrue(plan.services[1].arguments.contains("--listen-plain"))
        // The scheme tap B's plain listener changes is never a target change, even beside Varnish's fields.
        for result in results {
            let targets = result.report.exchanges.flatMap(\.hops).flatMap { $0.request.differences + $0.response.differences }
                .filter { $0.kind == .targetChanged }
            XCTAssertEqual(targets.map(\.text), [], result.plan.scenario.name)
        }
    }

    /// Two apps one after the other behind a Varnish that caches: the second
    /// gets the first's answer, named a copy of that exchange by the client and
    /// by verify, loudly when the answer is a signed-in request's.
    func testVarnishServesTheFirstAppsAnswerToTheSecond() throws {
        let challenge = try run("varnish/cache-401")
        XCTAssertTrue(challenge.earlierClients.map(\.succeeded) == [true], challenge.summary)
        let copy = try XCTUnwrap(challenge.report.exchanges.lazy.compactMap { $0.hops.compactMap(\.response.cachedCopy).first }.first)
        XCTAssertEqual(copy.exchange, 1, "the first app's 401")
        XCTAssertFalse(copy.carriesSession, "a 401 without cookies carries no session")
        XCTAssertFalse(challenge.client.outcome?.diagnosis?.evidence.contains("WARNING") ?? true)

        let session = try run("varnish/cache-session")
        let signedIn = try XCTUnwrap(session.report.exchanges.lazy.compactMap { $0.hops.compactMap(\.response.cachedCopy).first }.first)
        XCTAssertTrue(signedIn.carriesSession, "the first app's signed-in answer")
        XCTAssertTrue(session.summary.contains("WARNING: the copy carries a session"), session.summary)
        let evidence = try XCTUnwrap(session.client.outcome?.diagnosis?.evidence)
        XCTAssertTrue(evidence.contains("WARNING: this request carried a session (cookies) and got another client's answer"), evidence)
    }

    func testNghttpx() throws {
        try runAll(["nghttpx/good", "nghttpx/defaults", "nghttpx/add-forwarded", "nghttpx/hsts", "nghttpx/forwarding-fields"])
    }

    /// Squid's ssl-bump: tap A got certificates Squid minted, and the summary says so.
    func testSquidReoriginatesTLS() throws {
        let results = try runAll(["squid/good", "squid/defaults", "squid/connect-ssl-ports", "squid/reply-body-limit", "squid/forwarding-fields"])
        guard case .reoriginated(_, let minted, _)? = results[0].intermediaryTLS else {
            return XCTFail("\(String(describing: results[0].intermediaryTLS))")
        }
        XCTAssertGreaterThanOrEqual(minted, 1)
        XCTAssertTrue(results[0].summary.contains("  tls:      re-originated TLS: Squid terminated tap A's TLS"), results[0].summary)
    }

    /// tinyproxy only tunnels: the hop is identical on every exchange, and the summary says it was a tunnel.
    func testTinyproxyIsABlindTunnel() throws {
        let results = try runAll(["tinyproxy/good", "tinyproxy/connect-port-443", "tinyproxy/filter-deny"])
        let good = results[0]
        guard case .tunnel? = good.intermediaryTLS else { return XCTFail("\(String(describing: good.intermediaryTLS))") }
        let hop = try XCTUnwrap(ScenarioExpectation.loadBalancerHop(in: good.report))
        for exchange in good.report.exchanges {
            XCTAssertEqual(exchange.hops.first { $0.hop == hop.number }?.verdict, .identical, "\(exchange.hops)")
        }
        XCTAssertTrue(good.summary.contains("  tls:      blind tunnel: tinyproxy relayed tap A's TLS"), good.summary)
    }

    /// Squid's ssl-bump in front of a certificate gateway (tap B requiring a
    /// client certificate): Squid answers itself, and verify attaches tap B's
    /// refusal to that exchange. Its inspection CA has a name of its own: with
    /// the run CA's name, tap A checked Squid's certificates (which carry no
    /// authority key identifier) against the run CA and refused them.
    func testSquidInFrontOfACertificateGatewayAnswersItselfWithTheGatewaysRefusalAttached() throws {
        let result = try run("squid/client-cert-gateway")
        let evidence = try XCTUnwrap(result.client.outcome?.diagnosis?.evidence)
        XCTAssertTrue(evidence.hasPrefix("foreign 503 from squid/5.7, not from the server (X-Squid-Error: ERR_SECURE_CONNECT_FAIL"),
                      evidence)
        let hop = try XCTUnwrap(ScenarioExpectation.loadBalancerHop(in: result.report))
        let cell = try XCTUnwrap(result.report.exchanges.first?.hops.first { $0.hop == hop.number })
        XCTAssertEqual(cell.verdict, .foreign)
        XCTAssertEqual(cell.failures.map(\.tap), ["tap-b"])
        let bumpCA = try String(contentsOfFile: try XCTUnwrap(result.plan.files.bumpCADirectory) + "/ca-cert.pem", encoding: .utf8)
        let runCA = try String(contentsOfFile: result.plan.files.caCertificate, encoding: .utf8)
        XCTAssertNotEqual(bumpCA, runCA)
    }

    func testACommandScenarioRunsTheProductItNames() throws {
        let result = try run("command/good")
        XCTAssertEqual(result.plan.services.first { $0.role == .loadBalancer }?.displayName, "nginx (own commands)")
    }
}
