import Foundation
import Proxy
import ProxyAddons
import XCTest
@testable import IntactCLI

/// `--fault`, `--faults` and `--seed` on `intact proxy` and `intact demo`:
/// bad input refused with a precise message, and the demo telling whether
/// the outcome is what the faults cause.
final class FaultOptionsTests: XCTestCase {
    /// Writes `text` to a rule file in a fresh directory.
    private func ruleFile(_ text: String) throws -> String {
        let path = makeTemporaryDirectory() + "/rules.json"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// `intact proxy` with the options; fault options are checked first, and
    /// the contradictory upstream options stop it in any case before it serves.
    private func proxy(_ words: [String]) -> Invocation {
        intact(["proxy", "--ca-dir", makeTemporaryDirectory() + "/certs", "--listen", "127.0.0.1:0",
                "--upstream-ca", "/nonexistent/ca.pem", "--insecure-upstream"] + words)
    }

    func testAnUnknownPresetIsAUsageErrorListingTheKnownOnes() {
        for command in ["proxy", "demo"] {
            let result = command == "proxy" ? proxy(["--fault", "strip-everything"])
                                            : intact(["demo", "--fault", "strip-everything"])
            XCTAssertEqual(result.status, 2, command)
            XCTAssertTrue(result.error.contains("option --fault: unknown fault preset \"strip-everything\"; known presets: auth-redirect, html-401,"),
                          result.error)
            XCTAssertTrue(result.error.contains("reset-token-post, latency"), result.error)
        }
    }

    func testABadPresetParameterNamesTheParametersItHas() {
        let result = proxy(["--fault", "latency:delay=5"])
        XCTAssertEqual(result.status, 2)
        XCTAssertTrue(result.error.contains("fault preset latency has no parameter \"delay\"; its parameters: ms, jitter"), result.error)
    }

    func testARuleFileThatDoesNotParseNamesTheLine() throws {
        let file = try ruleFile("{\"rules\": [\n  {\"name\": \"x\",\n   \"match\": {\"leg\": \"request\"}\n")
        let result = proxy(["--faults", file])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.error.contains("\(file):4:"), result.error)
        XCTAssertTrue(result.error.contains("not valid JSON"), result.error)
    }

    func testAnUnknownFieldNamesTheLineTheFieldAndTheFieldsAllowed() throws {
        let file = try ruleFile("""
            {"rules": [
              {"name": "strip",
               "match": {"lge": "response"},
               "actions": [{"action": "remove-set-cookie"}]}
            ]}
            """)
        let result = proxy(["--faults", file])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.error.contains("\(file):3:"), result.error)
        XCTAssertTrue(result.error.contains("rule 1 (\"strip\")"), result.error)
        XCTAssertTrue(result.error.contains("unknown field \"lge\" (allowed: leg,"), result.error)
    }

    func testARegexThatDoesNotCompileIsRefusedWithItsPattern() throws {
        let file = try ruleFile("""
            {"rules": [{"name": "bad", "match": {"leg": "response"},
                        "actions": [{"action": "regex-body", "pattern": "(unclosed", "template": "x"}]}]}
            """)
        let result = intact(["demo", "--faults", file, "--out", makeTemporaryDirectory() + "/out"])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.error.contains("regex \"(unclosed\" does not compile"), result.error)
        XCTAssertTrue(result.output.isEmpty, "nothing ran")
    }

    func testAMissingRuleFileAndRepeatedRuleNamesAndABadSeedAreRefused() throws {
        let missing = proxy(["--faults", "/nonexistent/rules.json"])
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.error.contains("cannot read the rule file /nonexistent/rules.json"), missing.error)

        let twice = proxy(["--fault", "latency", "--fault", "latency:ms=5"])
        XCTAssertEqual(twice.status, 2)
        XCTAssertTrue(twice.error.contains("the fault rule \"latency\" is given twice"), twice.error)

        let seed = proxy(["--fault", "latency", "--seed", "-1"])
        XCTAssertEqual(seed.status, 2)
        XCTAssertTrue(seed.error.contains("option --seed expects a whole number"), seed.error)

        let alone = proxy(["--seed", "3"])
        XCTAssertEqual(alone.status, 2)
        XCTAssertTrue(alone.error.contains("--seed needs --fault or --faults"), alone.error)
    }

    func testFaultsReachTheProxyAsAnAddonAndAreAnnounced() throws {
        let parser = ArgumentParser(root: CommandRegistry.root)
        guard case let .run(parsed) = try parser.parse(["proxy", "--ca-dir", makeTemporaryDirectory() + "/certs",
                                                        "--fault", "strip-set-cookie", "--seed", "42"]) else {
            return XCTFail("expected intact proxy to run")
        }
        let error = CapturedOutput()
        let configuration = try ProxyCommand.makeConfiguration(parsed, CommandContext(standardOutput: CapturedOutput().writer,
                                                                                         standardError: error.writer))
        // The step labeller comes first (it sees what the client and the server sent), then the faults.
        XCTAssertEqual(configuration.addons.count, 2)
        XCTAssertTrue(configuration.addons.first is AuthStepAddon)
        let addon = try XCTUnwrap(configuration.addons.last as? FaultsAddon)
        XCTAssertEqual(addon.engine.seed, 42)
        XCTAssertEqual(addon.engine.rules.map(\.name), ["strip-set-cookie"])
        XCTAssertTrue(error.text.contains("injecting faults: --fault strip-set-cookie (1 rule); seed 42"), error.text)
        XCTAssertEqual(configuration.recordedOptions["faults"], "strip-set-cookie", "the recording's header names the faults")
        XCTAssertEqual(configuration.recordedOptions["faultSeed"], "42")
    }

    func testTheDemoShowsTheFailureAndSaysItIsWhatTheFaultCauses() {
        let result = intact(["demo", "--http1", "--fault", "html-401", "--out", makeTemporaryDirectory() + "/out"])
        XCTAssertEqual(result.status, 1, "the flow fails")
        XCTAssertTrue(result.output.contains("The proxy injects faults: --fault html-401 (1 rule)"), result.output)
        XCTAssertTrue(result.output.contains("Sign-in FAILED at protected-request"), "the client's view:\n\(result.output)")
        XCTAssertTrue(result.output.contains("hop 2 injected on purpose: html-401"), "the verifier's view:\n\(result.output)")
        XCTAssertTrue(result.output.contains("Faults applied (from the proxy's recording):\n  d"), result.output)
        XCTAssertTrue(result.output.contains("EXPECTED: the failure above is what the fault html-401 causes (it breaks “"),
                      result.output)
    }

    func testTheDemoSaysWhenTheFlowSurvivesTheFaultsAndWhichFaultBrokeIt() {
        let tolerated = intact(["demo", "--fault", "latency:ms=1,jitter=0", "--out", makeTemporaryDirectory() + "/out"])
        XCTAssertEqual(tolerated.status, 0)
        XCTAssertTrue(tolerated.output.contains("The flow still succeeded: the faults applied (latency) are tolerated."),
                      tolerated.output)

        let several = intact(["demo", "--fault", "foreign-response", "--fault", "latency:ms=1,jitter=0",
                              "--fault", "client-cert-required", "--client-cert", "--http2",
                              "--out", makeTemporaryDirectory() + "/out"])
        XCTAssertEqual(several.status, 1)
        XCTAssertTrue(several.output.contains("EXPECTED: the failure above is what the fault foreign-response causes"),
                      "the expectation names the fault that broke the flow:\n\(several.output)")
    }

    func testTheClientCertificatePresetBothWaysThroughTheDemo() {
        let without = intact(["demo", "--fault", "client-cert-required", "--out", makeTemporaryDirectory() + "/out"])
        XCTAssertEqual(without.status, 1)
        XCTAssertTrue(without.output.contains("client-cert-required"), without.output)
        XCTAssertTrue(without.output.contains("EXPECTED: the failure above is what the fault client-cert-required causes"),
                      without.output)
        let with = intact(["demo", "--fault", "client-cert-required", "--client-cert", "--out", makeTemporaryDirectory() + "/out"])
        XCTAssertEqual(with.status, 0, with.output)
        XCTAssertTrue(with.output.contains("PASS: signed in through the proxy"), with.output)
    }
}
