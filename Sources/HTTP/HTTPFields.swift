/// One header or trailer field as it appeared: name case and value kept.
///
/// Names and values are held as `String`s decoded from wire bytes as
/// ISO-8859-1, so every byte maps to one Unicode scalar U+0000…U+00FF and
/// `latin1Bytes` gives back the exact wire bytes (obs-text included). Code that
/// builds fields from Swift strings should keep to ASCII.
public struct HTTPField: Hashable, Sendable, CustomStringConvertible {
    /// The name with its original case.
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// The name lowercased (ASCII only), the form used for comparison and HTTP/2.
    public var lowercasedName: String { HTTPField.lowercaseASCII(name) }

    public var description: String { "\(name): \(value)" }

    /// True when the UTF-8 bytes of `a` and `b` are equal once ASCII letters
    /// are lowercased (on both sides, or only on `a`'s when `b` is known to
    /// be lowercase). Lengths first (O(1) for native strings), then one loop
    /// over both strings' UTF-8 borrowed as spans: no iterator, no `String`,
    /// and no retain of either string's storage
    /// (Docs/performance.md#http2-header-lists).
    @inline(__always)
    static func utf8EqualIgnoringASCIICase(_ a: String, _ b: String, secondIsLowercase: Bool) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        let x = a.utf8Span.span, y = b.utf8Span.span
        for offset in 0..<x.count {
            let first = x[offset], second = y[offset]
            let lowerFirst = first &- 0x41 < 26 ? first | 0x20 : first
            let lowerSecond = secondIsLowercase || second &- 0x41 >= 26 ? second : second | 0x20
            if lowerFirst != lowerSecond { return false }
        }
        return true
    }

    /// Lowercases ASCII letters only; other bytes are untouched. A string
    /// with no capital (nearly every name on its way to HTTP/2) is returned
    /// as it is, found by one loop over its contiguous UTF-8.
    public static func lowercaseASCII(_ s: String) -> String {
        let lowered: String?? = s.utf8.withContiguousStorageIfAvailable { utf8 in
            guard utf8.contains(where: { $0 &- 0x41 < 26 }) else { return nil }
            return String(unsafeUninitializedCapacity: utf8.count) { out in
                for offset in 0..<utf8.count {
                    let byte = utf8[offset]
                    out[offset] = byte &- 0x41 < 26 ? byte | 0x20 : byte
                }
                return utf8.count
            }
        }
        switch lowered {
        case .some(.some(let lowered)): return lowered
        case .some(.none): return s
        case .none: return String(decoding: s.utf8.map { $0 &- 0x41 < 26 ? $0 | 0x20 : $0 }, as: UTF8.self)
        }
    }
}

extension String {
    /// Decodes bytes as ISO-8859-1 (lossless for any byte sequence). ASCII
    /// (nearly every field) decodes as UTF-8 does, in one pass with no
    /// per-scalar appends.
    public init<Bytes: Sequence>(latin1 bytes: Bytes) where Bytes.Element == UInt8 {
        let ascii = bytes.withContiguousStorageIfAvailable { buffer -> String? in
            // Checked ASCII is valid UTF-8: copied as such, not validated a second time.
            buffer.isASCII ? unsafe String(copying: UTF8Span(unchecked: buffer.span, isKnownASCII: true)) : nil
        }
        if let ascii = ascii ?? nil {
            self = ascii
            return
        }
        var scalars = String.UnicodeScalarView()
        for b in bytes { scalars.append(Unicode.Scalar(b)) }
        self = String(scalars)
    }

    /// The ISO-8859-1 bytes of a string made by `init(latin1:)`; scalars above
    /// U+00FF (never produced by a parser) are replaced by `?`.
    public var latin1Bytes: [UInt8] {
        if utf8.allSatisfy({ $0 < 0x80 }) { return Array(utf8) }
        var out: [UInt8] = []
        out.reserveCapacity(unicodeScalars.count)
        for s in unicodeScalars { out.append(s.value <= 0xFF ? UInt8(s.value) : UInt8(ascii: "?")) }
        return out
    }
}

extension UnsafeBufferPointer<UInt8> {
    /// True when every byte is below 0x80; eight at a time.
    var isASCII: Bool {
        let raw = UnsafeRawBufferPointer(self)
        var offset = 0
        while offset + 8 <= raw.count {
            if raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return false }
            offset += 8
        }
        while offset < raw.count {
            if raw[offset] >= 0x80 { return false }
            offset += 1
        }
        return true
    }
}

/// An ordered list of fields that keeps each field's original name case and
/// position. Lookups compare names case-insensitively (ASCII).
///
/// Invariant: the order of `fields` is the order on the wire (HTTP/1.1) or in
/// the decoded header list (HTTP/2); nothing here reorders it.
public struct HTTPFields: Hashable, Sendable, RandomAccessCollection, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    public private(set) var fields: [HTTPField]

    public init(_ fields: [HTTPField] = []) { self.fields = fields }

    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { HTTPField(name: $0.0, value: $0.1) }
    }

    public var startIndex: Int { fields.startIndex }
    public var endIndex: Int { fields.endIndex }
    public subscript(position: Int) -> HTTPField { fields[position] }

    /// The first value of a field, or nil.
    public subscript(name: HTTPField.Name) -> String? {
        for field in fields where field.hasName(name) { return field.value }
        return nil
    }

    /// Every value of a field, in order.
    public func values(_ name: HTTPField.Name) -> [String] {
        var values: [String] = []
        for field in fields where field.hasName(name) { values.append(field.value) }
        return values
    }

    public func contains(_ name: HTTPField.Name) -> Bool { fields.contains { $0.hasName(name) } }

    // The same lookups for a name held as text (a configured or recorded
    // name); a name the code knows is a constant (`HTTPField.Name`).

    /// The first value of the field `name` (any ASCII case), or nil.
    public subscript(name: String) -> String? { self[HTTPField.Name(name)] }

    /// Every value of the field `name` (any ASCII case), in order.
    public func values(_ name: String) -> [String] { values(HTTPField.Name(name)) }

    public func contains(_ name: String) -> Bool { contains(HTTPField.Name(name)) }

    @discardableResult
    public mutating func remove(_ name: String) -> Int { remove(HTTPField.Name(name)) }

    public mutating func set(_ name: String, _ value: String) { set(HTTPField.Name(name), value) }

    public mutating func append(_ name: String, _ value: String) {
        fields.append(HTTPField(name: name, value: value))
    }

    public mutating func append(_ field: HTTPField) { fields.append(field) }

    /// Room for `capacity` fields without growing (a decoder that knows how many come).
    public mutating func reserveCapacity(_ capacity: Int) { fields.reserveCapacity(capacity) }

    /// Removes every field with this name; returns how many were removed.
    @discardableResult
    public mutating func remove(_ name: HTTPField.Name) -> Int {
        let before = fields.count
        fields.removeAll { $0.hasName(name) }
        return before - fields.count
    }

    /// Replaces the first field of this name in place (keeping its position)
    /// and removes the others; appends when absent, spelled as `name` is.
    public mutating func set(_ name: HTTPField.Name, _ value: String) {
        if let first = fields.firstIndex(where: { $0.hasName(name) }) {
            fields[first].value = value
            var i = fields.index(after: first)
            while i < fields.endIndex {
                if fields[i].hasName(name) { fields.remove(at: i) } else { i += 1 }
            }
        } else {
            append(name.rawName, value)
        }
    }

    /// Removes the fields for which `predicate` is true.
    public mutating func removeAll(where predicate: (HTTPField) -> Bool) {
        fields.removeAll(where: predicate)
    }

    /// Applies `transform` to each field in place.
    public mutating func mapInPlace(_ transform: (inout HTTPField) -> Void) {
        for i in fields.indices { transform(&fields[i]) }
    }

    public var description: String { fields.map(\.description).joined(separator: "\r\n") }
}
