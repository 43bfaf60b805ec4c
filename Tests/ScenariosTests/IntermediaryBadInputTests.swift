import Foundation
import IntactTestSupport
import XCTest
@testable import Scenarios

/// What the runner says when an intermediary cannot run: a missing package,
/// a template with a placeholder its kind does not define, a configuration
/// its check rejects, a product that exits at start or never listens; and
/// that nothing of a run is left when the runner is stopped mid-run.
final class IntermediaryBadInputTests: XCTestCase {
    private func scenario(_ manifest: String, _ files: [String: String]) throws -> Scenario {
        try Scenario.load(from: try makeScenarioDirectory(["scenario.json": manifest].merging(files) { $1 }))
    }

    private func manifest(_ kind: String, extra: String = "") -> String {
        #"{"summary": "s", "intermediary": "\#(kind)", \#(extra) "expect": {"client": {"succeeds": true}, "verify": {"holds": true}}}"#
    }

    func testAMissingProgramNamesThePackageToInstall() {
        var squid = IntermediaryKind.named("squid")!
        squid.processes[0].command.program = "squid-not-installed-here"
        XCTAssertThrowsError(try squid.locatePrograms()) { error in
            XCTAssertEqual("\(error)", "squid-not-installed-here is not installed (Squid needs it; install the Debian package "
                           + "squid-openssl: apt-get install squid-openssl, or make test-deps)")
        }
        var varnish = IntermediaryKind.named("varnish")!
        varnish.processes[1].command.program = "hitch-not-installed-here"
        XCTAssertThrowsError(try varnish.locatePrograms()) { error in
            XCTAssertTrue("\(error)".contains("install the Debian packages varnish hitch"), "\(error)")
        }
    }

    func testACommandScenarioNamesItsOwnPackage() throws {
        let scenario = try scenario(manifest("command", extra: #""command": {"name": "Envoy", "packages": ["envoy"], "run": ["envoy-not-here", "-c", "{{CONFIG}}"]},"#),
                                    ["intermediary.conf": "# envoy\n"])
        let runner = ScenarioRunner(options: try scenarioRunOptions())
        let error = scenarioError { try runner.run(scenario) }
        XCTAssertEqual(error, .toolMissing(name: "envoy-not-here", hint: "Envoy needs it; install the Debian package envoy: "
                                           + "apt-get install envoy, or make test-deps"))
    }

    /// `{{INNER_PORT}}` is Varnish's: an Apache template that uses it is refused, naming the line and what is known.
    func testAPlaceholderOfAnotherKindIsUnknown() throws {
        let scenario = try scenario(manifest("apache"), ["apache2.conf": "# a\nListen 127.0.0.1:{{INNER_PORT}}\n"])
        let error = scenarioError { try ScenarioRunner(options: try scenarioRunOptions()).run(scenario) }
        guard case let .configTemplate(file, line, reason)? = error else { return XCTFail("\(String(describing: error))") }
        XCTAssertTrue(file.hasSuffix("/apache2.conf"), file)
        XCTAssertEqual(line, 2)
        XCTAssertTrue(reason.hasPrefix("unknown placeholder {{INNER_PORT}} (known here: CA, CERT, CERT_BUNDLE, CONFIG, KEY,"), reason)
    }

    func testAConfigurationTheProductRejectsNamesProductFileAndItsOutput() throws {
        let good = try String(contentsOfFile: ScenarioFixtures.examples + "/apache/good/apache2.conf", encoding: .utf8)
        let scenario = try scenario(manifest("apache"), ["apache2.conf": good.replacingOccurrences(of: "ProxyPreserveHost On",
                                                                                                   with: "ProxyPreserveHots On")])
        let error = scenarioError { try ScenarioRunner(options: try scenarioRunOptions()).run(scenario) }
        guard case let .configRejected(tool, file, output)? = error else { return XCTFail("\(String(describing: error))") }
        XCTAssertEqual(tool, "Apache httpd")
        XCTAssertEqual(file, scenario.configFile)
        XCTAssertTrue(output.contains("apache2 -t -f"), output)
        XCTAssertTrue(output.contains("Invalid command 'ProxyPreserveHots'"), output)
    }

    /// nghttpx has no check mode: a certificate that does not exist makes it exit at start.
    func testAProductThatExitsAtStartIsNamedWithItsLog() throws {
        let good = try String(contentsOfFile: ScenarioFixtures.examples + "/nghttpx/good/nghttpx.conf", encoding: .utf8)
        let scenario = try scenario(manifest("nghttpx"),
                                    ["nghttpx.conf": good.replacingOccurrences(of: "certificate-file={{CERT}}",
                                                                               with: "certificate-file={{RUNDIR}}/missing.pem")])
        let error = scenarioError { try ScenarioRunner(options: try scenarioRunOptions()).run(scenario) }
        guard case let .exitedBeforeReady(role, _, _, logTail)? = error else { return XCTFail("\(String(describing: error))") }
        XCTAssertEqual(role, "nghttpx (configuration \(scenario.configFile))")
        XCTAssertTrue(logTail.contains("FATAL") && logTail.contains("SSL_CTX_use_certificate_file failed"), logTail)
    }

    func testAProductThatNeverListensIsNamedAndStopped() throws {
        let scenario = try scenario(manifest("command", extra: #""command": {"name": "a sleeper", "run": ["sleep", "60"]},"#),
                                    ["intermediary.conf": "# sleeps\n"])
        var options = try scenarioRunOptions()
        options.startTimeout = 1
        let runner = ScenarioRunner(options: options)
        let error = scenarioError { try runner.run(scenario) }
        guard case let .notServing(role, seconds, _)? = error else { return XCTFail("\(String(describing: error))") }
        XCTAssertTrue(role.hasPrefix("a sleeper (configuration \(scenario.configFile)) (nothing listens on 127.0.0.1:"), role)
        XCTAssertEqual(seconds, 1)
        XCTAssertEqual(Self.processes(mentioning: options.runParent), [], "the sleeper was stopped")
    }

    /// The runner stopped by SIGTERM mid-run (Squid and its certificate helper running) leaves no process behind.
    func testStoppingTheRunnerMidRunLeavesNoChild() throws {
        let options = try scenarioRunOptions()
        let log = options.runParent + "/runner.log"
        let command = ProcessCommand(role: .client, executable: options.intactExecutable, arguments: [
            "scenario", "run", ScenarioFixtures.examples + "/squid/good", "--run-dir", options.runParent, "-v",
            "--intact", options.intactExecutable,
        ])
        let runner = try ChildProcess.spawn(command, outputFile: log, errorFile: log)
        let deadline = Date().addingTimeInterval(60)
        while !((try? String(contentsOfFile: log, encoding: .utf8))?.contains("started tap A") ?? false), Date() < deadline,
              runner.termination == nil {
            usleep(20_000)
        }
        XCTAssertGreaterThanOrEqual(Self.processes(mentioning: options.runParent + "/squid-good-").count, 4,
                                    "the server, tap B, Squid and tap A were running")
        kill(runner.pid, SIGTERM)
        let ended = runner.wait(timeout: 60)
        XCTAssertEqual(ended, .exited(128 + SIGTERM), (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
        XCTAssertEqual(Self.processes(mentioning: options.runParent + "/squid-good-"), [], "nothing of the run is left")
    }

    /// PIDs of the processes whose command line mentions `text` (the run directory's parent).
    static func processes(mentioning text: String) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { pid in
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            return String(decoding: data.map { $0 == 0 ? 32 : $0 }, as: UTF8.self).contains(text)
        }
    }
}
