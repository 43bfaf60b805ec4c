/// The bytes an `HTTP1Parser` has received and not yet consumed, with a line
/// cursor that lets a head be parsed line by line while its bytes stay in
/// place (so the raw head can be copied out whole at the end).
///
/// Invariants: `readIndex <= lineStart <= scanIndex <= bytes.count`. Bytes
/// before `readIndex` are consumed and dropped by `append` once they are
/// worth moving. The LF search resumes at `scanIndex`, so feeding a head one
/// byte at a time scans each byte once (linear, not quadratic).
struct HTTP1InputBuffer: Sendable {
    private(set) var bytes: [UInt8] = []
    /// The first unconsumed byte.
    private(set) var readIndex = 0
    /// Where the line being read starts.
    private var lineStart = 0
    /// Where the search for the line's LF resumes.
    private var scanIndex = 0

    /// The result of looking for the next CRLF-terminated line.
    enum Line {
        /// A complete line: the range of its bytes, CRLF excluded.
        case line(Range<Int>)
        /// No LF yet; `pendingLength` bytes of the line have arrived.
        case incomplete(pendingLength: Int)
        /// An LF not preceded by CR.
        case bareLineFeed
    }

    /// Unconsumed byte count.
    var readableCount: Int { bytes.count - readIndex }

    /// Where the line cursor is, relative to `readIndex`.
    var lineOffset: Int { lineStart - readIndex }

    /// Adds received bytes. When everything before was consumed the array is
    /// adopted as is (no copy, and no large capacity kept from an earlier
    /// burst); otherwise consumed bytes are dropped first when they are at
    /// least half the buffer, so each byte moves a bounded number of times.
    mutating func append(_ newBytes: [UInt8]) {
        if readIndex == bytes.count {
            bytes = newBytes
            readIndex = 0
            lineStart = 0
            scanIndex = 0
            return
        }
        if readIndex >= 4096 && readIndex * 2 >= bytes.count {
            bytes.removeSubrange(0..<readIndex)
            lineStart -= readIndex
            scanIndex -= readIndex
            readIndex = 0
        }
        bytes.append(contentsOf: newBytes)
    }

    /// Finds the next line at the cursor and moves the cursor past its CRLF.
    /// Consumes nothing: `consumeToCursor()` does.
    mutating func readLine() -> Line {
        guard let lf = bytes[scanIndex...].firstIndex(of: HTTP1Grammar.lf) else {
            scanIndex = bytes.count
            return .incomplete(pendingLength: bytes.count - lineStart)
        }
        guard lf > lineStart, bytes[lf - 1] == HTTP1Grammar.cr else { return .bareLineFeed }
        let line = lineStart..<(lf - 1)
        lineStart = lf + 1
        scanIndex = lineStart
        return .line(line)
    }

    /// Copies the first `count` unconsumed bytes (from `readIndex`).
    func peek(_ count: Int) -> [UInt8] { Array(bytes[readIndex..<(readIndex + count)]) }

    /// Consumes every byte before the line cursor.
    mutating func consumeToCursor() {
        readIndex = lineStart
        releaseIfConsumed()
    }

    /// Consumes and returns up to `max` bytes; the cursor moves with them.
    /// Hands over the whole array without copying when it is all unconsumed.
    mutating func take(upTo max: Int) -> [UInt8] {
        let n = Swift.min(max, readableCount)
        if readIndex == 0 && n == bytes.count {
            let all = bytes
            bytes = []
            lineStart = 0
            scanIndex = 0
            return all
        }
        let taken = peek(n)
        skip(n)
        return taken
    }

    /// Consumes `count` bytes without copying them.
    mutating func skip(_ count: Int) {
        readIndex += count
        lineStart = readIndex
        scanIndex = readIndex
        releaseIfConsumed()
    }

    /// Drops the storage once every byte is consumed: the next `append`
    /// adopts its array anyway, and an idle keep-alive connection's parser
    /// then holds nothing of its last request.
    private mutating func releaseIfConsumed() {
        guard readIndex == bytes.count, readIndex > 0 else { return }
        bytes = []
        readIndex = 0
        lineStart = 0
        scanIndex = 0
    }
}
