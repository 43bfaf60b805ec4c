import Evidence
import Foundation
import IntactTestSupport
import XCTest
@testable import Scenarios

/// Paths and helpers shared by the scenario tests.
enum ScenarioFixtures {
    /// The repository's root, from this file's path.
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path

    /// `Examples/loadbalancers`.
    static let examples = repositoryRoot + "/Examples/loadbalancers"

    /// The example scenario `name` (`nginx/good`).
    static func example(_ name: String) throws -> Scenario {
        try Scenario.load(from: examples + "/" + name)
    }

    /// The `intact` executable built next to this test bundle (`swift build
    /// --build-tests` builds it), or nil when it is not there.
    static var intactExecutable: String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        let testBinary = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var directory = URL(fileURLWithPath: testBinary).deletingLastPathComponent()
        // On Linux the test binary is …/debug/IntactPackageTests.xctest; on other layouts a bundle sits deeper.
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("intact").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }

    /// The subcommands a scenario run starts (`server`, `proxy`, `client`)
    /// that `intact` at `path` does not list in its `--help`.
    static func missingCommands(in path: String) -> [String] {
        guard let help = try? ToolRun.run(path, ["--help"]).output else { return ["--help"] }
        let listed = Set(help.split(separator: "\n").compactMap { line in
            line.hasPrefix("  ") ? line.split(separator: " ").first.map(String.init) : nil
        })
        return ["server", "proxy", "client"].filter { !listed.contains($0) }
    }
}

extension XCTestCase {
    /// The options of a run with the built `intact`. Skips the test while
    /// `intact` lacks a command a run needs (the server, proxy and client
    /// land from other branches): the tests then wait for them.
    func scenarioRunOptions() throws -> ScenarioRunner.Options {
        let intact = try XCTUnwrap(ScenarioFixtures.intactExecutable,
                                   "the intact executable is not next to the tests: run swift build --build-tests")
        let missing = ScenarioFixtures.missingCommands(in: intact)
        if !missing.isEmpty {
            throw XCTSkip("this intact has no \(missing.map { "'intact \($0)'" }.joined(separator: ", ")) yet")
        }
        let runParent = makeTemporaryDirectory(prefix: "intact-scenario-test")
        // Squid runs as proxy: it must be able to pass through to its directory in the run.
        chmod(runParent, 0o711)
        return ScenarioRunner.Options(intactExecutable: intact, runParent: runParent, clientTimeout: 60)
    }

    /// Runs the example `name` and asserts its outcome is the one it expects.
    @discardableResult
    func runExample(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws -> ScenarioResult {
        let result = try ScenarioRunner(options: try scenarioRunOptions()).run(try ScenarioFixtures.example(name))
        let report = (try? String(contentsOfFile: result.plan.files.reportText, encoding: .utf8)) ?? ""
        XCTAssertEqual(result.mismatches, [], "\(result.summary)\n\(report)", file: file, line: line)
        // Every row of the directive table this scenario verifies matches a difference of its run.
        let hints = IntermediaryDirective.hints(in: result.report, product: result.plan.scenario.intermediary.name)
        for row in IntermediaryDirective.table where row.verifiedBy == name {
            XCTAssertTrue(hints.contains { $0.directive == row }, "\(name) does not show \(row.change) (\(row.cause))\n\(result.summary)",
                          file: file, line: line)
        }
        return result
    }

    /// Writes `files` (relative path → contents) into a new scenario directory and returns its path.
    func makeScenarioDirectory(_ files: [String: String]) throws -> String {
        let directory = makeTemporaryDirectory(prefix: "intact-scenario-test") + "/custom/scenario"
        for (name, contents) in files {
            let path = directory + "/" + name
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            try Data(contents.utf8).write(to: URL(fileURLWithPath: path))
        }
        return directory
    }

    /// Asserts that `body` throws exactly `expected`.
    func assertThrows<T>(_ expected: ScenarioError, file: StaticString = #filePath, line: UInt = #line,
                         _ body: () throws -> T) {
        do {
            _ = try body()
            XCTFail("expected \(expected), nothing was thrown", file: file, line: line)
        } catch let error as ScenarioError {
            XCTAssertEqual(error, expected, file: file, line: line)
        } catch {
            XCTFail("expected \(expected), got \(error)", file: file, line: line)
        }
    }

    /// The `ScenarioError` `body` throws, failing the test when it throws nothing or something else.
    func scenarioError<T>(file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> T) -> ScenarioError? {
        do {
            _ = try body()
            XCTFail("expected a ScenarioError, nothing was thrown", file: file, line: line)
        } catch let error as ScenarioError {
            return error
        } catch {
            XCTFail("expected a ScenarioError, got \(error)", file: file, line: line)
        }
        return nil
    }
}
