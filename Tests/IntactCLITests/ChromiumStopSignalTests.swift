import Foundation
import Glibc
import IntactTestSupport
import XCTest

/// `intact demo --browser chromium` stopped by a signal while the browser
/// runs: Chromium (its own process group) is killed and its profile, which
/// holds the browser's client certificate and key, removed; Intact ends by
/// the signal as it would have.
final class ChromiumStopSignalTests: XCTestCase {
    /// Pids whose command line names `directory` (the browser's processes: their profile is under it).
    private func processes(naming directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).filter { entry in
            guard entry.allSatisfy(\.isNumber),
                  let line = try? String(contentsOfFile: "/proc/\(entry)/cmdline", encoding: .utf8) else { return false }
            return line.contains(directory)
        }
    }

    private func profiles(in directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasPrefix("intact-chromium-") }
    }

    func testSIGTERMWhileTheBrowserHoldsACertificateEndsItAndRemovesItsProfile() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium") else {
            throw XCTSkip("Chromium is not installed (Debian package chromium)")
        }
        let directory = makeTemporaryDirectory()
        let temporary = directory + "/tmp"
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        let rules = directory + "/hold.json"
        try #"{"rules": [{"name": "hold", "match": {"leg": "response", "step": "login-page"}, "actions": [{"action": "stall"}]}]}"#
            .write(toFile: rules, atomically: true, encoding: .utf8)
        let demo = try IntactProcess(["demo", "--browser", "chromium", "--split", "client-cert-app-only", "--browser-client-cert",
                                      "--faults", rules, "--out", directory + "/out"],
                                     directory: directory, keepOutput: true, environment: ["TMPDIR": temporary])
        // Wait (bounded) until the browser runs with its certificate in its profile.
        var ready = false
        for _ in 0..<300 where !ready {
            usleep(50_000)
            ready = profiles(in: temporary).contains { FileManager.default.fileExists(atPath: "\(temporary)/\($0)/user-data/Default/Preferences") }
                && !processes(naming: temporary).isEmpty
            guard demo.process.isRunning else { break }
        }
        XCTAssertTrue(ready, "the browser started: \(demo.standardOutput)\(demo.standardError)")
        demo.signal(SIGTERM)
        XCTAssertEqual(demo.waitForExit(), 128 + SIGTERM, "ended by the signal: \(demo.standardError)")
        var left = processes(naming: temporary)
        for _ in 0..<40 where !left.isEmpty {
            usleep(50_000)
            left = processes(naming: temporary)
        }
        XCTAssertEqual(left, [], "no browser process left")
        XCTAssertEqual(profiles(in: temporary), [], "no profile (nor its private key) left")
        XCTAssertFalse(((try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? []).contains { $0.hasPrefix("org.chromium") },
                       "Chromium's own temporary files were inside the profile")
    }
}
