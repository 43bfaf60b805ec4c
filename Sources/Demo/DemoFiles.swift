import Foundation
import Glibc

/// The files a demo run writes, all in one directory the user is told about.
public struct DemoFiles: Sendable {
    public let directory: String

    public init(directory: String) {
        self.directory = directory
    }

    /// The client simulator's view of every exchange (tap `client`).
    public var clientRecording: String { directory + "/client.jsonl" }
    /// The proxy's two legs of every exchange (tap `proxy`).
    public var proxyRecording: String { directory + "/proxy.jsonl" }
    /// The mock server's view of every exchange (tap `server`).
    public var serverRecording: String { directory + "/server.jsonl" }
    /// The proxy's recording as HAR 1.2, for browser devtools and HTTP tools.
    public var har: String { directory + "/proxy.har" }
    /// The verification report as one self-contained page.
    public var htmlReport: String { directory + "/report.html" }
    /// The verification report as JSON (schema intact-verify/2, Docs/verify-json.md).
    public var jsonReport: String { directory + "/report.json" }

    /// Creates `path` (and its parents); an existing directory must be empty,
    /// so a run never mixes its recordings with an earlier one's.
    static func makeDirectory(_ path: String) throws {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        if manager.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw DemoError.directory(path, "it is a file") }
            let entries = (try? manager.contentsOfDirectory(atPath: path)) ?? []
            guard entries.isEmpty else {
                throw DemoError.directory(path, "it is not empty (give another --out, or remove it)")
            }
            return
        }
        do {
            try manager.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw DemoError.directory(path, (error as NSError).localizedDescription)
        }
    }

    /// Creates a new directory named `base`, or `base-2`, `base-3`… when that
    /// name is taken, and returns the one it made. Each attempt is one
    /// `mkdir` (atomic), so two runs started in the same second never get the
    /// same directory.
    public static func claimNewDirectory(_ base: String, attempts: Int = 1000) throws -> String {
        for attempt in 1...max(1, attempts) {
            let path = attempt == 1 ? base : "\(base)-\(attempt)"
            if mkdir(path, 0o755) == 0 { return path }
            guard errno == EEXIST else { throw DemoError.directory(path, String(cString: strerror(errno))) }
        }
        throw DemoError.directory(base, "it and \(attempts - 1) numbered variants exist already (give --out)")
    }

    /// A new private directory under the system's temporary directory (mode 0700).
    static func makeTemporaryDirectory(prefix: String) throws -> String {
        let base = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
        var template = Array("\(base)/\(prefix).XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in mkdtemp(buffer.baseAddress!) }
        guard made != nil else {
            throw DemoError.directory(base, String(cString: strerror(errno)))
        }
        return template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
