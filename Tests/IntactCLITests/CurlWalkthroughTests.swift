import Foundation
import XCTest
@testable import IntactCLI

/// The README's curl walk-through is the one `intact demo --keep` prints
/// (which DemoKeepTests runs with bash), so the two cannot drift apart.
final class CurlWalkthroughTests: XCTestCase {
    func testTheReadmeShowsTheWalkthroughTheDemoPrints() throws {
        let readmePath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md").path
        let readme = try String(contentsOfFile: readmePath, encoding: .utf8)
        // The README puts placeholders and a comment on the two lines the demo fills in.
        let lines = CurlWalkthrough.script(ca: "@CA@", base: "@BASE@")
            .trimmingCharacters(in: .newlines)
            .split(separator: "\n", omittingEmptySubsequences: false)
            .map(String.init)
        var found = 0
        for line in lines {
            if line.isEmpty {
                continue
            } else if line == "CA=@CA@" {
                XCTAssertTrue(readme.contains("\nCA=/tmp/intact-demo-ca."), "the README's CA line")
            } else if line == "BASE=@BASE@" {
                XCTAssertTrue(readme.contains("\nBASE=https://127.0.0.1:PORT/suite"), "the README's BASE line")
            } else {
                XCTAssertTrue(readme.contains(line), "the README lacks the walk-through line: \(line)")
                found += 1
            }
        }
        XCTAssertGreaterThan(found, 10)
    }
}
