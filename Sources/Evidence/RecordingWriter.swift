import Dispatch
import Foundation
import Glibc

/// Appends exchange records to a JSON Lines recording so that a crash or
/// `kill -9` at any moment leaves every complete line readable.
///
/// - The file is opened `O_APPEND`, mode 0600 (recordings may hold secrets),
///   and the header line is written before `init` returns.
/// - Records are encoded and written on the writer's own serial queue, never
///   on the caller's event loop. Each line (JSON plus `\n`) is handed to one
///   `write(2)`; only if the kernel takes part of it (disk full) is the rest
///   retried, and after a failed write nothing more is written, so a torn
///   line can only ever be the last one.
/// - A record handed to `append` before `close` is always written, unless a
///   write fails; then `flush` and `close` report how many were lost.
///
/// `@unchecked Sendable`: `state`, `encoder` and the descriptor are touched
/// only on `queue` (and in `init`/`deinit`, when no other reference exists).
public final class RecordingWriter: @unchecked Sendable {
    public let path: String
    private let queue: DispatchQueue
    private let encoder: JSONEncoder
    private var state: State
    /// Records lost to an encoding failure, and the first reason; touched only on `queue`.
    private var encodingLoss: (count: Int, reason: String)?

    private enum State {
        case open(fd: Int32)
        /// A write failed: the file may end in a torn line, so the writer
        /// writes nothing more and counts what it is handed.
        case stopped(fd: Int32, reason: String, lost: Int)
        case closed
    }

    /// Creates the recording and writes its header line.
    ///
    /// - Parameter replacing: truncate an existing file; otherwise an existing
    ///   file is an error, so earlier evidence is never overwritten by accident.
    /// - Throws: `RecordingWriteError` (`alreadyExists`, `cannotOpen`, `writeFailed`).
    public init(path: String, header: RecordingHeader, replacing: Bool = false) throws {
        self.path = path
        queue = DispatchQueue(label: "intact.recording-writer")
        let encoder = RecordingLine.makeEncoder()
        self.encoder = encoder
        let flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (replacing ? O_TRUNC : O_EXCL)
        let fd = Glibc.open(path, flags, 0o600)
        guard fd >= 0 else {
            let code = errno
            throw RecordingWriteError(kind: code == EEXIST ? .alreadyExists : .cannotOpen, path: path,
                                      reason: RecordingWriteError.describe(errno: code))
        }
        do {
            let line = try RecordingLine.encode(header, as: .header, with: encoder)
            if let reason = RecordingWriter.writeWhole(line, to: fd) {
                throw RecordingWriteError(kind: .writeFailed, path: path, reason: reason)
            }
        } catch {
            Glibc.close(fd)
            throw error as? RecordingWriteError
                ?? RecordingWriteError(kind: .encodingFailed, path: path, reason: "\(error)")
        }
        state = .open(fd: fd)
    }

    deinit {
        switch state {
        case .open(let fd), .stopped(let fd, _, _): Glibc.close(fd)
        case .closed: break
        }
    }

    /// Queues a record to be encoded and written. Never blocks. Must not be
    /// called after `close` (a programming error: the record would be lost).
    public func append(_ record: ExchangeRecord) {
        queue.async { self.write(record) }
    }

    /// After every record appended so far is written, syncs the file to disk
    /// and calls `completion` on the writer's queue with the first problem
    /// seen so far, if any.
    public func flush(_ completion: @escaping @Sendable (RecordingWriteError?) -> Void) {
        queue.async { completion(self.syncOnQueue()) }
    }

    /// After every record appended so far is written, syncs and closes the
    /// file and calls `completion` on the writer's queue with the first
    /// problem seen, if any.
    public func close(_ completion: @escaping @Sendable (RecordingWriteError?) -> Void) {
        queue.async { completion(self.closeOnQueue()) }
    }

    /// `close`, waiting for it. Blocks on disk I/O — never call on a loop queue.
    public func closeAndWait() -> RecordingWriteError? {
        queue.sync { closeOnQueue() }
    }

    // MARK: - On the writer's queue

    private func write(_ record: ExchangeRecord) {
        dispatchPrecondition(condition: .onQueue(queue))
        switch state {
        case .open(let fd):
            let line: [UInt8]
            do {
                line = try RecordingLine.encode(record, as: .exchange, with: encoder)
            } catch {
                encodingLoss = (count: (encodingLoss?.count ?? 0) + 1, reason: encodingLoss?.reason ?? "\(error)")
                return
            }
            if let reason = RecordingWriter.writeWhole(line, to: fd) {
                state = .stopped(fd: fd, reason: reason, lost: 1)
            }
        case .stopped(let fd, let reason, let lost):
            state = .stopped(fd: fd, reason: reason, lost: lost + 1)
        case .closed:
            assertionFailure("RecordingWriter.append called after close; record \(record.exchangeID) lost")
        }
    }

    private func syncOnQueue() -> RecordingWriteError? {
        dispatchPrecondition(condition: .onQueue(queue))
        switch state {
        case .open(let fd):
            if fsync(fd) != 0 {
                return RecordingWriteError(kind: .writeFailed, path: path,
                                           reason: "fsync: " + RecordingWriteError.describe(errno: errno))
            }
            return encodingProblem()
        case .stopped(_, let reason, let lost):
            return RecordingWriteError(kind: .writeFailed, path: path, reason: reason, lostRecords: lost)
        case .closed:
            return RecordingWriteError(kind: .closed, path: path, reason: "the recording is already closed")
        }
    }

    private func closeOnQueue() -> RecordingWriteError? {
        dispatchPrecondition(condition: .onQueue(queue))
        let problem = syncOnQueue()
        switch state {
        case .open(let fd), .stopped(let fd, _, _):
            Glibc.close(fd)
            state = .closed
            return problem
        case .closed:
            return problem
        }
    }

    private func encodingProblem() -> RecordingWriteError? {
        encodingLoss.map {
            RecordingWriteError(kind: .encodingFailed, path: path, reason: $0.reason, lostRecords: $0.count)
        }
    }

    /// Writes all of `line`, retrying only the part a short write left and
    /// `EINTR`; returns the reason on failure.
    private static func writeWhole(_ line: [UInt8], to fd: Int32) -> String? {
        line.withUnsafeBytes { buffer -> String? in
            guard let base = buffer.baseAddress else { return nil }
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(fd, base + offset, buffer.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    let reason = written == 0 ? "write made no progress" : RecordingWriteError.describe(errno: errno)
                    return "write after \(offset) of \(buffer.count) bytes: \(reason)"
                }
            }
            return nil
        }
    }
}

/// Why a recording could not be written, naming the file.
public struct RecordingWriteError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Hashable, Sendable {
        /// The file exists and `replacing` was not set.
        case alreadyExists
        case cannotOpen
        /// A write or sync failed; nothing after it was written.
        case writeFailed
        /// A record could not be encoded as JSON and was skipped.
        case encodingFailed
        /// `flush` after `close`.
        case closed
    }

    public var kind: Kind
    public var path: String
    public var reason: String
    /// Records handed to the writer that are not in the file.
    public var lostRecords: Int

    public init(kind: Kind, path: String, reason: String, lostRecords: Int = 0) {
        self.kind = kind
        self.path = path
        self.reason = reason
        self.lostRecords = lostRecords
    }

    public var description: String {
        let lost = lostRecords > 0 ? " (\(lostRecords) record\(lostRecords == 1 ? "" : "s") lost)" : ""
        switch kind {
        case .alreadyExists: return "\(path): recording already exists; choose another file or replace it"
        case .cannotOpen: return "\(path): cannot open recording: \(reason)"
        case .writeFailed: return "\(path): writing the recording failed: \(reason)\(lost)"
        case .encodingFailed: return "\(path): a record could not be encoded: \(reason)\(lost)"
        case .closed: return "\(path): \(reason)"
        }
    }

    static func describe(errno code: Int32) -> String {
        String(cString: strerror(code))
    }
}
