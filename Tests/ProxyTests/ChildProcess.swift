import Foundation
import Glibc

/// Runs a tool (curl, nghttp) to completion and keeps what it printed.
struct ToolRun {
    let status: Int32
    let output: String
    let error: String

    /// Runs `path` with `arguments`; output and error are collected through files (no pipe deadlock).
    static func run(_ path: String, _ arguments: [String]) throws -> ToolRun {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("intact-tool-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("out"), err = directory.appendingPathComponent("err")
        FileManager.default.createFile(atPath: out.path, contents: nil)
        FileManager.default.createFile(atPath: err.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try process.run()
        process.waitUntilExit()
        return ToolRun(status: process.terminationStatus,
                       output: (try? String(contentsOf: out, encoding: .utf8)) ?? "",
                       error: (try? String(contentsOf: err, encoding: .utf8)) ?? "")
    }

    static func curl(_ arguments: [String]) throws -> ToolRun {
        try run("/usr/bin/curl", ["--silent", "--show-error", "--max-time", "120"] + arguments)
    }
}

/// `intact` run as a child process, for what only a process shows: its
/// resident memory, `kill -9`, SIGTERM. Standard error goes to a file the
/// test reads (the banner names the bound address).
final class IntactProcess {
    let process = Process()
    let errorFile: String

    /// The `intact` executable built next to the test bundle.
    static var executable: String {
        let bundle = Bundle(for: IntactProcess.self).bundleURL
        return bundle.deletingLastPathComponent().appendingPathComponent("intact").path
    }

    init(_ arguments: [String], directory: String) throws {
        errorFile = directory + "/intact-stderr.txt"
        FileManager.default.createFile(atPath: errorFile, contents: nil)
        process.executableURL = URL(fileURLWithPath: IntactProcess.executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorFile))
        try process.run()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
    }

    var standardError: String { (try? String(contentsOfFile: errorFile, encoding: .utf8)) ?? "" }

    /// Waits for the "listening on ADDR:PORT" banner; returns the port.
    func waitForPort() throws -> Int {
        for _ in 0..<1000 {
            if let range = standardError.range(of: "listening on ") {
                let rest = standardError[range.upperBound...].prefix { $0 != " " && $0 != "\n" }
                if let colon = rest.lastIndex(of: ":"), let port = Int(rest[rest.index(after: colon)...]) { return port }
            }
            guard process.isRunning else { throw TestSetupFailure("intact exited: \(standardError)") }
            usleep(10_000)
        }
        throw TestSetupFailure("intact did not report its address: \(standardError)")
    }

    /// The process's resident set size (VmRSS), in KiB.
    func residentKiB() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8) else {
            return nil
        }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        }
        return nil
    }

    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Waits for the exit; returns the status (or 128 + signal).
    func waitForExit() -> Int32 {
        process.waitUntilExit()
        return process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
    }
}
