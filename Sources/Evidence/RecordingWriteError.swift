import Glibc

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
        case .alreadyExists:
            return "\(path): recording already exists, and a recording is never overwritten or appended to: "
                + "give --record another file (a second client of the same run its own, with its own --tap: "
                + "intact verify takes both), or move this one away first"
        case .cannotOpen: return "\(path): cannot open recording: \(reason)"
        case .writeFailed: return "\(path): writing the recording failed: \(reason)\(lost)"
        case .encodingFailed: return "\(path): a record could not be encoded: \(reason)\(lost)"
        case .closed: return "\(path): \(reason)"
        }
    }

    static func describe(errno code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// Why a recording could not be created, with what to do about it.
    static func describeOpen(errno code: Int32) -> String {
        let reason = describe(errno: code)
        switch code {
        case EISDIR: return reason + " (the path names a directory; give a file name such as DIR/run.jsonl)"
        case EACCES, EPERM: return reason + " (no permission to create a file there)"
        case EROFS: return reason + " (the filesystem is mounted read-only)"
        case ENOENT: return reason + " (the directory does not exist)"
        case ENOTDIR: return reason + " (a part of the path is not a directory)"
        case ENOSPC: return reason + " (the disk is full)"
        default: return reason
        }
    }
}
