import Foundation
import IntactTestSupport
import XCTest
@testable import Scenarios

/// What the runner does before anything keeps running: ports, run files and
/// the load balancer's own configuration check, with real nginx and HAProxy.
final class ScenarioRunnerPreparationTests: XCTestCase {
    private func runner() -> ScenarioRunner {
        let parent = makeTemporaryDirectory(prefix: "intact-scenario-test")
        chmod(parent, 0o711)  // Squid's user passes through to its directory
        return ScenarioRunner(options: ScenarioRunner.Options(intactExecutable: "/bin/false", runParent: parent))
    }

    func testEveryExampleConfigurationPassesItsLoadBalancersCheck() throws {
        let runner = runner()
        for scenario in try ScenarioCatalog.load([ScenarioFixtures.examples]) {
            let plan = try runner.prepare(scenario)
            let rendered = try String(contentsOfFile: plan.files.renderedConfig, encoding: .utf8)
            XCTAssertFalse(rendered.contains("{{"), "\(scenario.name): a placeholder is left")
            XCTAssertTrue(FileManager.default.fileExists(atPath: plan.files.caCertificate))
            XCTAssertEqual(FileManager.default.fileExists(atPath: plan.files.clientCertificate),
                           scenario.tapAPresentsClientCertificate, scenario.name)
        }
    }

    func testTheLoadBalancersCertificateIsIssuedByTheRunsCAForTheLoopbackAddress() throws {
        let plan = try runner().prepare(try ScenarioFixtures.example("haproxy/good"))
        let verify = try ToolRun.openssl(["verify", "-CAfile", plan.files.caCertificate, "-verify_ip", "127.0.0.1",
                                          plan.files.loadBalancerBundle])
        XCTAssertEqual(verify.status, 0, verify.output + verify.error)
        let bundle = try String(contentsOfFile: plan.files.loadBalancerBundle, encoding: .utf8)
        XCTAssertTrue(bundle.contains("BEGIN CERTIFICATE") && bundle.contains("PRIVATE KEY"))
        let mode = try FileManager.default.attributesOfItem(atPath: plan.files.loadBalancerBundle)[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600)
    }

    func testABrokenNginxConfigurationIsRejectedWithNginxsOwnMessage() throws {
        let directory = try makeScenarioDirectory([
            "scenario.json": ScenarioTests.minimalManifest,
            "nginx.conf": "# broken\nevents {}\nhttp {\n    server {\n        retrun 200;\n    }\n}\n",
        ])
        let error = scenarioError { try runner().prepare(try Scenario.load(from: directory)) }
        guard case let .configRejected(tool, file, output)? = error else { return XCTFail("\(String(describing: error))") }
        XCTAssertEqual(tool, "nginx")
        XCTAssertEqual(file, directory + "/nginx.conf")
        XCTAssertTrue(output.contains(#"unknown directive "retrun""#), output)
        XCTAssertTrue(error?.description.hasPrefix("nginx rejected the configuration rendered from \(directory)/nginx.conf:\n    ") == true)
    }

    func testABrokenHAProxyConfigurationIsRejectedWithHAProxysOwnMessage() throws {
        let directory = try makeScenarioDirectory([
            "scenario.json": ScenarioTests.minimalManifest.replacingOccurrences(of: "nginx", with: "haproxy"),
            "haproxy.cfg": "# broken\ndefaults\n    mode http\nfrontend f\n    bind {{LISTEN}}\n    http-request retrun status 200\n",
        ])
        let error = scenarioError { try runner().prepare(try Scenario.load(from: directory)) }
        guard case let .configRejected(tool, _, output)? = error else { return XCTFail("\(String(describing: error))") }
        XCTAssertEqual(tool, "HAProxy")
        XCTAssertTrue(output.contains("retrun"), output)
    }

    func testAnUnknownPlaceholderIsReportedBeforeAnyFileIsWritten() throws {
        let directory = try makeScenarioDirectory([
            "scenario.json": ScenarioTests.minimalManifest,
            "nginx.conf": "# x\nevents {}\nhttp { server { listen {{LISTEN_PORTS}}; } }\n",
        ])
        let runner = runner()
        let error = scenarioError { try runner.prepare(try Scenario.load(from: directory)) }
        guard case let .configTemplate(file, line, _)? = error else { return XCTFail("\(String(describing: error))") }
        XCTAssertEqual(file, directory + "/nginx.conf")
        XCTAssertEqual(line, 3)
        let runs = try FileManager.default.contentsOfDirectory(atPath: runner.options.runParent)
        XCTAssertEqual(runs.count, 1)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: runner.options.runParent + "/" + runs[0]), [],
                       "nothing written for a template error")
    }

    func testAPortInUseIsReportedBeforeAnythingStarts() throws {
        let listener = try LoopbackSocket.bound(port: 0)
        defer { close(listener) }
        XCTAssertEqual(listen(listener, 1), 0)
        let taken = try LoopbackSocket.localPort(listener)
        var options = ScenarioRunner.Options(intactExecutable: "/bin/false", runParent: makeTemporaryDirectory(prefix: "intact-scenario-test"))
        options.ports = ScenarioPorts(base: taken)
        let runner = ScenarioRunner(options: options)
        // The run uses taken...taken+3; another process may hold one of the
        // others by chance, and then that one is reported instead (also right).
        let error = scenarioError { try runner.run(try ScenarioFixtures.example("nginx/good")) }
        guard case let .portInUse(port, role)? = error else { return XCTFail("\(String(describing: error))") }
        XCTAssertTrue((taken...taken + 3).contains(port), "reported port \(port), taken \(taken)")
        if port == taken { XCTAssertEqual(role, "tap A") }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: options.runParent), [], "no run directory made")
    }
}
