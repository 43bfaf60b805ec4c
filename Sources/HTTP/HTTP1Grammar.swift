/// Byte classes and small grammar rules of RFC 9110 and RFC 9112, shared by the
/// HTTP/1.1 parser and serializer so both sides agree on what is valid.
///
/// Every function works on bytes (never on `Character`s), because the wire is
/// bytes and a `Character` can merge CR and LF into one grapheme.
enum HTTP1Grammar {
    static let cr: UInt8 = 0x0D
    static let lf: UInt8 = 0x0A
    static let space: UInt8 = 0x20
    static let tab: UInt8 = 0x09
    static let colon: UInt8 = 0x3A
    static let semicolon: UInt8 = 0x3B
    static let comma: UInt8 = 0x2C
    static let equals: UInt8 = 0x3D
    static let quote: UInt8 = 0x22
    static let backslash: UInt8 = 0x5C
    static let crlf: [UInt8] = [0x0D, 0x0A]

    /// `tchar` (RFC 9110 §5.6.2) as two bit sets: bit `b` of `tokenBytesLow`
    /// for byte `b` below 64, bit `b - 64` of `tokenBytesHigh` for 64…127
    /// (`!#$%&'*+-.^_`|~`, digits, letters). No byte from 128 up is a `tchar`.
    private static let tokenBytesLow: UInt64 = 0x03FF_6CFA_0000_0000
    private static let tokenBytesHigh: UInt64 = 0x57FF_FFFF_C7FF_FFFE

    @inline(__always)
    static func isTokenByte(_ b: UInt8) -> Bool {
        b < 0x80 && ((b < 0x40 ? tokenBytesLow : tokenBytesHigh) >> UInt64(b & 0x3F)) & 1 != 0
    }

    /// `token = 1*tchar`.
    static func isToken<Bytes: Collection>(_ bytes: Bytes) -> Bool where Bytes.Element == UInt8 {
        if let contiguous = bytes.withContiguousStorageIfAvailable(isToken) { return contiguous }
        return !bytes.isEmpty && bytes.allSatisfy(isTokenByte)
    }

    /// `token = 1*tchar`, over bytes in memory (one loop, no iterator).
    static func isToken(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !bytes.isEmpty else { return false }
        for offset in 0..<bytes.count where !isTokenByte(bytes[offset]) { return false }
        return true
    }

    /// True when every byte is printable ASCII, SP through `~` (0x20–0x7E),
    /// eight at a time: the bytes of nearly every field value and reason
    /// phrase, which are then valid there (`isFieldValueByte`) and their own
    /// ISO-8859-1 and UTF-8 form. False for HTAB, any other control byte,
    /// DEL and every byte from 0x80 up (valid or not: the caller decides
    /// those byte by byte).
    static func isPrintableASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset + 8 <= bytes.count {
            if notPrintable(bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) != 0 { return false }
            offset += 8
        }
        while offset < bytes.count {
            if bytes[offset] &- 0x20 >= 0x5F { return false }
            offset += 1
        }
        return true
    }

    /// For each byte of `word` outside 0x20–0x7E, 0x80 in that byte's place;
    /// 0 elsewhere. With the high bits cleared, a byte plus 0x60 reaches 0x80
    /// from 0x20 up and a byte plus 0x01 does at 0x7F (DEL); neither sum
    /// carries into the next byte.
    @inline(__always)
    static func notPrintable(_ word: UInt64) -> UInt64 {
        let highBits: UInt64 = 0x8080_8080_8080_8080
        let low = word & ~highBits
        return (word | ~(low &+ 0x6060_6060_6060_6060) | (low &+ 0x0101_0101_0101_0101)) & highBits
    }

    /// The text of bytes that passed `isPrintableASCII` or `isToken`: copied
    /// as ASCII, not checked again.
    static func printableText(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        unsafe String(copying: UTF8Span(unchecked: bytes.span, isKnownASCII: true))
    }

    /// The text of a `token` (a field name, a method), or nil when the bytes
    /// are not one. One loop over the bytes; a token is ASCII, so its text
    /// is copied without a second scan.
    static func tokenText(_ bytes: ArraySlice<UInt8>) -> String? {
        bytes.withUnsafeBufferPointer { bytes in isToken(bytes) ? printableText(bytes) : nil }
    }

    /// The text of a field value or reason phrase as ISO-8859-1 (`text(_:)`),
    /// or nil when a byte is not allowed there (`isFieldValueByte`).
    /// Printable ASCII (nearly every value) is checked eight bytes at a time
    /// and copied without a second scan.
    static func fieldValueText(_ bytes: ArraySlice<UInt8>) -> String? {
        bytes.withUnsafeBufferPointer { bytes in
            if isPrintableASCII(UnsafeRawBufferPointer(bytes)) { return printableText(bytes) }
            guard bytes.allSatisfy(isFieldValueByte) else { return nil }
            return String(latin1: bytes)
        }
    }

    /// SP or HTAB, the only whitespace HTTP knows (`OWS`, `BWS`, `RWS`).
    static func isWhitespace(_ b: UInt8) -> Bool { b == space || b == tab }

    /// A byte allowed inside a field value: HTAB, SP, VCHAR or obs-text. Every
    /// other control byte (CR, LF, NUL, VT, DEL…) is refused.
    static func isFieldValueByte(_ b: UInt8) -> Bool {
        b == tab || (b >= 0x20 && b != 0x7F)
    }

    /// A visible ASCII byte (VCHAR), as allowed in a request target.
    static func isVisibleASCII(_ b: UInt8) -> Bool { b >= 0x21 && b <= 0x7E }

    static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    static func hexValue(_ b: UInt8) -> Int? {
        switch b {
        case 0x30...0x39: return Int(b - 0x30)
        case 0x41...0x46: return Int(b - 0x41 + 10)
        case 0x61...0x66: return Int(b - 0x61 + 10)
        default: return nil
        }
    }

    /// Removes leading and trailing SP/HTAB.
    static func trimmingWhitespace(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var lower = bytes.startIndex
        var upper = bytes.endIndex
        while lower < upper, isWhitespace(bytes[lower]) { lower += 1 }
        while upper > lower, isWhitespace(bytes[upper - 1]) { upper -= 1 }
        return bytes[lower..<upper]
    }

    /// Splits a comma-separated list (RFC 9110 §5.6.1) into its elements with
    /// surrounding whitespace removed. Empty elements are kept so callers can
    /// decide whether they are tolerable.
    static func listElements(_ value: String) -> [ArraySlice<UInt8>] {
        let bytes = Array(value.utf8)
        return bytes.split(separator: comma, omittingEmptySubsequences: false).map(trimmingWhitespace)
    }

    /// Calls `body` with each element of the comma-separated list in `bytes`
    /// (RFC 9110 §5.6.1), surrounding SP and HTAB trimmed, empty elements
    /// included (the same elements as `listElements`), until it returns
    /// true; returns whether it did. Views into `bytes`: nothing is copied.
    static func forEachListElement(_ bytes: UnsafeBufferPointer<UInt8>,
                                   _ body: (UnsafeBufferPointer<UInt8>) -> Bool) -> Bool {
        var start = 0
        for end in 0...bytes.count where end == bytes.count || bytes[end] == comma {
            var low = start, high = end
            while low < high, isWhitespace(bytes[low]) { low += 1 }
            while high > low, isWhitespace(bytes[high - 1]) { high -= 1 }
            start = end + 1
            if body(UnsafeBufferPointer(rebasing: bytes[low..<high])) { return true }
        }
        return false
    }

    /// Whether the comma-separated `value` has the element `lowercase` in
    /// any ASCII case, read in place.
    static func listHas(_ value: String, _ lowercase: StaticString) -> Bool {
        FieldNameIndex.withUTF8(value) { bytes in
            forEachListElement(bytes) { equalsIgnoringASCIICase($0, lowercase) }
        }
    }

    /// Whether `bytes` are `lowercase` once their ASCII letters are lowercased.
    static func equalsIgnoringASCIICase(_ bytes: UnsafeBufferPointer<UInt8>, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        let expected = lowercase.utf8Start
        for offset in 0..<bytes.count where lowercaseASCII(bytes[offset]) != expected[offset] {
            return false
        }
        return true
    }

    static func lowercaseASCII(_ b: UInt8) -> UInt8 { (b >= 0x41 && b <= 0x5A) ? b | 0x20 : b }

    /// Parses `1*DIGIT` as a non-negative `Int`, nil on any other byte or on overflow.
    static func decimal<Bytes: Collection>(_ bytes: Bytes) -> Int? where Bytes.Element == UInt8 {
        guard !bytes.isEmpty else { return nil }
        var value = 0
        for b in bytes {
            guard isDigit(b) else { return nil }
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(Int(b - 0x30))
            guard !o1, !o2 else { return nil }
            value = sum
        }
        return value
    }

    /// Decodes wire bytes as ISO-8859-1, like `String(latin1:)`, with a fast
    /// path for ASCII (nearly every head), which UTF-8 decodes identically.
    static func text<Bytes: Collection>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        bytes.allSatisfy({ $0 < 0x80 }) ? String(decoding: bytes, as: UTF8.self) : String(latin1: bytes)
    }

    /// Appends the wire bytes of a string made by `String(latin1:)`: its UTF-8
    /// when it is ASCII (the common case, one scan and one copy), else `latin1Bytes`.
    static func appendLatin1(_ string: String, to out: inout [UInt8]) {
        let copied = string.utf8Span.span.withUnsafeBufferPointer { bytes in
            guard bytes.isASCII else { return false }
            out.append(contentsOf: bytes)
            return true
        }
        if !copied { out.append(contentsOf: string.latin1Bytes) }
    }

    /// True when `text` may be a field value or reason phrase: every scalar
    /// is an ISO-8859-1 byte allowed there (`isFieldValueByte`). Printable
    /// ASCII (nearly every value) is found eight bytes at a time.
    static func isFieldValue(_ text: String) -> Bool {
        text.utf8Span.span.withUnsafeBytes(isPrintableASCII) || isFieldValueScalars(text)
    }

    @inline(never)
    private static func isFieldValueScalars(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { $0.value <= 0xFF && isFieldValueByte(UInt8($0.value)) }
    }

    /// Appends the wire (ISO-8859-1) bytes of a field value when it is one
    /// (`isFieldValue`) and returns true; returns false, appending nothing,
    /// otherwise. Printable ASCII (nearly every value) takes one pass over
    /// the UTF-8, eight bytes at a time, and one copy.
    static func appendFieldValue(_ text: String, to out: inout [UInt8]) -> Bool {
        let copied = text.utf8Span.span.withUnsafeBytes { bytes in
            guard isPrintableASCII(bytes) else { return false }
            out.append(contentsOf: bytes)
            return true
        }
        if copied { return true }
        guard isFieldValueScalars(text) else { return false }
        out.append(contentsOf: text.latin1Bytes)
        return true
    }

    /// Appends a field name or method when it is a `token` and returns true;
    /// returns false (appending nothing) otherwise. One loop over the UTF-8.
    static func appendToken(_ text: String, to out: inout [UInt8]) -> Bool {
        text.utf8Span.span.withUnsafeBufferPointer { bytes in
            guard isToken(bytes) else { return false }
            out.append(contentsOf: bytes)
            return true
        }
    }
}
