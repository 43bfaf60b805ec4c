/// The fields of one section (a head's or a trailer section's) grouped by
/// name lowercased (ASCII), values in the order they appeared within a name,
/// groups in ascending byte order of that name: the grouping the semantic
/// form and the per-field digests use (`HeadDigest+Canonical.swift`).
///
/// Built over storage lent for the duration of one call (`with(_:_:)`), on
/// the stack when it fits, so grouping a section allocates nothing and builds
/// no `String`: each name is lowercased once, as bytes, into `names`, and
/// names are compared as those bytes (first by an 8-byte prefix, `Entry.key`).
///
/// Names are compared on their UTF-8 bytes with ASCII letters lowercased.
/// For the ISO-8859-1 text the model's strings hold (every name a parser
/// produces), that is the order and equality of the lowercased `String`s;
/// only a name built by code with scalars above U+00FF that is not in
/// normal form C could compare otherwise (it groups by its bytes).
///
/// Invariants, once built: `entries` holds every field once, sorted by
/// (lowercased name bytes, position); `groups[0..<groupCount]` are the runs
/// of equal names in `entries`, in order; nothing here outlives the call.
struct FieldNameIndex {
    /// One field of the section.
    struct Entry {
        /// The first 8 bytes of the lowercased name, big-endian, zero-padded:
        /// two names whose keys differ are ordered by their keys.
        var key: UInt64
        /// Where the lowercased name is in `names`, and its length.
        var nameStart: Int
        var nameCount: Int
        /// The field's position in the section.
        var field: Int
        /// True when the name has no ASCII capital letter, so it is its own lowercased form.
        var isLowercase: Bool
        /// True when the name is ASCII.
        var isASCII: Bool
    }

    /// One name's run of `entries`, classified for the semantic form by the
    /// head that holds it (`HeadDigest`; a trailer section leaves nothing out).
    struct Group {
        /// This name's entries, positions ascending.
        var entries: Range<Int>
        /// The semantic form leaves this name out (`HeadDigest.isLeftOut`).
        var isLeftOut = false
        /// The name is hop-by-hop in this head.
        var isHopByHop = false
    }

    /// The section.
    let fields: UnsafeBufferPointer<HTTPField>
    /// The lowercased names, back to back.
    private let names: UnsafeMutableBufferPointer<UInt8>
    private let entryStorage: UnsafeMutableBufferPointer<Entry>
    private let groupStorage: UnsafeMutableBufferPointer<Group>
    /// The number of groups (distinct names).
    private(set) var groupCount = 0
    /// True when every name is ISO-8859-1 (no scalar above U+00FF), so byte
    /// order is `String` order (`FieldDigests`' invariant).
    private(set) var namesAreLatin1 = true

    /// The groups in name order.
    var groups: UnsafeMutableBufferPointer<Group> { UnsafeMutableBufferPointer(rebasing: groupStorage[0..<groupCount]) }

    /// Calls `body` with the index of `fields`, built in storage that lives
    /// only for the call.
    static func with<Result>(_ fields: UnsafeBufferPointer<HTTPField>, _ body: (inout FieldNameIndex) -> Result) -> Result {
        var nameBytes = 0
        for field in fields { nameBytes += field.name.utf8.count }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(nameBytes, 1)) { names in
            withUnsafeTemporaryAllocation(of: Entry.self, capacity: max(fields.count, 1)) { entries in
                withUnsafeTemporaryAllocation(of: Group.self, capacity: max(fields.count, 1)) { groups in
                    var index = FieldNameIndex(fields: fields, names: names, entryStorage: entries, groupStorage: groups)
                    index.build()
                    return body(&index)
                }
            }
        }
    }

    private init(fields: UnsafeBufferPointer<HTTPField>, names: UnsafeMutableBufferPointer<UInt8>,
                 entryStorage: UnsafeMutableBufferPointer<Entry>, groupStorage: UnsafeMutableBufferPointer<Group>) {
        self.fields = fields
        self.names = names
        self.entryStorage = entryStorage
        self.groupStorage = groupStorage
    }

    /// Lowercases each name into `names`, sorts the entries, cuts the runs.
    private mutating func build() {
        var written = 0
        for position in fields.indices {
            let start = written
            var key: UInt64 = 0
            var lowercase = true, ascii = true, latin1 = true
            Self.withUTF8(fields[position].name) { utf8 in
                for byte in utf8 {
                    let lower = byte &- 0x41 < 26 ? byte | 0x20 : byte
                    if lower != byte { lowercase = false }
                    if byte >= 0x80 { ascii = false }
                    if byte >= 0xC4 { latin1 = false }
                    if written - start < 8 { key = key << 8 | UInt64(lower) }
                    names[written] = lower
                    written += 1
                }
            }
            let count = written - start
            if count < 8 { key <<= UInt64(8 * (8 - count)) }
            if !latin1 { namesAreLatin1 = false }
            (entryStorage.baseAddress! + position).initialize(to: Entry(
                key: key, nameStart: start, nameCount: count, field: position, isLowercase: lowercase, isASCII: ascii))
        }
        var entries = UnsafeMutableBufferPointer(rebasing: entryStorage[0..<fields.count])
        let lowered = UnsafeBufferPointer(names)
        entries.sort { a, b in
            let order = Self.compare(a, b, lowered)
            return order != 0 ? order < 0 : a.field < b.field
        }
        guard !entries.isEmpty else { return }
        var start = 0
        for end in 1...entries.count where end == entries.count || Self.compare(entries[end], entries[start], lowered) != 0 {
            (groupStorage.baseAddress! + groupCount).initialize(to: Group(entries: start..<end))
            groupCount += 1
            start = end
        }
    }

    /// Negative, zero or positive as `a`'s lowercased name sorts before, equal to or after `b`'s (bytes).
    private static func compare(_ a: Entry, _ b: Entry, _ names: UnsafeBufferPointer<UInt8>) -> Int {
        if a.key != b.key { return a.key < b.key ? -1 : 1 }
        let common = min(a.nameCount, b.nameCount)
        var offset = 8
        while offset < common {
            let x = names[a.nameStart + offset], y = names[b.nameStart + offset]
            if x != y { return Int(x) - Int(y) }
            offset += 1
        }
        return a.nameCount - b.nameCount
    }

    /// The entries of `group`, positions ascending.
    func entries(of group: Group) -> UnsafeBufferPointer<Entry> {
        UnsafeBufferPointer(rebasing: entryStorage[group.entries])
    }

    /// The lowercased name's UTF-8 bytes.
    func nameBytes(of group: Group) -> UnsafeBufferPointer<UInt8> {
        let entry = entryStorage[group.entries.lowerBound]
        return UnsafeBufferPointer(rebasing: names[entry.nameStart..<entry.nameStart + entry.nameCount])
    }

    /// True when the group's name is ASCII (its item is its bytes).
    func isASCII(_ group: Group) -> Bool { entryStorage[group.entries.lowerBound].isASCII }

    /// The lowercased name as a `String`: the field's own name when it was
    /// lowercase already, else built from the bytes (small names need no allocation).
    func name(of group: Group) -> String {
        let entry = entryStorage[group.entries.lowerBound]
        if entry.isLowercase { return fields[entry.field].name }
        return String(decoding: nameBytes(of: group), as: UTF8.self)
    }

    /// True when the group's lowercased name is `name` (lowercase ASCII), byte for byte.
    func group(_ group: Group, isNamed name: [UInt8]) -> Bool {
        let bytes = nameBytes(of: group)
        return bytes.count == name.count && bytes.elementsEqual(name)
    }

    /// Calls `body` with the UTF-8 bytes of `text`, in place when its storage
    /// is contiguous (always, for native strings), else copied.
    static func withUTF8<Result>(_ text: String, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        return Array(text.utf8).withUnsafeBufferPointer(body)
    }
}
