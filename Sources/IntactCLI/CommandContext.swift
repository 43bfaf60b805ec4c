import Glibc
import Synchronization

/// What a command may touch besides its arguments: where it writes. Tests
/// pass capturing writers; `intact` itself passes the process's
/// standard output and error.
public struct CommandContext: Sendable {
    public let standardOutput: OutputWriter
    public let standardError: OutputWriter

    public init(standardOutput: OutputWriter, standardError: OutputWriter) {
        self.standardOutput = standardOutput
        self.standardError = standardError
    }

    /// The process's standard output and standard error.
    public static let standard = CommandContext(standardOutput: OutputWriter(fileDescriptor: STDOUT_FILENO),
                                                standardError: OutputWriter(fileDescriptor: STDERR_FILENO))
}

/// A destination for text: a file descriptor, or a buffer a test reads.
/// Writes are delivered in call order; safe to use from any thread.
public final class OutputWriter: Sendable {
    private let sink: @Sendable (String) -> Void

    /// Writes through `sink`, which must be safe to call from any thread.
    public init(_ sink: @escaping @Sendable (String) -> Void) {
        self.sink = sink
    }

    /// Writes to a file descriptor (unbuffered, retrying short writes;
    /// an error such as a closed pipe drops the rest of the text).
    public convenience init(fileDescriptor: Int32) {
        self.init { text in
            var bytes = Array(text.utf8)[...]
            while !bytes.isEmpty {
                let written = bytes.withUnsafeBytes { Glibc.write(fileDescriptor, $0.baseAddress, $0.count) }
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { return }
                bytes = bytes.dropFirst(written)
            }
        }
    }

    /// Writes `text` as is.
    public func write(_ text: String) {
        sink(text)
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
