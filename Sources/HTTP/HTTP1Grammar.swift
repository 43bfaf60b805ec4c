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

    /// `tchar` (RFC 9110 §5.6.2), indexed by byte.
    private static let tokenTable: [Bool] = {
        var table = [Bool](repeating: false, count: 256)
        for b in UInt8(ascii: "0")...UInt8(ascii: "9") { table[Int(b)] = true }
        for b in UInt8(ascii: "a")...UInt8(ascii: "z") { table[Int(b)] = true }
        for b in UInt8(ascii: "A")...UInt8(ascii: "Z") { table[Int(b)] = true }
        for b in "!#$%&'*+-.^_`|~".utf8 { table[Int(b)] = true }
        return table
    }()

    static func isTokenByte(_ b: UInt8) -> Bool { tokenTable[Int(b)] }

    /// `token = 1*tchar`.
    static func isToken<Bytes: Collection>(_ bytes: Bytes) -> Bool where Bytes.Element == UInt8 {
        !bytes.isEmpty && bytes.allSatisfy(isTokenByte)
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

    /// The same elements as `listElements`, as views into the value's UTF-8:
    /// nothing is copied or allocated (`Content-Length` is read this way on
    /// every message).
    static func listElementViews(_ value: String) -> ListElementViews { ListElementViews(utf8: value.utf8) }

    /// The elements of a comma-separated list, whitespace trimmed, empty ones
    /// kept (`listElementViews`).
    struct ListElementViews: Sequence, IteratorProtocol {
        let utf8: String.UTF8View
        private var start: String.UTF8View.Index?

        init(utf8: String.UTF8View) {
            self.utf8 = utf8
            start = utf8.startIndex
        }

        mutating func next() -> Substring.UTF8View? {
            guard let from = start else { return nil }
            let comma = utf8[from...].firstIndex(of: HTTP1Grammar.comma)
            start = comma.map { utf8.index(after: $0) }
            var lower = from
            var upper = comma ?? utf8.endIndex
            while lower < upper, HTTP1Grammar.isWhitespace(utf8[lower]) { lower = utf8.index(after: lower) }
            while upper > lower, HTTP1Grammar.isWhitespace(utf8[utf8.index(before: upper)]) { upper = utf8.index(before: upper) }
            return utf8[lower..<upper]
        }
    }

    /// Lowercase ASCII tokens of a list field (`Connection`, `Upgrade`), empty
    /// elements dropped.
    static func lowercasedTokens(_ values: [String]) -> [String] {
        values.flatMap(listElements).filter { !$0.isEmpty }.map { text($0.map(lowercaseASCII)) }
    }

    static func lowercaseASCII(_ b: UInt8) -> UInt8 { (b >= 0x41 && b <= 0x5A) ? b | 0x20 : b }

    /// Case-insensitive (ASCII) comparison of a field name with a name that is
    /// already lowercase, without allocating.
    static func nameEquals(_ name: String, lowercased other: String) -> Bool {
        var a = name.utf8.makeIterator()
        var b = other.utf8.makeIterator()
        while true {
            switch (a.next(), b.next()) {
            case (nil, nil): return true
            case let (x?, y?) where lowercaseASCII(x) == y: continue
            default: return false
            }
        }
    }

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
    /// when it is ASCII (the common case, no copy), else `latin1Bytes`.
    static func appendLatin1(_ string: String, to out: inout [UInt8]) {
        if string.utf8.allSatisfy({ $0 < 0x80 }) {
            out.append(contentsOf: string.utf8)
        } else {
            out.append(contentsOf: string.latin1Bytes)
        }
    }
}
