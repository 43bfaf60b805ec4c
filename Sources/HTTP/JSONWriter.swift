/// Writes compact JSON (RFC 8259) straight into a byte buffer: the encoder of
/// recording lines, which sit on the hot path of every recorded exchange and
/// so do not go through `JSONEncoder` (about 30 times slower, and it
/// allocates a tree per value).
///
/// The output is what `JSONDecoder` reads back to the same values:
/// - strings: `"` and `\` escaped, control characters below U+0020 as `\n`,
///   `\r`, `\t`, `\b`, `\f` or `\u00XX`; everything else, `/` and non-ASCII
///   included, as its UTF-8 bytes;
/// - integers in decimal; finite doubles in Swift's shortest round-trip form
///   (`1700000000000.5`, `1e-05`), non-finite ones as the strings
///   `"Infinity"`, `"-Infinity"`, `"NaN"` (what the recording decoder is told
///   to accept);
/// - absent optionals are left out (as `encodeIfPresent` does).
///
/// The caller writes keys and values in pairs inside `object`/`array`; the
/// writer inserts the commas. Invariant: `needsComma` is true exactly when
/// the innermost open container already holds a member.
public struct JSONWriter {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8]
    private var needsComma = false

    public init(capacity: Int = 1024) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Appends a raw byte (the caller keeps the JSON valid), e.g. a line's `\n`.
    public mutating func appendRaw(_ byte: UInt8) {
        bytes.append(byte)
    }

    // MARK: Containers

    /// Writes `{`, the members `body` writes, then `}`.
    public mutating func object(_ body: (inout JSONWriter) -> Void) {
        container(open: UInt8(ascii: "{"), close: UInt8(ascii: "}"), body)
    }

    /// Writes `[`, the elements `body` writes, then `]`.
    public mutating func array(_ body: (inout JSONWriter) -> Void) {
        container(open: UInt8(ascii: "["), close: UInt8(ascii: "]"), body)
    }

    private mutating func container(open: UInt8, close: UInt8, _ body: (inout JSONWriter) -> Void) {
        separate()
        bytes.append(open)
        needsComma = false
        body(&self)
        bytes.append(close)
        needsComma = true
    }

    /// An array of strings.
    public mutating func array(_ strings: [String]) {
        array { writer in
            for string in strings { writer.string(string) }
        }
    }

    /// Writes a member's key; the next value written is its value.
    public mutating func key(_ key: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// Writes a member's key that is not a literal (a dictionary key), escaped.
    public mutating func key(_ key: String) {
        string(key)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    // MARK: Values

    public mutating func string(_ value: String) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { appendEscaped($0) }
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    /// Bytes as a string of lowercase hexadecimal digits (a digest), written
    /// straight from the bytes with no intermediate `String`.
    public mutating func hex(_ value: [UInt8]) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        for byte in value {
            bytes.append(JSONWriter.hexDigits[Int(byte >> 4)])
            bytes.append(JSONWriter.hexDigits[Int(byte & 0x0f)])
        }
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    public mutating func int(_ value: Int) {
        separate()
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        let first = bytes.count
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        bytes[first...].reverse()
        needsComma = true
    }

    public mutating func double(_ value: Double) {
        guard value.isFinite else {
            string(value.isNaN ? "NaN" : value < 0 ? "-Infinity" : "Infinity")
            return
        }
        separate()
        bytes.append(contentsOf: value.description.utf8)
        needsComma = true
    }

    public mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: value ? JSONWriter.trueBytes : JSONWriter.falseBytes)
        needsComma = true
    }

    // MARK: Members (key and value)

    public mutating func member(_ name: StaticString, _ value: String) {
        key(name)
        string(value)
    }

    public mutating func member(_ name: StaticString, _ value: Int) {
        key(name)
        int(value)
    }

    public mutating func member(_ name: StaticString, _ value: Bool) {
        key(name)
        bool(value)
    }

    /// Leaves the member out when `value` is nil.
    public mutating func member(_ name: StaticString, ifPresent value: String?) {
        if let value { member(name, value) }
    }

    /// Leaves the member out when `value` is nil.
    public mutating func member(_ name: StaticString, ifPresent value: Int?) {
        if let value { member(name, value) }
    }

    // MARK: Private

    private static let trueBytes = Array("true".utf8)
    private static let falseBytes = Array("false".utf8)
    private static let hexDigits = Array("0123456789abcdef".utf8)

    private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }

    /// Appends UTF-8 text escaped for a JSON string: runs that need no escape
    /// are copied in one append.
    private mutating func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        var runStart = 0
        for index in 0..<utf8.count {
            let byte = utf8[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            if runStart < index { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index])) }
            runStart = index + 1
            bytes.append(UInt8(ascii: "\\"))
            switch byte {
            case UInt8(ascii: "\""): bytes.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\"))
            case 0x0A: bytes.append(UInt8(ascii: "n"))
            case 0x0D: bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(UInt8(ascii: "t"))
            case 0x08: bytes.append(UInt8(ascii: "b"))
            case 0x0C: bytes.append(UInt8(ascii: "f"))
            default:
                bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                          JSONWriter.hexDigits[Int(byte >> 4)], JSONWriter.hexDigits[Int(byte & 0x0f)]])
            }
        }
        if runStart < utf8.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...])) }
    }
}

/// A value that writes itself as one JSON value (an object, an array, …).
public protocol JSONWritable {
    func write(to json: inout JSONWriter)
}

extension JSONWriter {
    /// Writes `value` under `name`; leaves the member out when `value` is nil.
    public mutating func member(_ name: StaticString, ifPresent value: (some JSONWritable)?) {
        guard let value else { return }
        key(name)
        value.write(to: &self)
    }

    /// Writes `values` as an array under `name`; leaves the member out when nil.
    public mutating func member(_ name: StaticString, ifPresent values: [some JSONWritable]?) {
        guard let values else { return }
        key(name)
        array { json in
            for value in values { value.write(to: &json) }
        }
    }
}
