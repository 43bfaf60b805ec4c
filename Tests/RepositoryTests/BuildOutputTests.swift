import Foundation
import XCTest

/// No build output, bytecode, log or recording is committed, and no tracked
/// file is large: the tree holds source, documentation and small fixtures
/// (`.gitignore` keeps these out of `git add`; this test catches what was
/// forced in or added before a rule existed, as a `.pyc` once was).
final class BuildOutputTests: XCTestCase {
    /// The largest a tracked file may be; the largest today is under 50 KiB.
    static let largestFile = 256 * 1024

    /// Why `path` must not be tracked, or nil when it may be.
    static func reasonNotToTrack(_ path: String) -> String? {
        let components = path.split(separator: "/").map(String.init)
        let name = components.last ?? path
        if components.dropLast().contains(where: { [".build", ".swiftpm", "__pycache__"].contains($0) }) {
            return "inside a build or bytecode directory"
        }
        let outputs = [".pyc", ".pyo", ".o", ".a", ".so", ".log", ".jsonl", ".har"]
        if let suffix = outputs.first(where: { name.hasSuffix($0) }) { return "a \(suffix) file (build output, log or recording)" }
        return nil
    }

    func testNoTrackedFileIsABuildOutputLogOrRecording() throws {
        let files = try RepositoryFiles.tracked()
        XCTAssertGreaterThan(files.count, 100, "the tracked files were found")
        let offenders = files.compactMap { path in Self.reasonNotToTrack(path).map { "\(path): \($0)" } }
        XCTAssertEqual(offenders, [], "remove these from the index (git rm --cached) and let .gitignore keep them out")
    }

    func testNoTrackedFileIsLarge() throws {
        var offenders: [String] = []
        for path in try RepositoryFiles.tracked() {
            let url = RepositoryFiles.root.appendingPathComponent(path)
            guard let size = try? url.resourceValues(forKeys: [.fileSizeKey]).fileSize else { continue }  // deleted, not yet committed
            if size > Self.largestFile { offenders.append("\(path) (\(size) bytes)") }
        }
        XCTAssertEqual(offenders, [], "tracked files over \(Self.largestFile) bytes (generate them at run time)")
    }

    func testTheRuleNamesEachKindAndPassesSource() {
        XCTAssertNotNil(Self.reasonNotToTrack("Benchmarks/__pycache__/callgrind_client.cpython-311.pyc"))
        XCTAssertNotNil(Self.reasonNotToTrack("stray.pyc"))
        XCTAssertNotNil(Self.reasonNotToTrack(".build/release/intact"))
        XCTAssertNotNil(Self.reasonNotToTrack("Tests/run.log"))
        XCTAssertNotNil(Self.reasonNotToTrack("intact-demo-1/recording.jsonl"))
        XCTAssertNil(Self.reasonNotToTrack("Benchmarks/callgrind_client.py"))
        XCTAssertNil(Self.reasonNotToTrack("Sources/Codecs/JSONWriter.swift"))
        XCTAssertNil(Self.reasonNotToTrack("Docs/logging.md"), "a name that only contains 'log'")
    }
}
