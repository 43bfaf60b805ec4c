import Foundation
import IntactTestSupport
import XCTest

/// Every command Docs/devices.md (and the README section that points to it)
/// marks as runnable here is run as written: the `sh tested-server` block
/// starts the proxy (its port swapped for a free one), then each
/// `sh tested` block runs in a fresh directory with `/bin/sh -e`, `intact`
/// being this build and the CA this test's own (`XDG_DATA_HOME`).
final class DevicesDocTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The fenced blocks whose info string is `info`, in order.
    static func blocks(_ info: String, in file: String) throws -> [String] {
        let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
        var blocks: [String] = []
        var current: [String]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if current == nil, trimmed == "```" + info {
                current = []
            } else if current != nil, trimmed == "```" {
                blocks.append(current!.joined(separator: "\n"))
                current = nil
            } else if current != nil {
                current!.append(trimmed)
            }
        }
        return blocks
    }

    func testEveryTestedCommandOfTheDevicesPageRuns() throws {
        let servers = try Self.blocks("sh tested-server", in: "Docs/devices.md")
        XCTAssertEqual(servers.count, 1)
        let serverLine = try XCTUnwrap(servers.first)
        XCTAssertTrue(serverLine.hasPrefix("intact proxy --listen 127.0.0.1:8080"), serverLine)
        let tested = try Self.blocks("sh tested", in: "Docs/devices.md") + Self.blocks("sh tested", in: "README.md")
        XCTAssertGreaterThanOrEqual(tested.count, 2)

        let directory = makeTemporaryDirectory()
        let binaries = directory + "/bin"
        try FileManager.default.createDirectory(atPath: binaries, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: binaries + "/intact", withDestinationPath: IntactProcess.executable)
        let environment = ["XDG_DATA_HOME": directory + "/data",
                           "PATH": binaries + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")]
        let arguments = Array(serverLine.replacingOccurrences(of: "127.0.0.1:8080", with: "127.0.0.1:0")
            .split(separator: " ").dropFirst().map(String.init))
        let proxy = try IntactProcess(arguments.map { $0 == "run.jsonl" ? directory + "/run.jsonl" : $0 },
                                      directory: directory, name: "docs-proxy", environment: environment)
        let port = try proxy.waitForPort()
        for (index, block) in tested.enumerated() {
            let work = directory + "/block\(index)"
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
            let script = "cd '\(work)'\n" + block.replacingOccurrences(of: "127.0.0.1:8080", with: "127.0.0.1:\(port)")
            let run = try ToolRun.run("/usr/bin/env", environment.map { "\($0.key)=\($0.value)" }
                                      + ["/bin/sh", "-e", "-c", script])
            XCTAssertEqual(run.status, 0, "block \(index):\n\(block)\n\(run.output)\(run.error)")
        }
        proxy.signal(SIGINT)
        XCTAssertEqual(proxy.waitForExit(), 0, proxy.standardError)
    }
}
