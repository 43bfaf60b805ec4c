/// A small strict JSON parser (RFC 8259) that tracks line and column.
///
/// Why not JSONSerialization: on Linux it reports only a character offset,
/// and it loses key order, duplicate keys and the positions of values, which
/// the semantic errors (unknown field, bad value) must name.
public struct LocatedJSONParser {
    /// Deeper nesting than this is refused rather than recursed into.
    static let maxDepth = 64

    /// A syntax error and where.
    public struct SyntaxError: Error {
        public let message: String
        public let position: SourcePosition
    }

    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var column = 1

    private init(_ bytes: [UInt8]) { self.bytes = bytes }

    public static func parse(_ bytes: [UInt8]) throws(SyntaxError) -> LocatedJSON {
        var parser = LocatedJSONParser(bytes)
        if parser.bytes.starts(with: [0xEF, 0xBB, 0xBF]) { parser.index = 3 } // a UTF-8 byte order mark
        parser.skipSpace()
        let value = try parser.parseValue(depth: 0)
        parser.skipSpace()
        guard parser.index == parser.bytes.count else { throw parser.error("unexpected \(parser.found) after the end of the document") }
        return value
    }

    private var position: SourcePosition { SourcePosition(line: line, column: column) }

    private var found: String {
        guard index < bytes.count else { return "end of file" }
        let b = bytes[index]
        if b >= 0x20 && b < 0x7F { return "'\(Character(Unicode.Scalar(b)))'" }
        return "byte 0x\(String(b, radix: 16))"
    }

    private func error(_ message: String) -> SyntaxError { SyntaxError(message: message, position: position) }

    private mutating func advance() {
        if bytes[index] == 0x0A {
            line += 1
            column = 1
        } else if bytes[index] & 0xC0 != 0x80 {
            column += 1 // a continuation byte belongs to the character already counted
        }
        index += 1
    }

    private mutating func skipSpace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { advance() }
    }

    private mutating func expect(_ byte: UInt8, _ what: String) throws(SyntaxError) {
        guard index < bytes.count, bytes[index] == byte else { throw error("expected \(what), found \(found)") }
        advance()
    }

    private mutating func parseValue(depth: Int) throws(SyntaxError) -> LocatedJSON {
        let start = position
        guard index < bytes.count else { throw error("expected a value, found end of file") }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            guard depth < LocatedJSONParser.maxDepth else { throw error("nesting deeper than \(LocatedJSONParser.maxDepth)") }
            return LocatedJSON(value: .object(try parseObject(depth: depth)), position: start)
        case UInt8(ascii: "["):
            guard depth < LocatedJSONParser.maxDepth else { throw error("nesting deeper than \(LocatedJSONParser.maxDepth)") }
            return LocatedJSON(value: .array(try parseArray(depth: depth)), position: start)
        case UInt8(ascii: "\""):
            return LocatedJSON(value: .string(try parseString()), position: start)
        case UInt8(ascii: "t"):
            try literal("true")
            return LocatedJSON(value: .bool(true), position: start)
        case UInt8(ascii: "f"):
            try literal("false")
            return LocatedJSON(value: .bool(false), position: start)
        case UInt8(ascii: "n"):
            try literal("null")
            return LocatedJSON(value: .null, position: start)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return LocatedJSON(value: .number(try parseNumber()), position: start)
        default:
            throw error("expected a value, found \(found)")
        }
    }

    private mutating func literal(_ word: String) throws(SyntaxError) {
        for b in word.utf8 {
            guard index < bytes.count, bytes[index] == b else { throw error("expected \(word), found \(found)") }
            advance()
        }
    }

    private mutating func parseObject(depth: Int) throws(SyntaxError) -> [LocatedJSON.Member] {
        advance() // {
        skipSpace()
        var members: [LocatedJSON.Member] = []
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") { advance(); return members }
        while true {
            skipSpace()
            let keyPosition = position
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a field name in double quotes, found \(found)") }
            let key = try parseString()
            if members.contains(where: { $0.key == key }) {
                throw SyntaxError(message: "field \"\(key)\" appears twice in one object", position: keyPosition)
            }
            skipSpace()
            try expect(UInt8(ascii: ":"), "':' after the field name")
            skipSpace()
            members.append(LocatedJSON.Member(key: key, keyPosition: keyPosition, value: try parseValue(depth: depth + 1)))
            skipSpace()
            guard index < bytes.count else { throw error("expected ',' or '}', found end of file") }
            if bytes[index] == UInt8(ascii: ",") { advance(); continue }
            try expect(UInt8(ascii: "}"), "',' or '}'")
            return members
        }
    }

    private mutating func parseArray(depth: Int) throws(SyntaxError) -> [LocatedJSON] {
        advance() // [
        skipSpace()
        var elements: [LocatedJSON] = []
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") { advance(); return elements }
        while true {
            skipSpace()
            elements.append(try parseValue(depth: depth + 1))
            skipSpace()
            guard index < bytes.count else { throw error("expected ',' or ']', found end of file") }
            if bytes[index] == UInt8(ascii: ",") { advance(); continue }
            try expect(UInt8(ascii: "]"), "',' or ']'")
            return elements
        }
    }

    private mutating func parseString() throws(SyntaxError) -> String {
        let start = position
        advance() // "
        var utf8: [UInt8] = []
        while true {
            guard index < bytes.count else { throw SyntaxError(message: "string not closed", position: start) }
            let b = bytes[index]
            switch b {
            case UInt8(ascii: "\""):
                advance()
                guard let s = String(validating: utf8, as: UTF8.self) else { throw SyntaxError(message: "string is not valid UTF-8", position: start) }
                return s
            case UInt8(ascii: "\\"):
                advance()
                guard index < bytes.count else { throw error("escape sequence cut short by end of file") }
                let e = bytes[index]
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(e); advance()
                case UInt8(ascii: "b"): utf8.append(0x08); advance()
                case UInt8(ascii: "f"): utf8.append(0x0C); advance()
                case UInt8(ascii: "n"): utf8.append(0x0A); advance()
                case UInt8(ascii: "r"): utf8.append(0x0D); advance()
                case UInt8(ascii: "t"): utf8.append(0x09); advance()
                case UInt8(ascii: "u"):
                    advance()
                    utf8 += try parseUnicodeEscape()
                default:
                    throw error("unknown escape sequence \\\(e >= 0x20 && e < 0x7F ? String(Unicode.Scalar(e)) : "x" + String(e, radix: 16))")
                }
            case 0..<0x20:
                throw error("control character in a string (write it as an escape sequence)")
            default:
                utf8.append(b)
                advance()
            }
        }
    }

    /// The four hex digits after `\u` (and a low surrogate's after a high one), as UTF-8.
    private mutating func parseUnicodeEscape() throws(SyntaxError) -> [UInt8] {
        let at = position
        let first = try hex4()
        var scalarValue = first
        if (0xD800...0xDBFF).contains(first) {
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                throw SyntaxError(message: "high surrogate \\u\(String(first, radix: 16)) without its low surrogate", position: at)
            }
            advance(); advance()
            let second = try hex4()
            guard (0xDC00...0xDFFF).contains(second) else {
                throw SyntaxError(message: "high surrogate \\u\(String(first, radix: 16)) followed by \\u\(String(second, radix: 16))", position: at)
            }
            scalarValue = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(first) {
            throw SyntaxError(message: "lone low surrogate \\u\(String(first, radix: 16))", position: at)
        }
        guard let scalar = Unicode.Scalar(scalarValue) else { throw SyntaxError(message: "invalid \\u escape", position: at) }
        return Array(String(Character(scalar)).utf8)
    }

    private mutating func hex4() throws(SyntaxError) -> UInt32 {
        var v: UInt32 = 0
        for _ in 0..<4 {
            guard index < bytes.count, let d = hexValue(bytes[index]) else { throw error("expected 4 hex digits after \\u, found \(found)") }
            v = v << 4 | d
            advance()
        }
        return v
    }

    private func hexValue(_ b: UInt8) -> UInt32? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(b - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(b - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(b - UInt8(ascii: "A") + 10)
        default: return nil
        }
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    private mutating func parseNumber() throws(SyntaxError) -> Double {
        let start = index
        func digits() -> Int {
            var n = 0
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") { advance(); n += 1 }
            return n
        }
        if bytes[index] == UInt8(ascii: "-") { advance() }
        guard index < bytes.count else { throw error("expected a digit, found end of file") }
        if bytes[index] == UInt8(ascii: "0") {
            advance()
            if index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                throw error("numbers cannot have leading zeros")
            }
        } else if digits() == 0 {
            throw error("expected a digit, found \(found)")
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            advance()
            guard digits() > 0 else { throw error("expected a digit after '.', found \(found)") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            advance()
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { advance() }
            guard digits() > 0 else { throw error("expected a digit in the exponent, found \(found)") }
        }
        guard let value = Double(String(decoding: bytes[start..<index], as: UTF8.self)), value.isFinite else {
            throw error("number out of range")
        }
        return value
    }
}
