import Foundation

/// One recording read as a stream: its header when opened, then one record
/// at a time in file order, never the whole file in memory (chunks of
/// `chunkSize` bytes; a line longer than a chunk is gathered whole).
///
/// What it tolerates, each said in `warnings` with the file and line:
/// - a torn last line (no newline, does not parse): skipped, as
///   `RecordingReader` does;
/// - a corrupt line in the middle: skipped and counted in `unreadable`
///   (a verification then fails its policy), the stream goes on;
/// - while following (`poll()` after the end): a file that grows is read
///   on; one truncated or replaced (log rotation) is read again from its
///   start, said once each time.
///
/// Blocks on disk I/O; one owner (the verification that opened it).
public final class RecordingStream {
    public let path: String
    /// The recording's header (read by `init`, which throws without one).
    public var header: RecordingHeader { readHeader! }
    private var readHeader: RecordingHeader?
    /// Skipped lines and what happened to the file, `path:line: message`.
    public private(set) var warnings: [RecordingWarning] = []
    /// Complete lines that were not a valid record (skipped).
    public private(set) var unreadable = 0
    /// Records returned so far.
    public private(set) var records = 0
    /// Bytes consumed so far (whole lines), and the file's size when last looked at.
    public private(set) var bytesRead = 0
    public private(set) var size = 0

    private var parser: RecordingLineParser
    /// The open file (a descriptor of its own, closed exactly once: by `reopen` or `deinit`).
    private var descriptor: Int32
    private var identity: FileIdentity
    /// Bytes read and not yet consumed start at `consumed`; the `scanned`
    /// bytes after it are known to hold no newline.
    private var buffer: [UInt8] = []
    /// Where `read(2)` puts a chunk before it joins `buffer`: made once, so
    /// growing `buffer` never fills `chunkSize` placeholder bytes first (in a
    /// debug build that fill cost seconds per file).
    private lazy var chunk = [UInt8](repeating: 0, count: chunkSize)
    private var consumed = 0
    private var scanned = 0
    private var atEOF = false
    private let chunkSize: Int

    /// Bytes read from the file that are not a whole line yet.
    private var unconsumed: Int { buffer.count - consumed }

    /// Opens a recording and reads its header. Throws `RecordingReadError`
    /// when the file cannot be read or does not start with a header.
    public init(path: String, chunkSize: Int = 4 << 20) throws {
        self.path = path
        self.chunkSize = max(chunkSize, 1)
        (descriptor, identity) = try RecordingStream.open(path)
        parser = RecordingLineParser(path: path)
        size = identity.size
        let header: RecordingHeader?
        let terminated: Bool
        if let range = try nextLine() {
            terminated = true
            header = try parseHeader(range, terminated: true)
        } else if unconsumed > 0 {
            // A header with no newline: a recording of one line, or a writer that stopped mid-line.
            terminated = false
            header = try parseHeader(consumed..<buffer.count, terminated: false)
            bytesRead += unconsumed
            consumed = buffer.count
        } else {
            throw RecordingReadError.empty(path: path)
        }
        guard let header else {
            throw terminated ? RecordingReadError.missingHeader(path: path, reason: "no header line")
                : RecordingReadError.empty(path: path)
        }
        readHeader = header
    }

    deinit { close(descriptor) }

    /// The header on the first line; nil for a torn one. Throws for a line that is no header.
    private func parseHeader(_ range: Range<Int>, terminated: Bool) throws -> RecordingHeader? {
        switch try parse(range, terminated: terminated) {
        case .header(let h): return h
        case .torn: return nil
        case .record: throw RecordingReadError.missingHeader(path: path, reason: "the first line is an exchange record")
        }
    }

    private func parse(_ range: Range<Int>, terminated: Bool) throws -> RecordingLineParser.Line {
        try buffer.withUnsafeBytes { raw in
            try parser.parse(UnsafeRawBufferPointer(rebasing: raw[range]), terminated: terminated)
        }
    }

    /// The next record in file order; nil at the end of what is written so far.
    public func next() throws -> ExchangeRecord? {
        while let range = try nextLine() {
            do {
                switch try parse(range, terminated: true) {
                case .record(let record):
                    records += 1
                    return record
                case .header: continue
                case .torn(let warning):
                    warnings.append(warning)
                    return nil
                }
            } catch let error as RecordingReadError {
                try skip(error)
            }
        }
        return nil
    }

    /// The 1-based number of the line the last record came from.
    public var lineNumber: Int { parser.lineNumber }

    /// While following: looks at the file again after `next()` reached its
    /// end. True when there is more to read (it grew, or it was truncated or
    /// replaced and is read again from its start, which is said in `warnings`).
    public func poll() throws -> Bool {
        // The open file first: what was written to it before it was replaced is read to its end.
        if let current = FileIdentity(descriptor: descriptor) {
            if current.size < bytesRead + unconsumed {
                try reopen(reason: "was truncated to \(current.size) bytes: reading it again from its start")
                return true
            }
            if current.size > bytesRead + unconsumed {
                size = current.size
                atEOF = false
                return true
            }
        }
        if let now = FileIdentity(path: path), now.device != identity.device || now.inode != identity.inode {
            try reopen(reason: "was replaced (rotated?): reading the new file from its start")
            return true
        }
        return false
    }

    /// Bytes consumed, for progress: what has been read of `size`.
    public var fractionRead: Double { size > 0 ? min(1, Double(bytesRead) / Double(size)) : 1 }

    private func reopen(reason: String) throws {
        warnings.append(RecordingWarning(path: path, line: parser.lineNumber, message: "the recording \(reason)"))
        let (reopened, now) = try RecordingStream.open(path)
        close(descriptor)
        (descriptor, identity) = (reopened, now)
        size = identity.size
        buffer = []
        consumed = 0
        scanned = 0
        bytesRead = 0
        atEOF = false
        // A header on the new file's first line is its own, not a second one;
        // a file truncated in place may start with records at once.
        parser = RecordingLineParser(path: path, continuing: header)
    }

    /// The byte range in `buffer` of the next whole line, without its
    /// newline; nil when no whole line is left (what follows the last
    /// newline may be a line still being written).
    private func nextLine() throws -> Range<Int>? {
        while true {
            let newline: Int? = buffer.withUnsafeBytes { raw in
                let from = consumed + scanned
                guard raw.count > from, let hit = memchr(raw.baseAddress! + from, 0x0a, raw.count - from) else { return nil }
                return raw.baseAddress!.distance(to: UnsafeRawPointer(hit))
            }
            if let newline {
                let line = consumed..<newline
                bytesRead += newline + 1 - consumed
                consumed = newline + 1
                scanned = 0
                return line
            }
            scanned = unconsumed
            if atEOF { return nil }
            if consumed > 0 {
                buffer.removeSubrange(0..<consumed)
                consumed = 0
            }
            let count = chunk.withUnsafeMutableBytes { raw in
                read(descriptor, raw.baseAddress!, chunkSize)
            }
            if count > 0 {
                chunk.withUnsafeBytes { raw in buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[..<count])) }
            }
            if count < 0 {
                throw RecordingReadError.cannotRead(path: path, reason: String(cString: strerror(errno)))
            }
            if count == 0 {
                atEOF = true
                return nil
            }
            size = max(size, bytesRead + unconsumed)
        }
    }

    /// The unterminated rest at the end of the file, as a last line: a torn
    /// line is said in `warnings`; a complete line without its newline is a
    /// record (as `RecordingReader` reads it). Call once, when done reading.
    public func finish() throws -> ExchangeRecord? {
        guard unconsumed > 0 else { return nil }
        let rest = consumed..<buffer.count
        bytesRead += unconsumed
        consumed = buffer.count
        scanned = 0
        do {
            switch try parse(rest, terminated: false) {
            case .record(let record):
                records += 1
                return record
            case .torn(let warning):
                warnings.append(warning)
            case .header:
                break
            }
        } catch let error as RecordingReadError {
            try skip(error)
        }
        return nil
    }

    /// Counts a malformed line and warns of it (the stream goes on with the
    /// next line); any other read error is thrown on.
    private func skip(_ error: RecordingReadError) throws {
        guard case .malformedLine(_, let line, let column, let reason) = error else { throw error }
        unreadable += 1
        warnings.append(RecordingWarning(path: path, line: line, message: "skipped a malformed record: \(reason)",
                                         column: column))
    }

    private static func open(_ path: String) throws -> (Int32, FileIdentity) {
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw RecordingReadError.cannotRead(path: path, reason: String(cString: strerror(errno)))
        }
        guard let identity = FileIdentity(descriptor: descriptor) else {
            close(descriptor)
            throw RecordingReadError.cannotRead(path: path, reason: "cannot stat the file")
        }
        return (descriptor, identity)
    }
}

/// A file's device, inode and size: what tells a grown file from a truncated or replaced one.
struct FileIdentity {
    let device: UInt64
    let inode: UInt64
    let size: Int

    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        self.init(info)
    }

    init?(descriptor: Int32) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        self.init(info)
    }

    private init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int(info.st_size)
    }
}
