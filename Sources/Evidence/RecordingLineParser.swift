import Foundation

/// Decodes the lines of one recording, one at a time in file order: the
/// header first, then exchange records. The one place a recording line is
/// turned into a value, for the whole-file reader (`RecordingReader`) and
/// the streaming one (`RecordingStream`); one owner, the reader that made it.
///
/// An exchange line as Intact writes it is decoded by
/// `ExchangeRecordLineDecoder` (field by field from the bytes); anything
/// else — the header, a line of an older build, a hand-edited one, a
/// malformed one — by `JSONDecoder`, which also names what is wrong.
/// Invariant: `header` is set before any record is returned.
struct RecordingLineParser {
    let path: String
    private let decoder: JSONDecoder
    private(set) var header: RecordingHeader?
    /// The 1-based number of the last line taken.
    private(set) var lineNumber = 0
    /// Exchange lines decoded by the fast decoder, and by `JSONDecoder`.
    private(set) var fastLines = 0
    private(set) var generalLines = 0

    /// True until the first line after `init(path:continuing:)`: a header
    /// there is the new file's own, not a second one.
    private var continuing = false

    init(path: String) {
        self.path = path
        decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
    }

    /// A parser for a recording's file read again from its start after it was
    /// truncated or replaced: its records are read under `header` until a
    /// header line at its start says otherwise.
    init(path: String, continuing header: RecordingHeader) {
        self.init(path: path)
        self.header = header
        continuing = true
    }

    /// What one line was.
    enum Line {
        case header(RecordingHeader)
        case record(ExchangeRecord)
        /// A last line with no newline that does not parse: the writer stopped mid-line.
        case torn(RecordingWarning)
    }

    /// Decodes one line (without its newline); `terminated` is false for a
    /// last line with no newline. Throws `RecordingReadError` naming the
    /// file and line for a line that is not a valid header or record.
    mutating func parse(_ line: UnsafeRawBufferPointer, terminated: Bool) throws -> Line {
        lineNumber += 1
        let wasContinuing = continuing
        continuing = false
        if header != nil, ExchangeRecordLineDecoder.looksLikeExchange(line),
           let record = ExchangeRecordLineDecoder.decode(line) {
            fastLines += 1
            return .record(record)
        }
        let decoded: RecordingLine
        do {
            decoded = try decoder.decode(RecordingLine.self, from: Data(line))
        } catch let unsupported as RecordingLine.UnsupportedFormat {
            throw RecordingReadError.unsupportedFormat(path: path, found: unsupported.found,
                                                       supported: RecordingFormat.version)
        } catch {
            if !terminated {
                return .torn(RecordingWarning(path: path, line: lineNumber,
                    message: "skipped a torn last line (\(line.count) bytes, no newline): the writer stopped mid-line"))
            }
            let reason = RecordingReader.describe(error)
            if header == nil { throw RecordingReadError.missingHeader(path: path, reason: reason) }
            throw RecordingReadError.malformedLine(path: path, line: lineNumber,
                                                   column: RecordingReader.column(of: error, in: line), reason: reason)
        }
        switch (decoded, header) {
        case (.header(let h), nil):
            header = h
            return .header(h)
        case (.header(let h), .some) where wasContinuing:
            header = h
            return .header(h)
        case (.exchange(let record), .some):
            generalLines += 1
            return .record(record)
        case (.exchange, nil):
            throw RecordingReadError.missingHeader(path: path, reason: "the first line is an exchange record")
        case (.header, .some):
            throw RecordingReadError.malformedLine(path: path, line: lineNumber, column: nil,
                                                   reason: "a second header line (two recordings concatenated?)")
        }
    }

    /// Decodes one line given as bytes of `Data`.
    mutating func parse(_ line: Data.SubSequence, terminated: Bool) throws -> Line {
        try line.withUnsafeBytes { try parse($0, terminated: terminated) }
    }
}
