import Foundation
import Glibc
import Synchronization

/// What a command may touch besides its arguments: where it writes, and the
/// environment it reads (the CA's home, `HTTPS_PROXY`). Tests pass capturing
/// writers and their own environment; `intact` itself passes the process's.
public struct CommandContext: Sendable {
    public let standardOutput: OutputWriter
    public let standardError: OutputWriter
    public let environment: [String: String]

    public init(standardOutput: OutputWriter, standardError: OutputWriter,
                environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.standardOutput = standardOutput
        self.standardError = standardError
        self.environment = environment
    }

    /// The process's standard output and standard error.
    public static let standard = CommandContext(standardOutput: OutputWriter(fileDescriptor: STDOUT_FILENO),
                                                standardError: OutputWriter(fileDescriptor: STDERR_FILENO))
}

/// A destination for text: a file descriptor, or a buffer a test reads.
/// Writes are delivered in call order; safe to use from any thread.
public final class OutputWriter: Sendable {
    private let sink: @Sendable (String) -> Void
    private let byteSink: @Sendable ([UInt8]) -> Void
    /// True when the text goes to a terminal (what progress lines are for);
    /// false for a pipe, a file or a buffer.
    public let isTerminal: Bool

    /// Writes through `sink`, which must be safe to call from any thread.
    /// Bytes (`write(_: [UInt8])`) reach it decoded as UTF-8.
    public init(_ sink: @escaping @Sendable (String) -> Void, isTerminal: Bool = false) {
        self.sink = sink
        self.byteSink = { sink(String(decoding: $0, as: UTF8.self)) }
        self.isTerminal = isTerminal
    }

    /// Writes to a file descriptor (unbuffered, retrying short writes;
    /// an error such as a closed pipe drops the rest of the text).
    public convenience init(fileDescriptor: Int32) {
        self.init(bytes: { bytes in OutputWriter.writeAll(bytes, to: fileDescriptor) }, isTerminal: isatty(fileDescriptor) != 0)
    }

    /// Writes bytes through `byteSink`; text reaches it as UTF-8.
    public init(bytes byteSink: @escaping @Sendable ([UInt8]) -> Void, isTerminal: Bool = false) {
        self.byteSink = byteSink
        self.sink = { byteSink(Array($0.utf8)) }
        self.isTerminal = isTerminal
    }

    private static func writeAll(_ all: [UInt8], to fileDescriptor: Int32) {
        var bytes = all[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(fileDescriptor, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return }
            bytes = bytes.dropFirst(written)
        }
    }

    /// Writes `text` as is.
    public func write(_ text: String) {
        sink(text)
    }

    /// Writes raw bytes (a DER certificate to standard output).
    public func write(_ bytes: [UInt8]) {
        byteSink(bytes)
    }

    /// Writes `line` and a newline.
    public func line(_ line: String = "") {
        sink(line + "\n")
    }
}

/// Collects what a command writes, for tests and for callers that embed
/// `intact` commands.
public final class CapturedOutput: Sendable {
    private let buffer = Mutex("")

    public init() {}

    /// A writer that appends to this buffer.
    public var writer: OutputWriter {
        OutputWriter { [self] text in buffer.withLock { $0 += text } }
    }

    /// Everything written so far.
    public var text: String {
        buffer.withLock { $0 }
    }
}
