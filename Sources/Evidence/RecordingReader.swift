import ConfigurationFile
import Foundation

/// A recording read back: its header, its exchange records in file order, and
/// what the reader had to skip.
public struct Recording: Sendable {
    /// The file it was read from (or the name given for in-memory bytes).
    public var path: String
    public var header: RecordingHeader
    public var records: [ExchangeRecord]
    /// Things skipped without failing, e.g. a torn last line.
    public var warnings: [RecordingWarning]

    public init(path: String, header: RecordingHeader, records: [ExchangeRecord], warnings: [RecordingWarning] = []) {
        self.path = path
        self.header = header
        self.records = records
        self.warnings = warnings
    }
}

/// Something a reader skipped, with where it was.
public struct RecordingWarning: Hashable, Sendable, CustomStringConvertible {
    public var path: String
    /// 1-based line number.
    public var line: Int
    public var message: String
    /// 1-based column (characters) of the value a malformed line's error is
    /// about, when it names one.
    public var column: Int? = nil

    public var description: String { "\(path):\(line)\(column.map { ":\($0)" } ?? ""): \(message)" }
}

/// Why a recording could not be read, naming the file and, where it applies,
/// the line.
public enum RecordingReadError: Error, Hashable, Sendable, CustomStringConvertible {
    case cannotRead(path: String, reason: String)
    /// No complete line at all.
    case empty(path: String)
    /// The first line is not a recording header.
    case missingHeader(path: String, reason: String)
    /// The header names a format version this build does not read.
    case unsupportedFormat(path: String, found: Int, supported: Int)
    /// A complete line (not the torn last one) is not a valid record;
    /// `column` is where the value it is about starts, when the error names one.
    case malformedLine(path: String, line: Int, column: Int?, reason: String)

    public var description: String {
        switch self {
        case .cannotRead(let path, let reason): return "\(path): cannot read recording: \(reason)"
        case .empty(let path): return "\(path): empty recording (no complete line)"
        case .missingHeader(let path, let reason): return "\(path):1: not an Intact recording: \(reason)"
        case .unsupportedFormat(let path, let found, let supported):
            return "\(path):1: recording format version \(found) is not supported by this build (it reads versions 1 to \(supported))"
        case .malformedLine(let path, let line, let column, let reason):
            return "\(path):\(line)\(column.map { ":\($0)" } ?? ""): malformed record: \(reason)"
        }
    }
}

/// Reads JSON Lines recordings written by `RecordingWriter`.
///
/// Tolerates exactly what a crash can leave: a last line with no newline that
/// does not parse is skipped with a warning (returned, not printed). Anything
/// else that does not parse is an error naming the file and line.
public enum RecordingReader {
    /// Reads a recording file. Blocks on disk I/O — never call on a loop queue.
    ///
    /// The file is read in chunks of 4 MiB and decoded line by line as they
    /// come, never held whole: a recording of gigabytes costs its decoded
    /// records, not its size on top. Lines longer than a chunk
    /// are gathered whole. What a writer appends while it is read is read
    /// up to where the reader finds the end of the file.
    public static func read(path: String) throws -> Recording {
        try read(path: path, chunkSize: 4 << 20)
    }

    /// `read(path:)` in chunks of `chunkSize` bytes.
    public static func read(path: String, chunkSize: Int) throws -> Recording {
        let handle: FileHandle
        do {
            handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        } catch {
            throw RecordingReadError.cannotRead(path: path, reason: (error as NSError).localizedDescription)
        }
        defer { try? handle.close() }
        var lines = LineDecoder(path: path)
        var pending = Data()
        while true {
            let chunk: Data
            do {
                chunk = try handle.read(upToCount: max(chunkSize, 1)) ?? Data()
            } catch {
                throw RecordingReadError.cannotRead(path: path, reason: (error as NSError).localizedDescription)
            }
            if chunk.isEmpty { break }
            pending.append(chunk)
            guard let last = pending.lastIndex(of: newline) else { continue }
            if try !lines.take(whole: pending[..<last]) { return try lines.finish() }
            pending = Data(pending[pending.index(after: last)...])
        }
        if !pending.isEmpty { _ = try lines.take(pending, terminated: false) }
        return try lines.finish()
    }

    private static let newline = UInt8(ascii: "\n")

    /// Reads a recording from bytes; `path` names it in warnings and errors.
    public static func read(_ data: Data, path: String) throws -> Recording {
        var lines = LineDecoder(path: path)
        if let last = data.lastIndex(of: newline) {
            if try !lines.take(whole: data[..<last]) { return try lines.finish() }
            let rest = data[data.index(after: last)...]
            if !rest.isEmpty { _ = try lines.take(rest, terminated: false) }
        } else if !data.isEmpty {
            _ = try lines.take(data, terminated: false)
        }
        return try lines.finish()
    }

    /// Decodes a recording line by line, in file order, keeping its records;
    /// one owner, the read that made it.
    private struct LineDecoder {
        var parser: RecordingLineParser
        var records: [ExchangeRecord] = []
        var warnings: [RecordingWarning] = []

        init(path: String) {
            parser = RecordingLineParser(path: path)
        }

        /// Takes complete lines: `bytes` up to (not including) the newline
        /// that ends its last line. False when reading stopped.
        mutating func take(whole bytes: Data.SubSequence) throws -> Bool {
            var lineStart = bytes.startIndex
            for lineEnd in Self.newlines(in: bytes) + [bytes.endIndex] {
                if try !take(bytes[lineStart..<lineEnd], terminated: true) { return false }
                lineStart = lineEnd + 1
            }
            return true
        }

        /// The indices of the newlines in `bytes`, found with `memchr` (a
        /// byte-by-byte search cost a fifth of the read).
        static func newlines(in bytes: Data.SubSequence) -> [Data.Index] {
            bytes.withUnsafeBytes { raw -> [Data.Index] in
                guard let base = raw.baseAddress else { return [] }
                var found: [Data.Index] = []
                var offset = 0
                while offset < raw.count, let hit = memchr(base + offset, Int32(RecordingReader.newline), raw.count - offset) {
                    let at = base.distance(to: UnsafeRawPointer(hit))
                    found.append(bytes.startIndex + at)
                    offset = at + 1
                }
                return found
            }
        }

        /// Takes one line (without its newline); `terminated` is false for a
        /// last line with no newline. False when reading stopped (a torn last line).
        mutating func take(_ line: Data.SubSequence, terminated: Bool) throws -> Bool {
            switch try parser.parse(line, terminated: terminated) {
            case .header: return true
            case .record(let record):
                records.append(record)
                return true
            case .torn(let warning):
                warnings.append(warning)
                return false
            }
        }

        func finish() throws -> Recording {
            let path = parser.path
            guard let header = parser.header else {
                if parser.lineNumber == 0 || (parser.lineNumber == 1 && !warnings.isEmpty) {
                    throw RecordingReadError.empty(path: path)
                }
                throw RecordingReadError.missingHeader(path: path, reason: "no header line")
            }
            return Recording(path: path, header: header, records: records, warnings: warnings)
        }
    }

    /// A short, precise reason for a decoding failure: what was wrong and at
    /// which key path.
    /// The column (1-based, in characters) where the value `error` is about
    /// starts on `line`: its coding path followed through the line parsed
    /// again with positions (`LocatedJSON`); nil when the error names no
    /// value (a missing member, not JSON) or the path does not lead to one.
    /// Only on the error path: a line read without error is never parsed twice.
    static func column(of error: Error, in line: UnsafeRawBufferPointer) -> Int? {
        let codingPath: [CodingKey]
        switch error {
        case DecodingError.dataCorrupted(let context), DecodingError.typeMismatch(_, let context),
             DecodingError.valueNotFound(_, let context):
            codingPath = context.codingPath
        default:
            return nil
        }
        guard !codingPath.isEmpty, var value = try? LocatedJSON.parse(Array(line)) else { return nil }
        for key in codingPath {
            switch value.value {
            case .array(let elements):
                guard let index = key.intValue, elements.indices.contains(index) else { return nil }
                value = elements[index]
            case .object(let members):
                guard let member = members.last(where: { $0.key == key.stringValue }) else { return nil }
                value = member.value
            default:
                return nil
            }
        }
        return value.position.column
    }

    static func describe(_ error: Error) -> String {
        func at(_ path: [CodingKey]) -> String {
            path.isEmpty ? "" : " at " + path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case DecodingError.dataCorrupted(let context):
            if context.codingPath.isEmpty { return "not JSON" }
            return context.debugDescription + at(context.codingPath)
        case DecodingError.keyNotFound(let key, let context):
            return "missing \"\(key.stringValue)\"" + at(context.codingPath)
        case DecodingError.typeMismatch(let type, let context):
            return "expected \(type)" + at(context.codingPath)
        case DecodingError.valueNotFound(let type, let context):
            return "null where \(type) was expected" + at(context.codingPath)
        default:
            return "\(error)"
        }
    }
}
