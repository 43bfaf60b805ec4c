import Foundation
import Glibc

/// Runs a program to completion and keeps what it printed: the one runner
/// every test uses for tools (openssl, curl, nghttp, gzip, git, chromium…).
public struct ToolRun: Sendable {
    public let status: Int32
    /// Standard output, as bytes.
    public let outputData: Data
    /// Standard error, as text.
    public let error: String
    /// Whether it was killed for outliving its time limit.
    public let timedOut: Bool

    /// Standard output, as text.
    public var output: String { String(decoding: outputData, as: UTF8.self) }

    /// Runs `program` (an absolute path, or a name looked up in PATH) with
    /// `arguments`, feeding `input` to its standard input; output and error
    /// go through files (no pipe deadlock). Killed after `timeout` seconds, so
    /// a hung peer fails the test instead of blocking it. Blocks: never call on a loop.
    public static func run(_ program: String, _ arguments: [String], input: Data? = nil,
                           timeout: TimeInterval = 120) throws -> ToolRun {
        let directory = TemporaryDirectory.create(prefix: "intact-tool")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let inFile = directory + "/in", outFile = directory + "/out", errFile = directory + "/err"
        for file in [inFile, outFile, errFile] { _ = FileManager.default.createFile(atPath: file, contents: nil) }
        if let input { try input.write(to: URL(fileURLWithPath: inFile)) }
        let process = Process()
        if program.hasPrefix("/") {
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [program] + arguments
        }
        process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: inFile))
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outFile))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errFile))
        let finished = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in finished.signal() }
        try process.run()
        var timedOut = false
        if finished.wait(timeout: .now() + timeout) == .timedOut {
            timedOut = true
            process.terminate()
            finished.wait()
        }
        return ToolRun(status: process.terminationStatus,
                       outputData: (try? Data(contentsOf: URL(fileURLWithPath: outFile))) ?? Data(),
                       error: (try? String(contentsOfFile: errFile, encoding: .utf8)) ?? "",
                       timedOut: timedOut)
    }

    /// Runs the `openssl` tool, the independent judge of what the TLS code
    /// writes and presents.
    public static func openssl(_ arguments: [String], input: Data? = nil) throws -> ToolRun {
        try run("/usr/bin/openssl", arguments, input: input)
    }

    public static func curl(_ arguments: [String]) throws -> ToolRun {
        try run("/usr/bin/curl", ["--silent", "--show-error", "--max-time", "120"] + arguments)
    }
}

/// `intact` run as a child process, for what only a process shows: its
/// resident memory, `kill -9`, SIGTERM. Standard error goes to a file the
/// test reads (the banner names the bound address). `@unchecked Sendable`:
/// a sampling thread only reads /proc by the (immutable) process id.
public final class IntactProcess: @unchecked Sendable {
    public let process = Process()
    public let errorFile: String
    /// Where standard output goes when the caller asked for it to be kept.
    public let outputFile: String?

    /// The `intact` executable built next to the test binary (`swift build --build-tests` builds it).
    public static var executable: String {
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

    /// Starts `intact` with `arguments`; standard error (and standard output
    /// when `keepOutput`) go to files in `directory` (`name` tells several
    /// processes' files apart). `environment` replaces the inherited one's
    /// variables it names. `launcher`, when given, runs `intact`
    /// (`["/usr/bin/prlimit", "--fsize=8192", "--"]`).
    public init(_ arguments: [String], directory: String, keepOutput: Bool = false, name: String = "intact",
                environment: [String: String] = [:], launcher: [String] = []) throws {
        errorFile = directory + "/\(name)-stderr.txt"
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        _ = FileManager.default.createFile(atPath: errorFile, contents: nil)
        if let program = launcher.first {
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = Array(launcher.dropFirst()) + [IntactProcess.executable] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: IntactProcess.executable)
            process.arguments = arguments
        }
        if keepOutput {
            let file = directory + "/\(name)-stdout.txt"
            _ = FileManager.default.createFile(atPath: file, contents: nil)
            outputFile = file
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: file))
        } else {
            outputFile = nil
            process.standardOutput = FileHandle.nullDevice
        }
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorFile))
        try process.run()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
    }

    public var standardError: String { (try? String(contentsOfFile: errorFile, encoding: .utf8)) ?? "" }

    /// What the process printed on standard output so far (empty unless `keepOutput`).
    public var standardOutput: String {
        outputFile.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? ""
    }

    /// Waits (bounded, 10 s) until standard output contains `text`; throws if the process exits first.
    public func waitForOutput(containing text: String) throws {
        for _ in 0..<1000 {
            if standardOutput.contains(text) { return }
            guard process.isRunning else { throw TestSetupFailure("intact exited: \(standardError)\(standardOutput)") }
            usleep(10_000)
        }
        throw TestSetupFailure("intact never printed '\(text)': \(standardOutput)")
    }

    /// Waits for the "listening on ADDR:PORT" banner; returns the port.
    public func waitForPort() throws -> Int {
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
    public func residentKiB() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8) else {
            return nil
        }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        }
        return nil
    }

    public func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Waits for the exit; returns the status (or 128 + signal).
    public func waitForExit() -> Int32 {
        process.waitUntilExit()
        return process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
    }
}

/// A test environment problem (a missing tool, a port in use), not a product failure.
public struct TestSetupFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// `openssl` with its exit status and its standard output and error together.
public func runOpenSSL(_ arguments: [String]) throws -> (status: Int32, output: String) {
    let run = try ToolRun.openssl(arguments)
    return (run.status, run.output + run.error)
}
