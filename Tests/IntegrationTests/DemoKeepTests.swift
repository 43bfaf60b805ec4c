import Foundation
import Glibc
import IntactTestSupport
import XCTest

/// `intact demo --keep` as a user runs it: the demo passes, then the curl
/// walk-through it prints (the README's) is run by bash, as printed, against
/// the servers it keeps, and Ctrl-C stops them.
final class DemoKeepTests: XCTestCase {
    func testTheCurlWalkThroughSignsInAgainstTheKeptServers() throws {
        let work = makeTemporaryDirectory(prefix: "intact-keep")
        let demo = try IntactProcess(["demo", "--out", work + "/out", "--keep"], directory: work, keepOutput: true)
        try demo.waitForOutput(containing: "# --- end of the walk-through ---")
        XCTAssertTrue(demo.standardOutput.contains("PASS: signed in through the proxy"), demo.standardOutput)

        let printed = demo.standardOutput
        let start = try XCTUnwrap(printed.range(of: "# --- the sign-in flow by hand"))
        let end = try XCTUnwrap(printed.range(of: "# --- end of the walk-through ---"))
        let script = "set -eu\ncd '\(work)'\n" + printed[start.lowerBound..<end.upperBound] + "\n"
        try script.write(toFile: work + "/walkthrough.sh", atomically: true, encoding: .utf8)
        let run = try ToolRun.run("/bin/bash", [work + "/walkthrough.sh"])
        XCTAssertEqual(run.status, 0, run.error)

        let lines = run.output.split(separator: "\n").map(String.init)
        // Steps 1-3: the 401's JSON names the proxy's origin.
        XCTAssertTrue(lines.first?.contains("\"contextUrl\"") ?? false, run.output)
        XCTAssertTrue(lines.first?.contains("\"tokenUrl\"") ?? false, run.output)
        // Steps 6b-7: a one-time token came back in the callback.
        let token = lines.first { $0.hasPrefix("token: ") }.map { String($0.dropFirst("token: ".count)) } ?? ""
        XCTAssertGreaterThan(token.count, 20, run.output)
        // Steps 9-11: the bootstrap; the app's jar holds the three session cookies.
        XCTAssertTrue(run.output.contains("\"username\""), run.output)
        let jar = try String(contentsOfFile: work + "/app.txt", encoding: .utf8)
        for cookie in ["JSESSIONID", "__appianCsrfToken", "__appianMultipartCsrfToken"] {
            XCTAssertTrue(jar.contains(cookie), "no \(cookie) in the app's jar:\n\(jar)")
        }
        // After: the protected resource with the cookies answers 200 (not the 401 JSON again).
        XCTAssertFalse(lines.last?.contains("contextUrl") ?? true, run.output)

        demo.signal(SIGINT)
        XCTAssertEqual(demo.waitForExit(), 0, demo.standardError)
        XCTAssertTrue(demo.standardOutput.contains("Stopped; your exchanges are in"), demo.standardOutput)
        // The walk-through's exchanges were recorded by the kept proxy and server.
        let proxyRecording = try String(contentsOfFile: work + "/out/keep/proxy.jsonl", encoding: .utf8)
        XCTAssertGreaterThanOrEqual(proxyRecording.split(separator: "\n").count, 6, "header + 5 exchanges")
    }
}
