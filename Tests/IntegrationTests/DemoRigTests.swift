import Demo
import Evidence
import Foundation
import IntactTestSupport
import SignIn
import Synchronization
import XCTest

/// The demo's flow in-process, over each HTTP version: the sign-in
/// succeeds through the proxy and every exchange crosses every hop
/// identical or equivalent, with the files the demo promises.
final class DemoRigTests: XCTestCase {
    private func run(_ protocols: ClientRunner.Protocols) throws -> (DemoRig, VerificationReport, Bool) {
        let directory = makeTemporaryDirectory(prefix: "intact-demo") + "/out"
        let rig = DemoRig(configuration: DemoConfiguration(directory: directory, protocols: protocols, toolVersion: "test"))
        _ = try rig.start()
        let outcome = try rig.runClient()
        let report = try rig.finish()
        return (rig, report, outcome.succeeded)
    }

    private func assertWholeFlowCrossedUnmodified(_ protocols: ClientRunner.Protocols, file: StaticString = #filePath,
                                                  line: UInt = #line) throws {
        let (rig, report, signedIn) = try run(protocols)
        XCTAssertTrue(signedIn, "the sign-in through the proxy failed", file: file, line: line)
        XCTAssertTrue(report.policyHolds, TextReport.render(report), file: file, line: line)
        // Five exchanges (401, login page, credentials, token, follow-up), each on three hops.
        XCTAssertEqual(report.exchanges.count, 5, file: file, line: line)
        XCTAssertEqual(report.path.hops.count, 3, file: file, line: line)
        for exchange in report.exchanges {
            XCTAssertEqual(exchange.hops.count, 3, file: file, line: line)
            XCTAssertTrue(exchange.hops.allSatisfy { $0.verdict == .identical || $0.verdict == .equivalent },
                          "\(exchange.method) \(exchange.target): \(exchange.hops.map(\.verdict))", file: file, line: line)
        }
        XCTAssertEqual(Set(report.exchanges.compactMap(\.step)),
                       ["challenge-401", "login-page", "callback-redirect", "bootstrap", "authenticated-request"],
                       file: file, line: line)
        for path in [rig.files.clientRecording, rig.files.proxyRecording, rig.files.serverRecording,
                     rig.files.har, rig.files.htmlReport, rig.files.jsonReport] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: path), "missing \(path)", file: file, line: line)
        }
        let har = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: rig.files.har)))
        let entries = ((har as? [String: Any])?["log"] as? [String: Any])?["entries"] as? [Any]
        // One HAR entry per exchange (the client's view); the upstream leg is in its _intact object.
        XCTAssertEqual(entries?.count, 5, file: file, line: line)
        let upstreams = entries?.compactMap { (($0 as? [String: Any])?["_intact"] as? [String: Any])?["upstream"] }
        XCTAssertEqual(upstreams?.count, 5, file: file, line: line)
    }

    func testTheFlowOverHTTP1CrossesTheProxyUnmodified() throws {
        try assertWholeFlowCrossedUnmodified(.http1Only)
    }

    func testTheFlowOverHTTP2CrossesTheProxyUnmodified() throws {
        try assertWholeFlowCrossedUnmodified(.http2Only)
    }

    func testADirectoryThatIsNotEmptyIsRefusedBeforeAnythingStarts() throws {
        let directory = makeTemporaryDirectory(prefix: "intact-demo")
        XCTAssertTrue(FileManager.default.createFile(atPath: directory + "/old.jsonl", contents: Data("x".utf8)))
        let rig = DemoRig(configuration: DemoConfiguration(directory: directory, toolVersion: "test"))
        XCTAssertThrowsError(try rig.start()) { error in
            XCTAssertTrue("\(error)".contains("is not empty"), "\(error)")
        }
    }

    func testLifeCycleStepsOutOfOrderAreErrorsNotTraps() throws {
        let directory = makeTemporaryDirectory(prefix: "intact-demo") + "/out"
        let rig = DemoRig(configuration: DemoConfiguration(directory: directory, toolVersion: "test"))
        func assertOutOfOrder(_ step: () throws -> Any, _ words: String, line: UInt = #line) {
            XCTAssertThrowsError(try step(), line: line) { error in
                XCTAssertTrue("\(error)".hasPrefix("demo rig used out of order: \(words)"), "\(error)", line: line)
            }
        }
        assertOutOfOrder({ try rig.runClient() }, "runClient() needs the servers running")
        assertOutOfOrder({ try rig.finish() }, "finish() runs once, after start()")
        rig.stopServers()
        let endpoints = try rig.start()
        assertOutOfOrder({ try rig.start() }, "start() runs once")
        // The proxy serves on the port named to the mock server as its public origin.
        XCTAssertEqual(endpoints.publicOrigin, "https://127.0.0.1:\(endpoints.proxy.port)")
        rig.stopServers()
        rig.stopServers()
        assertOutOfOrder({ try rig.runClient() }, "runClient() needs the servers running")
        _ = try rig.finish()
        assertOutOfOrder({ try rig.finish() }, "finish() runs once")
    }

    /// Runs started in the same second get the timestamped name, then -2, -3…:
    /// never the same directory, even when claimed at the same time.
    func testRunsStartedTogetherNeverShareADirectory() throws {
        let parent = FileManager.default.temporaryDirectory.appendingPathComponent("intact-demo-parent-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: parent) }
        let base = parent + "/intact-demo-20261201-130000"
        XCTAssertEqual(try DemoFiles.claimNewDirectory(base), base)
        XCTAssertEqual(try DemoFiles.claimNewDirectory(base), base + "-2")
        let claimed = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            if let path = try? DemoFiles.claimNewDirectory(base) { claimed.withLock { $0.append(path) } }
        }
        let paths = claimed.withLock { $0 }
        XCTAssertEqual(paths.count, 8)
        XCTAssertEqual(Set(paths).count, 8, "\(paths)")
        XCTAssertEqual(Set(paths), Set((3...10).map { base + "-\($0)" }))
        XCTAssertThrowsError(try DemoFiles.claimNewDirectory(base, attempts: 3)) { error in
            XCTAssertTrue("\(error)".contains("numbered variants exist already"), "\(error)")
        }
        XCTAssertThrowsError(try DemoFiles.claimNewDirectory(parent + "/no/such/parent/x")) { error in
            XCTAssertTrue("\(error)".contains("No such file"), "\(error)")
        }
    }
}
