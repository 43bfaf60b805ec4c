import Foundation
import IntactTestSupport
import XCTest
@testable import IntactCLI
@testable import Scenarios

/// `intact scenario` through the library entry point.
final class ScenarioCommandTests: XCTestCase {
    private func intact(_ arguments: [String]) -> (status: Int32, output: String, error: String) {
        let output = CapturedOutput()
        let error = CapturedOutput()
        let status = IntactCommandLine.run(arguments, context: CommandContext(standardOutput: output.writer,
                                                                            standardError: error.writer))
        return (status, output.text, error.text)
    }

    func testListShowsEveryScenarioWithWhatItBreaksAndExpects() {
        let run = intact(["scenario", "list", ScenarioFixtures.examples])
        XCTAssertEqual(run.status, 0, run.error)
        XCTAssertTrue(run.output.contains("""
            haproxy/del-set-cookie: HAProxy deletes Set-Cookie from JSON responses (http-response del-header if application/json)
                breaks:   Step 11: the bootstrap response's session cookies; "both the request and response must remain unmodified"
                expects:  the client fails with strip-set-cookie at token-exchange; verify finds bootstrap modified on tap-a → tap-b (response field-removed set-cookie)
            """), run.output)
        XCTAssertTrue(run.output.contains("haproxy/good: HAProxy terminates TLS and re-encrypts to the server, changing nothing\n"
                                          + "    expects:  the client signs in; the policy holds\n"), run.output)
    }

    func testPrepareWritesTheRunAndPrintsTheCommandsInOrder() throws {
        let runDirectory = makeTemporaryDirectory(prefix: "intact-scenario-test") + "/run"
        // Five consecutive free ports (other runs on a shared machine may hold some).
        let base = try XCTUnwrap(stride(from: 29440, to: 29940, by: 10).first { (try? ScenarioPorts(base: $0).checkFree()) != nil })
        let run = intact(["scenario", "prepare", ScenarioFixtures.examples + "/nginx/good", "--run-dir", runDirectory,
                          "--base-port", "\(base)", "--intact", "/usr/local/bin/intact"])
        XCTAssertEqual(run.status, 0, run.error)
        let lines = run.output.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "Prepared nginx/good in \(runDirectory); nginx accepts the configuration.")
        let commands = lines.filter { $0.hasPrefix("     /") || $0.hasPrefix("  5. /") }
        guard commands.count == 6 else { return XCTFail(run.output) }
        XCTAssertTrue(commands[0].contains("/usr/local/bin/intact server --listen 127.0.0.1:\(base + 3) --external-url https://127.0.0.1:\(base + 0)"))
        XCTAssertTrue(commands[1].contains("/usr/local/bin/intact proxy --listen 127.0.0.1:\(base + 2) --mode reverse:https://127.0.0.1:\(base + 3)"))
        XCTAssertTrue(commands[2].contains("nginx -p \(runDirectory)/ -c \(runDirectory)/nginx.conf"))
        XCTAssertTrue(commands[3].contains("/usr/local/bin/intact proxy --listen 127.0.0.1:\(base + 0) --mode reverse:https://127.0.0.1:\(base + 1)"))
        XCTAssertTrue(commands[4].contains("/usr/local/bin/intact client https://127.0.0.1:\(base + 0)/suite/rest/protected --ca \(runDirectory)/ca/ca-cert.pem"))
        XCTAssertFalse(commands[4].contains("--json"), "a user reads the steps")
        XCTAssertTrue(commands[5].contains("verify \(runDirectory)/client.jsonl \(runDirectory)/tap-a.jsonl"))
        XCTAssertEqual(lines.last, "Expected: the client signs in; the policy holds")
        let rendered = try String(contentsOfFile: runDirectory + "/nginx.conf", encoding: .utf8)
        XCTAssertTrue(rendered.contains("listen 127.0.0.1:\(base + 1) ssl;"))
        XCTAssertTrue(rendered.contains("proxy_pass https://127.0.0.1:\(base + 2);"))
    }

    func testRunReportsAMissingScenarioAndABrokenConfigurationClearly() throws {
        let empty = makeTemporaryDirectory(prefix: "intact-scenario-test")
        let missing = intact(["scenario", "run", empty])
        XCTAssertEqual(missing.status, 1)
        XCTAssertEqual(missing.error, "intact: \(empty) is not a scenario: it has no scenario.json\n")

        let directory = try makeScenarioDirectory([
            "scenario.json": ScenarioTests.minimalManifest,
            "nginx.conf": "# broken\nevents {}\nhttp { server { retrun 200; } }\n",
        ])
        let broken = intact(["scenario", "run", directory, "--run-dir", makeTemporaryDirectory(prefix: "intact-scenario-test"), "--intact", "/bin/false"])
        XCTAssertEqual(broken.status, 1)
        XCTAssertTrue(broken.error.hasPrefix("intact: scenario custom/scenario: nginx rejected the configuration rendered from \(directory)/nginx.conf:\n"),
                      broken.error)
        XCTAssertTrue(broken.error.contains(#"unknown directive "retrun""#), broken.error)
        XCTAssertTrue(broken.output.hasSuffix("1 scenario: 1 not as expected: custom/scenario\n"), broken.output)
        XCTAssertTrue(broken.output.contains("  kept:     "), "the run directory with the check's log is shown: \(broken.output)")
    }

    func testRunWithoutADirectoryIsAUsageError() {
        let run = intact(["scenario", "run"])
        XCTAssertEqual(run.status, 2)
        XCTAssertTrue(run.error.hasPrefix("intact: give a scenario directory, or a directory of scenarios such as Examples/loadbalancers\n"),
                      run.error)
    }

    func testABasePortOutOfRangeIsAUsageError() {
        let run = intact(["scenario", "run", ScenarioFixtures.examples + "/nginx/good", "--base-port", "80"])
        XCTAssertEqual(run.status, 2)
        XCTAssertTrue(run.error.hasPrefix("intact: option --base-port expects a whole number from 1024 to 65531, got '80'"), run.error)
    }
}
