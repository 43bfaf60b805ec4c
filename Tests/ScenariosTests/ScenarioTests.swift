import AuthFlow
import Evidence
import Foundation
import IntactTestSupport
import XCTest
@testable import Scenarios

/// Loading `scenario.json`: the examples, and every kind of mistake.
final class ScenarioTests: XCTestCase {
    static let minimalManifest = """
        {"summary": "s", "loadBalancer": "nginx",
         "expect": {"client": {"succeeds": true}, "verify": {"holds": true}}}
        """

    func testEveryExampleLoadsWithAUniqueNameAndSaysWhatItBreaks() throws {
        let scenarios = try ScenarioCatalog.load([ScenarioFixtures.examples])
        XCTAssertGreaterThanOrEqual(scenarios.count, 20)
        XCTAssertEqual(Set(scenarios.map(\.name)).count, scenarios.count)
        for kind in IntermediaryKind.builtIn {
            XCTAssertTrue(scenarios.contains { $0.intermediary == kind && $0.expectation.isGood }, "no good \(kind.name) scenario")
            XCTAssertGreaterThanOrEqual(scenarios.filter { $0.intermediary == kind && !$0.expectation.isGood }.count, 2,
                                        "fewer than two broken \(kind.name) scenarios")
        }
        for scenario in scenarios {
            XCTAssertTrue(scenario.name.hasPrefix(scenario.intermediary.name + "/"), scenario.name)
            let config = try String(contentsOfFile: scenario.configFile, encoding: .utf8)
            if scenario.configFile.hasSuffix(".json") {
                // JSON has no comments: a README beside it says what it shows, line by line.
                XCTAssertTrue(FileManager.default.fileExists(atPath: scenario.directory + "/README.md"),
                              "\(scenario.name): a JSON configuration needs a README.md saying what it shows")
            } else {
                XCTAssertTrue(config.hasPrefix("#"), "\(scenario.name): the configuration starts with a comment saying what it shows")
            }
            if !scenario.expectation.isGood {
                XCTAssertNotNil(scenario.breaks, "\(scenario.name) must say which sentence it breaks")
            }
            // A broken configuration of its own marks the lines that break it.
            if !scenario.expectation.isGood && scenario.configFile.hasPrefix(scenario.directory + "/") {
                XCTAssertTrue(config.contains("BROKEN"), "\(scenario.name): mark the breaking lines with BROKEN")
            }
        }
    }

    func testAManifestReadsEveryField() throws {
        let directory = try makeScenarioDirectory([
            "scenario.json": """
                {"summary": "hides cookies", "loadBalancer": "haproxy", "config": "lb.cfg",
                 "breaks": "step 11", "policy": "p.json", "tapA": {"clientCertificate": true},
                 "expect": {"client": {"succeeds": false, "diagnosis": "strip-set-cookie", "step": "token-exchange"},
                            "verify": {"holds": false, "exchange": "bootstrap", "verdict": "modified",
                                       "difference": {"message": "response", "kind": "field-removed", "field": "Set-Cookie"}}}}
                """,
            "lb.cfg": "# x\n",
            "p.json": #"{"tolerate": [{"field": "Via"}]}"#,
        ])
        let scenario = try Scenario.load(from: directory)
        XCTAssertEqual(scenario.name, "custom/scenario")
        XCTAssertEqual(scenario.intermediary, IntermediaryKind.named("haproxy"))
        XCTAssertEqual(scenario.configFile, directory + "/lb.cfg")
        XCTAssertEqual(scenario.policyFile, directory + "/p.json")
        XCTAssertEqual(scenario.breaks, "step 11")
        XCTAssertTrue(scenario.tapAPresentsClientCertificate)
        XCTAssertEqual(scenario.expectation.client, .fails(diagnosis: .stripSetCookie, step: .tokenExchange))
        XCTAssertEqual(scenario.expectation.verify, .fails(.init(
            step: .bootstrap, verdict: .modified,
            difference: .init(message: .response, kind: .fieldRemoved, field: "set-cookie"))))
        XCTAssertFalse(scenario.expectation.isGood)
    }

    func testTapOptionsAndSeveralDifferencesAreRead() throws {
        let directory = try makeScenarioDirectory([
            "scenario.json": """
                {"summary": "s", "loadBalancer": "nginx",
                 "tapA": {"plainHTTP": true, "recordSecrets": true, "faults": ["strip-set-cookie"]},
                 "tapB": {"faults": ["compress", "foreign-response:status=503"], "faultRules": "rules.json"},
                 "expect": {"client": {"succeeds": true},
                            "verify": {"holds": false, "exchange": "bootstrap", "verdict": "modified",
                                       "difference": {"message": "response", "kind": "field-removed", "field": "Set-Cookie"},
                                       "differences": [{"message": "response", "kind": "cookie-changed", "field": "set-cookie",
                                                        "cookie": "JSESSIONID", "text": "JSESSIONID: Path changed (/suite → /)"}]}}}
                """,
            "nginx.conf": "# x\n",
            "rules.json": #"{"rules": []}"#,
        ])
        let scenario = try Scenario.load(from: directory)
        XCTAssertEqual(scenario.tapA, ScenarioTapOptions(recordSecrets: true, faults: ["strip-set-cookie"], plainHTTP: true))
        XCTAssertEqual(scenario.tapB, ScenarioTapOptions(faults: ["compress", "foreign-response:status=503"],
                                                         faultRules: directory + "/rules.json"))
        guard case .fails(let failure) = scenario.expectation.verify else { return XCTFail("expected a failure") }
        XCTAssertEqual(failure.differences.count, 2)
        XCTAssertEqual(failure.differences[1].cookie, "JSESSIONID")
        XCTAssertEqual(failure.differences[1].description,
                       "response cookie-changed set-cookie JSESSIONID \"JSESSIONID: Path changed (/suite → /)\"")

        let plan = ScenarioPlan(scenario: scenario, ports: ScenarioPorts(tapA: 1, loadBalancer: 2, tapB: 3, server: 4),
                                runDirectory: "/run", intactExecutable: "/bin/intact", loadBalancerExecutable: "/bin/nginx")
        let tapA = try XCTUnwrap(plan.services.first { $0.role == .tapA }).arguments
        XCTAssertTrue(tapA.contains("reverse:http://127.0.0.1:2"), "\(tapA)")
        XCTAssertTrue(tapA.contains("--record-secrets"))
        XCTAssertEqual(tapA.firstIndex(of: "strip-set-cookie").map { tapA[$0 - 1] }, "--fault")
        let tapB = try XCTUnwrap(plan.services.first { $0.role == .tapB }).arguments
        XCTAssertEqual(tapB.filter { $0 == "--fault" }.count, 2)
        XCTAssertEqual(tapB.firstIndex(of: "--faults").map { tapB[$0 + 1] }, directory + "/rules.json")
        XCTAssertFalse(tapB.contains("--record-secrets"))
    }

    func testClientRequestFieldsAndServerGzipAreReadAndPassedOn() throws {
        let manifest = Self.minimalManifest.replacingOccurrences(
            of: #""loadBalancer": "nginx","#,
            with: #""loadBalancer": "nginx", "client": {"requestFields": ["Accept-Encoding: gzip, br", "User-Agent:"]}, "server": {"gzip": true},"#)
        XCTAssertNotEqual(manifest, Self.minimalManifest)
        let directory = try makeScenarioDirectory(["scenario.json": manifest, "nginx.conf": "# x\n"])
        let scenario = try Scenario.load(from: directory)
        XCTAssertEqual(scenario.clientRequestFields.map(\.description), ["Accept-Encoding: gzip, br", "User-Agent: "])
        XCTAssertTrue(scenario.serverGzips)
        let plan = ScenarioPlan(scenario: scenario, ports: ScenarioPorts(tapA: 1, loadBalancer: 2, tapB: 3, server: 4),
                                runDirectory: "/run", intactExecutable: "/bin/intact", loadBalancerExecutable: "/bin/nginx")
        let client = plan.client.arguments
        XCTAssertEqual(client.indices.filter { client[$0] == "--request-field" }.map { client[$0 + 1] },
                       ["Accept-Encoding: gzip, br", "User-Agent: "])
        XCTAssertTrue(try XCTUnwrap(plan.services.first { $0.role == .server }).arguments.contains("--gzip"))
        let defaults = ScenarioPlan(scenario: try Scenario.load(from: makeScenarioDirectory(["scenario.json": Self.minimalManifest,
                                                                                            "nginx.conf": "# x\n"])),
                                    ports: ScenarioPorts(tapA: 1, loadBalancer: 2, tapB: 3, server: 4), runDirectory: "/run",
                                    intactExecutable: "/bin/intact", loadBalancerExecutable: "/bin/nginx")
        XCTAssertFalse(defaults.client.arguments.contains("--request-field"))
        XCTAssertFalse(try XCTUnwrap(defaults.services.first { $0.role == .server }).arguments.contains("--gzip"))
    }

    func testAVerificationThatHoldsMayAskForIntermediaryRequests() throws {
        let manifest = Self.minimalManifest.replacingOccurrences(of: #""holds": true"#,
                                                                  with: #""holds": true, "intermediaryRequests": 3"#)
        XCTAssertNotEqual(manifest, Self.minimalManifest)
        let directory = try makeScenarioDirectory(["scenario.json": manifest, "nginx.conf": "# x\n"])
        XCTAssertEqual(try Scenario.load(from: directory).expectation.verify, .holds(tolerated: [], intermediaryRequests: 3))
    }

    func testAMissingFaultRuleFileIsReportedBeforeAnythingStarts() throws {
        let manifest = Self.minimalManifest.replacingOccurrences(of: #""loadBalancer": "nginx","#,
                                                                  with: #""loadBalancer": "nginx", "tapB": {"faultRules": "gone.json"},"#)
        XCTAssertNotEqual(manifest, Self.minimalManifest)
        let directory = try makeScenarioDirectory(["scenario.json": manifest, "nginx.conf": "# x\n"])
        assertThrows(.configMissing(file: directory + "/gone.json")) { try Scenario.load(from: directory) }
    }

    func testNewManifestFieldsNameWhatIsWrong() throws {
        let cases: [(String, String)] = [
            (#"{"summary": "s", "loadBalancer": "nginx", "tapB": {"plainHTTP": true}, "expect": {}}"#,
             #"at tapB: unknown field "plainHTTP" (allowed: recordSecrets, faults, faultRules)"#),
            (#"{"summary": "s", "loadBalancer": "nginx", "tapA": {"faults": [1]}, "expect": {}}"#,
             "at tapA.faults[0]: expected a string, found a number"),
            (#"{"summary": "s", "loadBalancer": "nginx", "tapA": {"recordSecrets": 1}, "expect": {}}"#,
             "at tapA.recordSecrets: expected true or false, found a number"),
            (#"{"summary": "s", "loadBalancer": "nginx", "expect": {"client": {"succeeds": true}, "verify": {"holds": true, "intermediaryRequests": "some"}}}"#,
             "at expect.verify.intermediaryRequests: expected "),
            (#"{"summary": "s", "loadBalancer": "nginx", "expect": {"client": {"succeeds": true}, "verify": {"holds": false, "exchange": "login-page", "verdict": "modified", "intermediaryRequests": 1}}}"#,
             #"at expect.verify.intermediaryRequests: "intermediaryRequests" is only for a verification that holds"#),
            (#"{"summary": "s", "loadBalancer": "nginx", "expect": {"client": {"succeeds": true}, "verify": {"holds": false, "exchange": "login-page", "verdict": "modified", "differences": []}}}"#,
             "at expect.verify.differences: expected at least one difference"),
            (#"{"summary": "s", "loadBalancer": "nginx", "expect": {"client": {"succeeds": true}, "verify": {"holds": false, "exchange": "login-page", "verdict": "modified", "differences": [{"message": "response", "kind": "cookie-changed", "colour": "red"}]}}}"#,
             #"at expect.verify.differences[0]: unknown field "colour" (allowed: message, kind, field, cookie, text)"#),
        ]
        for (manifest, expected) in cases {
            let directory = try makeScenarioDirectory(["scenario.json": manifest, "nginx.conf": "# x\n"])
            guard case let .manifest(error)? = scenarioError({ try Scenario.load(from: directory) }) else {
                XCTFail("accepted: \(manifest)")
                continue
            }
            XCTAssertTrue(error.description.contains(expected), "\(manifest)\n→ \(error.description)")
        }
    }

    func testDefaultsAreTheConventionalConfigFileAndTheStrictPolicy() throws {
        let directory = try makeScenarioDirectory(["scenario.json": Self.minimalManifest, "nginx.conf": "# x\n"])
        let scenario = try Scenario.load(from: directory)
        XCTAssertEqual(scenario.configFile, directory + "/nginx.conf")
        XCTAssertNil(scenario.policyFile)
        XCTAssertFalse(scenario.tapAPresentsClientCertificate)
        XCTAssertTrue(scenario.expectation.isGood)
    }

    func testADirectoryWithoutAManifestIsNotAScenario() throws {
        let directory = try makeScenarioDirectory(["nginx.conf": "# x\n"])
        assertThrows(.manifestMissing(directory: directory)) { try Scenario.load(from: directory) }
        let empty = makeTemporaryDirectory(prefix: "intact-scenario-test")
        assertThrows(.manifestMissing(directory: empty)) { try ScenarioCatalog.directories(at: empty) }
    }

    func testAMissingConfigurationIsReportedBeforeAnythingStarts() throws {
        let directory = try makeScenarioDirectory(["scenario.json": Self.minimalManifest])
        assertThrows(.configMissing(file: directory + "/nginx.conf")) { try Scenario.load(from: directory) }
    }

    func testTheClientsBrowserAndItsPathBecomeClientOptions() throws {
        let directory = try makeScenarioDirectory(["scenario.json": #"""
            {"summary": "s", "loadBalancer": "nginx", "client": {"browser": "chromium", "browserProxy": "direct"},
             "expect": {"client": {"succeeds": true}, "verify": {"holds": true}}}
            """#, "nginx.conf": "# x\n"])
        XCTAssertEqual(try Scenario.load(from: directory).clientBrowserArguments, ["--browser", "chromium", "--browser-proxy", "direct"])
        let wrong = try makeScenarioDirectory(["scenario.json": #"{"summary": "s", "loadBalancer": "nginx", "client": {"browser": "firefox"}, "expect": {}}"#,
                                               "nginx.conf": "# x\n"])
        guard case let .manifest(error)? = scenarioError({ try Scenario.load(from: wrong) }) else { return XCTFail("accepted firefox") }
        XCTAssertTrue(error.description.contains("firefox"), error.description)
    }

    func testManifestMistakesNameTheLineColumnFieldAndWhatIsWrong() throws {
        let cases: [(String, String)] = [
            ("not json", "1:2: not valid JSON: "),
            (#"{"summary": "s", "loadBalancer": "nginx", "expect": {}, "extra": 1}"#,
             #"1:57: unknown field "extra" (allowed: summary, intermediary, loadBalancer, config, files, command, breaks, policy, tapA, tapB, client, server, expect)"#),
            (#"{"summary": "s", "loadBalancer": "nginx", "client": {"requestFields": ["Host: x"]}, "expect": {}}"#,
             #"1:72: at client.requestFields[0]: "Host: x" is not a request field: expected NAME: VALUE"#),
            (#"{"summary": "s", "loadBalancer": "nginx", "client": {"requestFields": [1]}, "expect": {}}"#,
             #"1:72: at client.requestFields[0]: expected a string, found a number"#),
            (#"{"summary": "s", "loadBalancer": "nginx", "client": {"headers": []}, "expect": {}}"#,
             #"1:54: at client: unknown field "headers" (allowed: requestFields, browser, browserProxy, runs, host)"#),
            (#"{"summary": "s", "loadBalancer": "nginx", "client": {"runs": 5}, "expect": {}}"#,
             #"1:62: at client.runs: 5 is out of range (1…4)"#),
            (#"{"summary": "s", "loadBalancer": "nginx", "client": {"host": "example.com"}, "expect": {}}"#,
             #"1:62: at client.host: unknown value "example.com" (one of: 127.0.0.1, localhost)"#),
            (#"{"summary": "s", "loadBalancer": "nginx", "expect": {"client": {"succeeds": true}, "verify": {"holds": true, "cachedCopy": true}}}"#,
             "1:94: at expect.verify: a verification that holds has no failing exchange, verdict or difference"),
            (#"{"summary": "s", "loadBalancer": "nginx", "server": {"gzip": "yes"}, "expect": {}}"#,
             #"1:62: at server.gzip: expected true or false, found a string"#),
            (#"{"summary": "s", "loadBalancer": "traefik", "expect": {}}"#,
             #"1:34: at loadBalancer: unknown value "traefik" (one of: nginx, haproxy, apache, caddy, trafficserver, varnish, nghttpx, squid, tinyproxy, command)"#),
            (#"{"loadBalancer": "nginx", "expect": {}}"#, #"1:1: missing field "summary""#),
            (#"{"summary": "s", "loadBalancer": "nginx", "expect": {"verify": {"holds": true}}}"#, #"1:53: at expect: missing field "client""#),
            (#"{"summary": "s", "loadBalancer": "nginx", "expect": {"client": {"succeeds": "yes"}, "verify": {"holds": true}}}"#,
             "1:77: at expect.client.succeeds: expected true or false, found a string"),
            (#"{"summary": "s", "loadBalancer": "nginx", "expect": {"client": {"succeeds": false, "diagnosis": "oops", "step": "follow-up"}, "verify": {"holds": true}}}"#,
             #"1:97: at expect.client.diagnosis: unknown value "oops" (one of: auth-redirect, "#),
            (#"{"summary": "s", "loadBalancer": "nginx", "expect": {"client": {"succeeds": true, "step": "follow-up"}, "verify": {"holds": true}}}"#,
             "1:64: at expect.client: a client that succeeds has no diagnosis or step"),
            (#"{"summary": "s", "loadBalancer": "nginx", "expect": {"client": {"succeeds": true}, "verify": {"holds": true, "verdict": "modified"}}}"#,
             "1:94: at expect.verify: a verification that holds has no failing exchange, verdict or difference"),
            (#"{"summary": "s", "loadBalancer": "nginx", "expect": {"client": {"succeeds": true}, "verify": {"holds": false, "exchange": "login-page", "verdict": "equivalent"}}}"#,
             #"1:148: at expect.verify.verdict: "equivalent" passes the policy; expected a failing verdict"#),
            (#"{"summary": "s", "loadBalancer": "nginx", "expect": {"client": {"succeeds": true}, "verify": {"holds": false, "exchange": "login-page", "verdict": "modified", "difference": {"message": "response", "kind": "field-moved"}}}}"#,
             #"1:206: at expect.verify.difference.kind: unknown value "field-moved" (one of: status-changed, "#),
            // The verifier labels exchanges as the taps record them (AuthStep), not with the client's steps.
            (#"{"summary": "s", "loadBalancer": "nginx", "expect": {"client": {"succeeds": true}, "verify": {"holds": false, "exchange": "token-exchange", "verdict": "modified"}}}"#,
             #"1:123: at expect.verify.exchange: unknown value "token-exchange" (one of: unauthenticated-request, challenge-401, "#),
        ]
        for (manifest, expected) in cases {
            let directory = try makeScenarioDirectory(["scenario.json": manifest, "nginx.conf": "# x\n"])
            guard case let .manifest(error)? = scenarioError({ try Scenario.load(from: directory) }) else {
                continue
            }
            XCTAssertEqual(error.file, directory + "/scenario.json")
            let reason = String(error.description.dropFirst((directory + "/scenario.json:").count))
            XCTAssertTrue(reason.hasPrefix(expected), "\(manifest)\n→ \(reason)")
        }
    }

    func testABrokenPolicyFileIsReportedWithTheManifest() throws {
        let directory = try makeScenarioDirectory([
            "scenario.json": #"{"summary": "s", "loadBalancer": "nginx", "policy": "p.json", "expect": {"client": {"succeeds": true}, "verify": {"holds": true}}}"#,
            "nginx.conf": "# x\n",
            "p.json": #"{"tolerate": [{"feild": "Via"}]}"#,
        ])
        guard case let .manifest(error)? = scenarioError({ try Scenario.load(from: directory) }) else { return }
        XCTAssertEqual(error.description, "\(directory)/p.json:1:16: the policy of \(directory)/scenario.json at tolerate[0]: "
                       + "unknown field \"feild\" (allowed: field, cookie, changes, message, reason)")
    }

    func testTheCatalogFindsNestedScenariosInOrderOnce() throws {
        let root = makeTemporaryDirectory(prefix: "intact-scenario-test")
        for name in ["b/two", "a/one", "a/three"] {
            try FileManager.default.createDirectory(atPath: root + "/" + name, withIntermediateDirectories: true)
            try Data(Self.minimalManifest.utf8).write(to: URL(fileURLWithPath: root + "/\(name)/scenario.json"))
            try Data("# x\n".utf8).write(to: URL(fileURLWithPath: root + "/\(name)/nginx.conf"))
        }
        XCTAssertEqual(try ScenarioCatalog.directories(at: root), ["a/one", "a/three", "b/two"].map { root + "/" + $0 })
        XCTAssertEqual(try ScenarioCatalog.load([root + "/a", root]).map(\.name), ["a/one", "a/three", "b/two"])
    }
}
