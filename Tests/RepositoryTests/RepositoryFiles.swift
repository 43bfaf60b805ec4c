import Foundation
import IntactTestSupport

/// The repository this test was built from, and the files it tracks.
enum RepositoryFiles {
    /// The repository's top directory (this file is Tests/RepositoryTests/RepositoryFiles.swift).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Paths relative to `root`: `git ls-files` in a checkout; in a tree
    /// without Git (an unpacked archive), every file but build outputs.
    static func tracked() throws -> [String] {
        if FileManager.default.fileExists(atPath: root.appendingPathComponent(".git").path) {
            let run = try ToolRun.run("/usr/bin/git", ["-C", root.path, "ls-files", "-z"])
            if run.status == 0 {
                return run.output.split(separator: "\0").map(String.init)
            }
        }
        var files: [String] = []
        let skipped: Set<String> = [".build", ".git", ".swiftpm"]
        guard let walker = FileManager.default.enumerator(atPath: root.path) else { return [] }
        while let path = walker.nextObject() as? String {
            if skipped.contains(String(path.split(separator: "/").first ?? "")) {
                walker.skipDescendants()
                continue
            }
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: root.appendingPathComponent(path).path, isDirectory: &isDirectory),
               !isDirectory.boolValue {
                files.append(path)
            }
        }
        return files
    }
}
