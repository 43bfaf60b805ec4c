import FuzzTargets
import Foundation
import XCTest

/// Replays the whole fuzz corpus (`Tests/Fuzz/Corpus/<target>/`: the seeds
/// and every crash libFuzzer ever found) through each target's entry
/// function, without sanitizers: a crash fixed once stays fixed.
final class FuzzCorpusTests: XCTestCase {
    static let corpus = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz/Corpus")

    func testEveryTargetHasASeedCorpus() throws {
        for target in FuzzTarget.allCases {
            XCTAssertGreaterThanOrEqual(try inputs(of: target).count, 3, "\(target.rawValue) needs seeds")
        }
    }

    func testTheCorpusRunsThroughEachTarget() throws {
        var total = 0
        for target in FuzzTarget.allCases {
            for file in try inputs(of: target) {
                target.run([UInt8](try Data(contentsOf: file)))
                total += 1
            }
        }
        XCTAssertGreaterThan(total, 0)
    }

    private func inputs(of target: FuzzTarget) throws -> [URL] {
        let directory = Self.corpus.appendingPathComponent(target.rawValue)
        return try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { !$0.lastPathComponent.hasPrefix(".") }
            .sorted { $0.path < $1.path }
    }
}
