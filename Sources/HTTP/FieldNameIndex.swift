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
    /// The lowercased names, back to back, then `slack` zero bytes (so a
    /// key is one 8-byte load whatever the name's length).
    private let names: UnsafeMutableBufferPointer<UInt8>
    private let entryStorage: UnsafeMutableBufferPointer<Entry>
    private let groupStorage: UnsafeMutableBufferPointer<Group>
    private static let slack = 8
    /// The number of groups (distinct names).
    private(set) var groupCount = 0
    /// True when every name is ISO-8859-1 (no scalar above U+00FF), so byte
    /// order is `String` order (`FieldDigests`' invariant).
    private(set) var namesAreLatin1 = true

    /// The groups in name order.
    var groups: UnsafeMutableBufferPointer<Group> { UnsafeMutableBufferPointer(rebasing: groupStorage[0..<groupCount]) }

    /// Calls `body` with the index of `fields`, built in storage that lives
    /// only for the call.
    ///
    /// - Parameter nameBytes: the sum of the names' UTF-8 counts when the
    ///   caller has it already (`HeadDigest.inputCapacity`), which spares a
    ///   walk of the section; counted here when nil. Never smaller than the sum.
    static func with<Result>(_ fields: UnsafeBufferPointer<HTTPField>, nameBytes: Int? = nil,
                             _ body: (inout FieldNameIndex) -> Result) -> Result {
        let nameBytes = slack + (nameBytes ?? fields.indices.reduce(0) { $0 + fields[$1].name.utf8.count })
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: nameBytes) { names in
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
        let lowered = names.baseAddress!
        var written = 0
        for position in fields.indices {
            let start = written
            var all: UInt64 = 0, changed: UInt64 = 0
            Self.withUTF8(fields[position].name) { utf8 in
                guard let source = utf8.baseAddress else { return }
                let target = lowered + start
                var offset = 0
                while offset + 8 <= utf8.count {
                    let word = UnsafeRawPointer(source + offset).loadUnaligned(as: UInt64.self)
                    let capitals = Self.asciiCapitals(word)
                    UnsafeMutableRawPointer(target + offset).storeBytes(of: word | capitals >> 2, as: UInt64.self)
                    all |= word
                    changed |= capitals
                    offset += 8
                }
                while offset < utf8.count {
                    let byte = utf8[offset]
                    let lower = byte &- 0x41 < 26 ? byte | 0x20 : byte
                    target[offset] = lower
                    all |= UInt64(byte)
                    changed |= UInt64(byte ^ lower)
                    offset += 1
                }
                written += utf8.count
                // A lead byte from 0xC4 up starts a scalar above U+00FF.
                if all & Self.highBits != 0, utf8.contains(where: { $0 >= 0xC4 }) { namesAreLatin1 = false }
            }
            (entryStorage.baseAddress! + position).initialize(to: Entry(
                key: 0, nameStart: start, nameCount: written - start, field: position, isLowercase: changed == 0,
                isASCII: all & Self.highBits == 0))
        }
        // The keys: each name's first 8 bytes in one load (the slack after the
        // last name is zeroed, and bytes past a shorter name masked off).
        (lowered + written).initialize(repeating: 0, count: Self.slack)
        for position in fields.indices {
            let entry = entryStorage[position]
            entryStorage[position].key = Self.key(UnsafeRawPointer(lowered + entry.nameStart), count: entry.nameCount)
        }
        var entries = UnsafeMutableBufferPointer(rebasing: entryStorage[0..<fields.count])
        let sortedNames = UnsafeBufferPointer(names)
        entries.sort { a, b in
            let order = Self.compare(a, b, sortedNames)
            return order != 0 ? order < 0 : a.field < b.field
        }
        guard !entries.isEmpty else { return }
        var start = 0
        for end in 1...entries.count where end == entries.count || Self.compare(entries[end], entries[start], sortedNames) != 0 {
            (groupStorage.baseAddress! + groupCount).initialize(to: Group(entries: start..<end))
            groupCount += 1
            start = end
        }
    }

    private static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// For each byte of `word` that is an ASCII capital (0x41–0x5A), 0x80 in
    /// that byte's place; 0 elsewhere. Eight bytes at once with no carry
    /// between them: a byte's low seven bits plus 0x3F reach 0x80 from 0x41
    /// up, plus 0x25 from 0x5B up, and neither sum passes 0xFF; bytes with
    /// the high bit set (not ASCII) are masked out. `word | capitals >> 2`
    /// is then the word with those letters lowercased (0x80 >> 2 is 0x20).
    @inline(__always)
    static func asciiCapitals(_ word: UInt64) -> UInt64 {
        let low = word & ~highBits
        let fromA = low &+ 0x3F3F_3F3F_3F3F_3F3F
        let afterZ = low &+ 0x2525_2525_2525_2525
        return fromA & ~afterZ & ~word & highBits
    }

    /// The key of the `count` name bytes at `bytes`, 8 of which can be read.
    static func key(_ bytes: UnsafeRawPointer, count: Int) -> UInt64 {
        let word = UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self))
        return count >= 8 ? word : word & ~(UInt64.max >> (8 * count))
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
        let bytes = nameBytes(of: group)
        return CommonFieldNames.shared.name(key: entry.key, bytes) ?? String(decoding: bytes, as: UTF8.self)
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
    }}

/// Lowercase names that HTTP/1.1 heads often carry capitalised, so naming
/// their group (`FieldNameIndex.name(of:)`) takes one of these `String`s
/// instead of building one; and the names HTTP/2 peers send most, pseudo
/// fields included, so a decoded name is one of these too (`decoded(_:)`).
/// Found by a hash of the name's key and length in a table of 256 slots
/// (open addressing), then compared byte for byte.
///
/// A class of constants: `shared` is one reference, so a lookup retains
/// none of the tables (a struct of arrays retained each of them per call).
final class CommonFieldNames: Sendable {
    static let shared = CommonFieldNames([
        ":authority", ":method", ":path", ":scheme", ":status",
        "accept", "accept-charset", "accept-encoding", "accept-language", "accept-ranges", "access-control-allow-origin",
        "age", "allow", "authorization", "cache-control", "connection", "content-disposition", "content-encoding",
        "content-language", "content-length", "content-location", "content-range", "content-security-policy",
        "content-type", "cookie", "date", "etag", "expect", "expires", "forwarded", "host", "if-match",
        "if-modified-since", "if-none-match", "if-range", "if-unmodified-since", "intact-trace", "keep-alive",
        "last-modified", "link", "location", "origin", "pragma", "proxy-authenticate", "proxy-authorization",
        "proxy-connection", "range", "referer", "retry-after", "sec-websocket-accept", "sec-websocket-key",
        "sec-websocket-version", "server", "set-cookie", "strict-transport-security", "te", "trailer",
        "transfer-encoding", "upgrade", "upgrade-insecure-requests", "user-agent", "vary", "via", "www-authenticate",
        "x-content-type-options", "x-forwarded-for", "x-forwarded-host", "x-forwarded-proto", "x-frame-options",
        "x-request-id", "x-requested-with", "x-xss-protection",
    ])

    /// The names, in the order given.
    let names: [String]
    private let keys: [UInt64]
    /// Every name's bytes back to back (then 8 zero bytes), name `i` from `starts[i]` to `starts[i + 1]`.
    private let bytes: [UInt8]
    private let starts: [Int]
    /// An index into `names`, or -1.
    private let slots: [Int16]

    private init(_ names: [String]) {
        self.names = names
        var bytes: [UInt8] = [], starts: [Int] = [], keys: [UInt64] = []
        var slots = [Int16](repeating: -1, count: 256)
        for name in names {
            starts.append(bytes.count)
            bytes += name.utf8
        }
        starts.append(bytes.count)
        bytes += [UInt8](repeating: 0, count: 8)
        for index in names.indices {
            let count = starts[index + 1] - starts[index]
            let key = bytes.withUnsafeBytes { FieldNameIndex.key($0.baseAddress! + starts[index], count: count) }
            keys.append(key)
            var slot = Self.slot(key: key, count: count)
            while slots[slot] >= 0 { slot = (slot + 1) & 255 }
            slots[slot] = Int16(index)
        }
        self.bytes = bytes
        self.starts = starts
        self.keys = keys
        self.slots = slots
    }

    private static func slot(key: UInt64, count: Int) -> Int {
        Int(truncatingIfNeeded: ((key ^ UInt64(truncatingIfNeeded: count)) &* 0x9E37_79B9_7F4A_7C15) >> 56)
    }

    /// The common name whose bytes are exactly `bytes` (a decoded HTTP/2
    /// name, lowercase), or nil: then the caller builds the `String`.
    /// Reads only the bytes given (a name shorter than 8 is not loaded as a word).
    static func decoded(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        guard let base = bytes.baseAddress, bytes.count <= 32 else { return nil }
        var key: UInt64
        if bytes.count >= 8 {
            key = UInt64(bigEndian: UnsafeRawPointer(base).loadUnaligned(as: UInt64.self))
        } else {
            key = 0
            for offset in 0..<bytes.count { key |= UInt64(base[offset]) << (56 - 8 * UInt64(offset)) }
        }
        return shared.name(key: key, bytes)
    }

    /// True when the bytes of `lowered` after its first 8 (more than 8 in
    /// all) are those of `table` from `start + 8`: a word at a time, the
    /// last word overlapping the one before (both are `lowered.count` long).
    private static func restEqual(_ table: [UInt8], from start: Int, _ lowered: UnsafeBufferPointer<UInt8>) -> Bool {
        table.withUnsafeBytes { table in
            let a = table.baseAddress! + start, b = UnsafeRawPointer(lowered.baseAddress!)
            var offset = 8
            while offset + 8 < lowered.count {
                if a.loadUnaligned(fromByteOffset: offset, as: UInt64.self) != b.loadUnaligned(fromByteOffset: offset, as: UInt64.self) {
                    return false
                }
                offset += 8
            }
            let last = lowered.count - 8
            return a.loadUnaligned(fromByteOffset: last, as: UInt64.self) == b.loadUnaligned(fromByteOffset: last, as: UInt64.self)
        }
    }

    /// The common name whose bytes are `lowered` (key `key`), or nil.
    func name(key: UInt64, _ lowered: UnsafeBufferPointer<UInt8>) -> String? {
        var slot = Self.slot(key: key, count: lowered.count)
        while slots[slot] >= 0 {
            let index = Int(slots[slot])
            let start = starts[index]
            if keys[index] == key, starts[index + 1] - start == lowered.count,
               lowered.count <= 8 || Self.restEqual(bytes, from: start, lowered) {
                return names[index]
            }
            slot = (slot + 1) & 255
        }
        return nil
    }
}
