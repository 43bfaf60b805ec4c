import Hashing

/// The byte string a message digest is taken over: a sequence of
/// length-prefixed items, built in one buffer so that each digest is one
/// update over a contiguous range, with the recording's `DigestFunction`
/// (SHA-256, or HMAC-SHA-256 under the digest key).
///
/// Encoding (the one every canonical form in `HeadDigest` and `BodyDigest`
/// uses):
/// - `count(n)` is `n` as a 4-byte big-endian unsigned integer;
/// - `item(s)` is `count(byte length of s)` followed by the bytes of `s`;
/// - the bytes of a string are its ISO-8859-1 bytes, which for the model's
///   strings (decoded from the wire as ISO-8859-1) are exactly the wire bytes.
///   A scalar above U+00FF (only possible in strings built by code) is written
///   as `?`, as `String.latin1Bytes` does.
///
/// Because every item carries its length, no two different item sequences
/// produce the same bytes, whatever the items contain.
struct DigestInput {
    private(set) var bytes: [UInt8] = []
    /// What every digest of this input is taken with.
    let function: DigestFunction

    init(capacity: Int, using function: DigestFunction) {
        self.function = function
        bytes.reserveCapacity(capacity)
    }

    /// The number of bytes written so far; a range boundary for `digest(of:)`.
    var position: Int { bytes.count }

    /// Appends `count(n)`.
    mutating func appendCount(_ n: Int) {
        let v = UInt32(truncatingIfNeeded: n)
        bytes.append(UInt8(truncatingIfNeeded: v >> 24))
        bytes.append(UInt8(truncatingIfNeeded: v >> 16))
        bytes.append(UInt8(truncatingIfNeeded: v >> 8))
        bytes.append(UInt8(truncatingIfNeeded: v))
    }

    /// Appends `item(text)`. ASCII text (the usual case) is copied from its
    /// UTF-8 storage in one go; other text scalar by scalar.
    mutating func appendItem(_ text: String) {
        var text = text
        let copied: Bool = text.withUTF8 { utf8 in
            guard !utf8.contains(where: { $0 >= 0x80 }) else { return false }
            appendCount(utf8.count)
            bytes.append(contentsOf: utf8)
            return true
        }
        guard !copied else { return }
        let lengthAt = bytes.count
        appendCount(0)
        for scalar in text.unicodeScalars {
            bytes.append(scalar.value <= 0xFF ? UInt8(truncatingIfNeeded: scalar.value) : UInt8(ascii: "?"))
        }
        let length = UInt32(truncatingIfNeeded: bytes.count - lengthAt - 4)
        bytes[lengthAt] = UInt8(truncatingIfNeeded: length >> 24)
        bytes[lengthAt + 1] = UInt8(truncatingIfNeeded: length >> 16)
        bytes[lengthAt + 2] = UInt8(truncatingIfNeeded: length >> 8)
        bytes[lengthAt + 3] = UInt8(truncatingIfNeeded: length)
    }

    /// Appends one field group: `item(name) count(V) item(value_1) … item(value_V)`,
    /// `cookie` crumbs joined into one value (`FieldGroup.joinsCookies`).
    mutating func appendGroup(_ group: FieldGroup) {
        appendItem(group.name)
        if group.joinsCookies {
            appendCount(1)
            appendItem(group.values.joined(separator: "; "))
            return
        }
        appendCount(group.count)
        group.forEachValue { appendItem($0) }
    }

    /// The digest of a range of what was written, in one update.
    func digest(of range: Range<Int>) -> SHA256Digest {
        SHA256Digest.of(bytes[range], using: function)
    }

    /// The digest of everything written.
    func digest() -> SHA256Digest {
        SHA256Digest.of(bytes, using: function)
    }
}

/// All values of one field name in a field section, in their order, under the
/// lowercased name; the unit the semantic form and the per-field digests use.
///
/// A view: it holds the section and its run of the sorted name index
/// (`groups(of:)`), no array of its own, so grouping a head allocates only
/// the index.
struct FieldGroup {
    /// One field of the section: its lowercased name and its position.
    typealias Entry = (name: String, index: Int)

    /// The name lowercased (ASCII).
    let name: String
    /// The section the values are read from.
    fileprivate let fields: HTTPFields
    /// This name's run of the index, positions ascending.
    fileprivate let entries: ArraySlice<Entry>

    /// The number of values.
    var count: Int { entries.count }

    /// The values in the order they appeared, as an array (for the rare
    /// groups that need one: `connection`, joined `cookie` crumbs).
    var values: [String] { entries.map { fields[$0.index].value } }

    /// Calls `body` with each value in the order they appeared; builds nothing.
    func forEachValue(_ body: (String) -> Void) {
        for entry in entries { body(fields[entry.index].value) }
    }

    /// True when the canonical forms hash this group's values joined with
    /// "; " into one (RFC 9113 §8.2.3): `cookie` with more than one value.
    var joinsCookies: Bool { name == "cookie" && entries.count > 1 }

    /// Groups a field section by lowercased name, keeping the order of values
    /// within each name, with the groups sorted by name in ascending byte order.
    ///
    /// Sorts (name, position) pairs; the groups are the runs of equal names,
    /// cut as they are iterated. No hashing, each name lowercased once, one
    /// allocation (the index) whatever the section holds.
    static func groups(of fields: HTTPFields) -> FieldGroups {
        var entries: [Entry] = []
        entries.reserveCapacity(fields.count)
        for (index, field) in fields.enumerated() { entries.append((field.lowercasedName, index)) }
        // Byte order, not Swift's Unicode string order: UTF-8 preserves scalar
        // order, so this is ISO-8859-1 byte order for the model's strings.
        entries.sort { a, b in
            a.name == b.name ? a.index < b.index : a.name.utf8.lexicographicallyPrecedes(b.name.utf8)
        }
        return FieldGroups(fields: fields, entries: entries)
    }
}

/// The groups of a field section (`FieldGroup.groups(of:)`) in name order:
/// the runs of equal names in the sorted index, each a `FieldGroup` view.
struct FieldGroups: Sequence {
    let fields: HTTPFields
    /// (lowercased name, position), sorted by name then position.
    let entries: [FieldGroup.Entry]

    /// The number of groups (distinct names); counts the runs.
    var count: Int {
        var count = 0
        for index in entries.indices where index == 0 || entries[index].name != entries[index - 1].name { count += 1 }
        return count
    }

    func makeIterator() -> Iterator { Iterator(groups: self, start: 0) }

    struct Iterator: IteratorProtocol {
        let groups: FieldGroups
        var start: Int

        mutating func next() -> FieldGroup? {
            let entries = groups.entries
            guard start < entries.count else { return nil }
            var end = start + 1
            while end < entries.count, entries[end].name == entries[start].name { end += 1 }
            defer { start = end }
            return FieldGroup(name: entries[start].name, fields: groups.fields, entries: entries[start..<end])
        }
    }
}
