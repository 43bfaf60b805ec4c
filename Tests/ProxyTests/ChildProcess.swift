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
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
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
/// test reads (the banner names the bound address). `@unchecked Sendable`:
/// a sampling thread only reads /proc by the (immutable) process id.
final class IntactProcess: @unchecked Sendable {
    let process = Process()
    let errorFile: String

    /// The `intact` executable built next to the test binary (`swift build --build-tests` builds it).
    static var executable: String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        let testBinary = String(decoding: buffer[..<max(0, length)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var directory = URL(fileURLWithPath: testBinary).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("intact").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return "intact"
    }

    init(_ arguments: [String], directory: String) throws {
        errorFile = directory + "/intact-stderr.txt"
        _ = FileManager.default.createFile(atPath: errorFile, contents: nil)
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
