import Foundation
import HTTP
import Hashing

/// Reads the values of one JSON text straight from its bytes, for
/// `ExchangeRecordLineDecoder`: strings, integers, doubles, booleans, hex
/// digests, objects and arrays, with no allocation but the `String`s it
/// returns.
///
/// It accepts what `JSONWriter` writes (and insignificant whitespace), and
/// answers nil for anything else, leaving the whole line to the general
/// parser (`JSONDecoder`): a value it reads is always the value `JSONDecoder`
/// would read there, never a guess. Invariant: `start <= position <= end`;
/// the buffer outlives the cursor (it is lent for one line).
struct JSONLineCursor {
    private var position: UnsafePointer<UInt8>
    private let end: UnsafePointer<UInt8>

    init(_ bytes: UnsafeRawBufferPointer) {
        let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(bitPattern: 1)!
        position = base
        end = base + bytes.count
    }

    /// True when only whitespace is left.
    mutating func atEnd() -> Bool {
        skipSpace()
        return position == end
    }

    @inline(__always)
    private mutating func skipSpace() {
        while position < end {
            switch position.pointee {
            case 0x20, 0x09, 0x0a, 0x0d: position += 1
            default: return
            }
        }
    }

    /// Takes `byte` (after whitespace); false, taking nothing, when the next byte is another.
    @inline(__always)
    mutating func take(_ byte: UInt8) -> Bool {
        skipSpace()
        guard position < end, position.pointee == byte else { return false }
        position += 1
        return true
    }

    /// Takes the literal bytes `text` (no whitespace skipped inside).
    @inline(__always)
    mutating func take(literal text: StaticString) -> Bool {
        skipSpace()
        let count = text.utf8CodeUnitCount
        guard end - position >= count, memcmp(position, text.utf8Start, count) == 0 else { return false }
        position += count
        return true
    }

    // MARK: Containers

    /// Opens an object: `{`. Then, per member, `nextKey(first:)` until it answers `.end`.
    mutating func openObject() -> Bool { take(UInt8(ascii: "{")) }

    /// What comes next inside an object or array: a member (or element), its end, or something malformed.
    enum Next { case member, end, malformed }

    /// Inside an object: the next key, its `:` taken, as bytes lent from the line;
    /// `.end` after the `}`. `first` is true before the first member.
    mutating func nextKey(first: Bool, key: inout UnsafeRawBufferPointer) -> Next {
        if take(UInt8(ascii: "}")) { return .end }
        if !first && !take(UInt8(ascii: ",")) { return .malformed }
        guard take(UInt8(ascii: "\"")) else { return .malformed }
        let start = position
        // Keys of the format are names: no escapes, no control characters.
        while position < end, position.pointee != UInt8(ascii: "\"") {
            if position.pointee == UInt8(ascii: "\\") { return .malformed }
            position += 1
        }
        guard position < end else { return .malformed }
        key = UnsafeRawBufferPointer(start: start, count: position - start)
        position += 1
        return take(UInt8(ascii: ":")) ? .member : .malformed
    }

    /// Opens an array: `[`. Then `nextElement(first:)` until it answers `.end`.
    mutating func openArray() -> Bool { take(UInt8(ascii: "[")) }

    /// Inside an array: `.member` when an element follows (its comma taken), `.end` after the `]`.
    mutating func nextElement(first: Bool) -> Next {
        if take(UInt8(ascii: "]")) { return .end }
        if !first && !take(UInt8(ascii: ",")) { return .malformed }
        return .member
    }

    // MARK: Scalars

    /// A string value; nil for anything else (a `null` included) or invalid UTF-8.
    mutating func string() -> String? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = position
        var plain = true
        while position < end {
            let byte = position.pointee
            if byte == UInt8(ascii: "\"") { break }
            if byte == UInt8(ascii: "\\") {
                plain = false
                position += 2
                continue
            }
            if byte < 0x20 { return nil }
            if byte >= 0x80 { plain = false }
            position += 1
        }
        guard position < end else { return nil }
        let raw = UnsafeBufferPointer(start: start, count: position - start)
        position += 1
        if plain { return String(decoding: raw, as: UTF8.self) }
        return JSONLineCursor.unescaped(raw)
    }

    /// The text of a string's contents with its escapes resolved; nil when an
    /// escape is malformed or the result is not valid UTF-8.
    private static func unescaped(_ raw: UnsafeBufferPointer<UInt8>) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(raw.count)
        var index = 0
        func hex4(_ at: Int) -> UInt32? {
            guard at + 4 <= raw.count else { return nil }
            var value: UInt32 = 0
            for byte in raw[at..<at + 4] {
                guard let digit = hexValue(byte) else { return nil }
                value = value << 4 | UInt32(digit)
            }
            return value
        }
        while index < raw.count {
            let byte = raw[index]
            guard byte == UInt8(ascii: "\\") else {
                bytes.append(byte)
                index += 1
                continue
            }
            guard index + 1 < raw.count else { return nil }
            switch raw[index + 1] {
            case UInt8(ascii: "\""): bytes.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\"))
            case UInt8(ascii: "/"): bytes.append(UInt8(ascii: "/"))
            case UInt8(ascii: "b"): bytes.append(0x08)
            case UInt8(ascii: "f"): bytes.append(0x0c)
            case UInt8(ascii: "n"): bytes.append(0x0a)
            case UInt8(ascii: "r"): bytes.append(0x0d)
            case UInt8(ascii: "t"): bytes.append(0x09)
            case UInt8(ascii: "u"):
                guard var scalar = hex4(index + 2) else { return nil }
                index += 6
                if (0xD800..<0xDC00).contains(scalar) {
                    // A high surrogate must be followed by an escaped low one.
                    guard index + 1 < raw.count, raw[index] == UInt8(ascii: "\\"), raw[index + 1] == UInt8(ascii: "u"),
                          let low = hex4(index + 2), (0xDC00..<0xE000).contains(low) else { return nil }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    index += 6
                }
                guard let unicode = Unicode.Scalar(scalar) else { return nil }
                bytes.append(contentsOf: Array(String(Character(unicode)).utf8))
                continue
            default:
                return nil
            }
            index += 2
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// An integer written as plain decimal digits (optionally `-`); nil for
    /// anything else (a fraction, an exponent, an overflow).
    mutating func int() -> Int? {
        skipSpace()
        var negative = false
        if position < end, position.pointee == UInt8(ascii: "-") {
            negative = true
            position += 1
        }
        let start = position
        var value = 0
        while position < end, position.pointee &- UInt8(ascii: "0") < 10 {
            let (times, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times.addingReportingOverflow(Int(position.pointee &- UInt8(ascii: "0")))
            if o1 || o2 { return nil }
            value = sum
            position += 1
        }
        guard position > start, position - start == 1 || start.pointee != UInt8(ascii: "0") else { return nil }
        if position < end, [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(position.pointee) {
            return nil
        }
        return negative ? -value : value
    }

    /// A number as a double. Digits with at most three decimals that make an
    /// integer below 2^53 (what the writer writes for timestamps: 16 digits
    /// with the decimals) are read as that integer divided by a power of ten: one
    /// correctly rounded operation on exact values, so the double a
    /// correctly rounded parse gives. Any other number goes through
    /// `strtod`. Nil for anything that is not a JSON number (RFC 8259 §6).
    mutating func double() -> Double? {
        skipSpace()
        let start = position
        var negative = false
        if position < end, position.pointee == UInt8(ascii: "-") {
            negative = true
            position += 1
        }
        let intStart = position
        var mantissa: UInt64 = 0
        var significant = 0
        while position < end, position.pointee &- UInt8(ascii: "0") < 10 {
            mantissa = mantissa &* 10 &+ UInt64(position.pointee &- UInt8(ascii: "0"))
            significant += 1
            position += 1
        }
        let intDigits = position - intStart
        guard intDigits > 0, intDigits == 1 || intStart.pointee != UInt8(ascii: "0") else { return nil }
        var decimals = 0
        if position < end, position.pointee == UInt8(ascii: ".") {
            position += 1
            while position < end, position.pointee &- UInt8(ascii: "0") < 10 {
                mantissa = mantissa &* 10 &+ UInt64(position.pointee &- UInt8(ascii: "0"))
                significant += 1
                decimals += 1
                position += 1
            }
            guard decimals > 0 else { return nil }
        }
        var exponent = false
        if position < end, position.pointee == UInt8(ascii: "e") || position.pointee == UInt8(ascii: "E") {
            exponent = true
            position += 1
            if position < end, position.pointee == UInt8(ascii: "+") || position.pointee == UInt8(ascii: "-") { position += 1 }
            let expStart = position
            while position < end, position.pointee &- UInt8(ascii: "0") < 10 { position += 1 }
            guard position > expStart else { return nil }
        }
        if !exponent && decimals <= 3 && significant <= 19 && mantissa < 1 << 53 {
            let scale: Double = decimals == 0 ? 1 : decimals == 1 ? 10 : decimals == 2 ? 100 : 1000
            let value = Double(mantissa) / scale
            return negative ? -value : value
        }
        let count = position - start
        guard count < 64 else { return nil }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: count + 1) { buffer -> Double? in
            let base = buffer.baseAddress!
            UnsafeMutableRawPointer(base).copyMemory(from: start, byteCount: count)
            base[count] = 0
            let value = strtod(base, nil)
            return value.isFinite ? value : nil
        }
    }

    /// `true` or `false`.
    mutating func bool() -> Bool? {
        if take(literal: "true") { return true }
        if take(literal: "false") { return false }
        return nil
    }

    /// A SHA-256 digest written as 64 hexadecimal digits in a string.
    mutating func digest() -> SHA256Digest? {
        guard take(UInt8(ascii: "\"")), end - position >= 65, position[64] == UInt8(ascii: "\"") else { return nil }
        var bytes = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        let ok = withUnsafeMutableBytes(of: &bytes) { out -> Bool in
            for index in 0..<32 {
                guard let high = JSONLineCursor.hexValue(position[2 * index]),
                      let low = JSONLineCursor.hexValue(position[2 * index + 1]) else { return false }
                out[index] = high << 4 | low
            }
            return true
        }
        guard ok else { return nil }
        position += 65
        return JSONLineCursor.digest(words: bytes)
    }

    /// A digest holding these 32 bytes. `SHA256Digest` stores exactly its 32
    /// bytes inline (checked here: otherwise through its byte-array initialiser).
    private static func digest(words: (UInt64, UInt64, UInt64, UInt64)) -> SHA256Digest? {
        guard MemoryLayout<SHA256Digest>.size == 32, MemoryLayout<SHA256Digest>.alignment == 8 else {
            return withUnsafeBytes(of: words) { SHA256Digest(bytes: Array($0)) }
        }
        var digest = SHA256Digest.ofNothing
        withUnsafeMutableBytes(of: &digest) { out in
            withUnsafeBytes(of: words) { out.copyMemory(from: $0) }
        }
        return digest
    }
}

extension UnsafeRawBufferPointer {
    /// True when these bytes are `text`'s.
    @inline(__always)
    func equals(_ text: StaticString) -> Bool {
        count == text.utf8CodeUnitCount && (count == 0 || memcmp(baseAddress!, text.utf8Start, count) == 0)
    }
}
