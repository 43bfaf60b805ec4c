import Hashing

/// The byte string a message digest is taken over: a sequence of
/// length-prefixed items, built in one buffer so that each digest is one
/// update over a contiguous range, with the recording's `DigestFunction`
/// (SHA-256, or HMAC-SHA-256 under the digest key). Passed `inout`, so
/// it is never copied; without a memo its arrays stay empty.
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
///
/// The bytes live in storage lent for one call (`with(capacity:_:)`),
/// on the stack when it fits: a head's digests allocate no buffer. With a
/// memo (`with(capacity:memo:earlier:keep:maxDigests:using:_:)`), each digest
/// is looked up in the previous head's first, then in the one before it, and
/// noted for the next (`HeadDigestMemo`).
struct DigestInput {
    /// Where the bytes are: storage lent by `with(capacity:_:)`, or
    /// `owned` once they outgrew it.
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    /// Heap storage this input allocated when the lent room was too small;
    /// freed by `with(capacity:_:)`.
    private var owned: UnsafeMutablePointer<UInt8>?
    /// The number of bytes written so far; a range boundary for `digest(of:using:)`.
    private(set) var position = 0
    /// The previous head's memo, to take digests from; nil without a memo
    /// (or when its digests were taken with another function).
    private var prior: HeadDigestMemo?
    /// The memo of the head before that one, looked up after `prior`; nil when none is kept.
    private var earlier: HeadDigestMemo?
    /// `prior`'s and `earlier`'s bytes and digests, read in place while this input holds them.
    private var priorReading: HeadDigestMemo.Reading?
    private var earlierReading: HeadDigestMemo.Reading?
    /// The digests taken so far, noted only when a memo is kept: room lent
    /// for the call, `takenCount` of it used.
    private var taken: UnsafeMutableBufferPointer<HeadDigestMemo.Entry>?
    private var takenCount = 0
    /// The field section noted for the memo kept (`noteSection`), where its groups start, and the head's fields.
    private var section: HeadDigestMemo.Section?
    private var sectionStart = 0
    private var sectionFields = HTTPFields()

    /// Calls `body` with an empty input of room for `capacity` bytes, lent
    /// for the call (on the stack when it fits). A bound that is too small
    /// costs a copy to the heap, never a wrong byte.
    static func with<Result>(capacity: Int, _ body: (inout DigestInput) -> Result) -> Result {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(capacity, 16)) { room in
            var input = DigestInput(base: room.baseAddress!, capacity: room.count)
            defer { input.owned?.deallocate() }
            return body(&input)
        }
    }

    /// `with(capacity:_:)` for a head digested with a memo: digests are
    /// taken from `memo`, else from `earlier`, where its bytes are equal; on
    /// return `memo` is this input's (its bytes and the first `maxDigests`
    /// digests taken) when `keep`, for the next head, else nil (it was the
    /// last head to use it).
    @inline(__always)
    static func with<Result>(capacity: Int, memo: inout HeadDigestMemo?, earlier: HeadDigestMemo?, keep: Bool,
                             maxDigests: Int, using function: DigestFunction,
                             _ body: (inout DigestInput) -> Result) -> Result {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(capacity, 16)) { room in
            withUnsafeTemporaryAllocation(of: HeadDigestMemo.Entry.self, capacity: keep ? max(maxDigests, 1) : 1) { entries in
                var input = DigestInput(base: room.baseAddress!, capacity: room.count)
                defer { input.owned?.deallocate() }
                // Each memo's function compared once here, not at every digest looked up.
                if let memo, let reading = memo.reading(using: function) { (input.prior, input.priorReading) = (memo, reading) }
                if let earlier, let reading = earlier.reading(using: function) {
                    (input.earlier, input.earlierReading) = (earlier, reading)
                }
                memo = nil
                if keep { input.taken = entries }
                let result = body(&input)
                if keep {
                    // Entries hold no reference (two integers and an inline digest): nothing to deinitialize.
                    memo = HeadDigestMemo.make(function: function, input: UnsafeRawBufferPointer(start: input.base, count: input.position),
                                          entries: UnsafeBufferPointer(rebasing: entries[..<input.takenCount]),
                                          section: input.section, sectionStart: input.sectionStart,
                                               sectionFields: input.sectionFields)
                }
                return result
            }
        }
    }

    private init(base: UnsafeMutablePointer<UInt8>, capacity: Int) {
        self.base = base
        self.capacity = capacity
    }

    /// Room for `count` more bytes at `position`; returns where they go and moves `position` past them.
    @inline(__always)
    private mutating func claim(_ count: Int) -> UnsafeMutablePointer<UInt8> {
        if count > capacity - position { grow(to: position + count) }
        defer { position += count }
        return base + position
    }

    private mutating func grow(to needed: Int) {
        let larger = max(needed, capacity * 2)
        let storage = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
        storage.initialize(from: base, count: position)
        owned?.deallocate()
        owned = storage
        base = storage
        capacity = larger
    }

    /// Appends `count(n)`.
    mutating func appendCount(_ n: Int) {
        UnsafeMutableRawPointer(claim(4)).storeBytes(of: UInt32(truncatingIfNeeded: n).bigEndian, as: UInt32.self)
    }

    /// Starts an item whose length is not known yet: writes a placeholder
    /// count and returns where it is, for `endItem(_:)`.
    mutating func beginItem() -> Int {
        let at = position
        appendCount(0)
        return at
    }

    /// Ends the item begun at `at`: its count becomes the bytes written since.
    mutating func endItem(_ at: Int) {
        UnsafeMutableRawPointer(base + at).storeBytes(of: UInt32(truncatingIfNeeded: position - at - 4).bigEndian, as: UInt32.self)
    }

    /// Appends `item(text)`, with ASCII letters lowercased when asked (the
    /// bytes of `HTTPField.lowercaseASCII(text)`).
    mutating func appendItem(_ text: String, lowercasingASCII lowercase: Bool = false) {
        // ASCII text (the usual case): its count and its bytes claimed at once.
        if appendASCII(text, lowercasingASCII: lowercase, counted: true) { return }
        let at = beginItem()
        appendScalars(text, lowercasingASCII: lowercase)
        endItem(at)
    }

    /// Appends `item(String(value))` for a value from 0 up (a status code),
    /// the decimal digits written in place: no `String` made.
    mutating func appendItem(decimal value: Int) {
        guard value >= 0 else { return appendItem(String(value)) }
        var digits = 1, rest = value
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        appendCount(digits)
        let target = claim(digits)
        rest = value
        for offset in stride(from: digits - 1, through: 0, by: -1) {
            target[offset] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
            rest /= 10
        }
    }

    /// Appends `item(bytes)` for bytes that are ASCII (so their own ISO-8859-1 form).
    mutating func appendItem(ascii bytes: UnsafeBufferPointer<UInt8>) {
        appendCount(bytes.count)
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        claim(bytes.count).initialize(from: source, count: bytes.count)
    }

    /// Appends the ISO-8859-1 bytes of `text`, no count: ASCII text (the usual
    /// case) copied from its UTF-8 storage in one go, other text scalar by
    /// scalar (`?` for a scalar above U+00FF).
    mutating func appendText(_ text: String, lowercasingASCII lowercase: Bool = false) {
        if !appendASCII(text, lowercasingASCII: lowercase, counted: false) { appendScalars(text, lowercasingASCII: lowercase) }
    }

    /// Appends `text` from its UTF-8 storage when it is ASCII and returns
    /// true; returns false otherwise, with `position` where it was (the
    /// bytes copied are then written over). Inlined into the callers, with
    /// the scalar walk kept out of line, so the common path copies (and
    /// lowercases, when asked) eight bytes at a time and notes any byte from
    /// 0x80 up on the way: no scan before the copy. The last bytes are one
    /// word that overlaps the one before (a text of 8 bytes or more), or two
    /// overlapping 4-byte or 2-byte loads, so no text is copied byte by byte:
    /// each byte written twice is the same byte. `counted`: `count(n)`
    /// first, in the same claim (`item(text)`).
    @inline(__always)
    private mutating func appendASCII(_ text: String, lowercasingASCII lowercase: Bool, counted: Bool) -> Bool {
        FieldNameIndex.withUTF8(text) { utf8 in
            let count = utf8.count
            let start = position
            var target = claim(counted ? 4 + count : count)
            if counted {
                UnsafeMutableRawPointer(target).storeBytes(of: UInt32(truncatingIfNeeded: count).bigEndian, as: UInt32.self)
                target += 4
            }
            guard let source = utf8.baseAddress, count > 0 else { return true }
            var seen: UInt64 = 0
            @inline(__always) func copy<Word: FixedWidthInteger & UnsignedInteger>(_: Word.Type, at offset: Int) {
                let word = UInt64(truncatingIfNeeded: UnsafeRawPointer(source + offset).loadUnaligned(as: Word.self))
                seen |= word
                let written = lowercase ? word | FieldNameIndex.asciiCapitals(word) >> 2 : word
                UnsafeMutableRawPointer(target + offset).storeBytes(of: Word(truncatingIfNeeded: written), as: Word.self)
            }
            if count >= 8 {
                var offset = 0
                while offset + 8 < count {
                    copy(UInt64.self, at: offset)
                    offset += 8
                }
                copy(UInt64.self, at: count - 8)
            } else if count >= 4 {
                copy(UInt32.self, at: 0)
                copy(UInt32.self, at: count - 4)
            } else if count >= 2 {
                copy(UInt16.self, at: 0)
                copy(UInt16.self, at: count - 2)
            } else {
                copy(UInt8.self, at: 0)
            }
            guard seen & 0x8080_8080_8080_8080 == 0 else {
                position = start
                return false
            }
            return true
        }
    }

    /// Appends `text` scalar by scalar: the ISO-8859-1 byte of each, `?` above U+00FF.
    @inline(never)
    private mutating func appendScalars(_ text: String, lowercasingASCII lowercase: Bool) {
        for scalar in text.unicodeScalars {
            var value = scalar.value
            if lowercase, value &- 0x41 < 26 { value |= 0x20 }
            claim(1).pointee = value <= 0xFF ? UInt8(truncatingIfNeeded: value) : UInt8(ascii: "?")
        }
    }

    /// Appends one group of `index`: `item(name) count(V) item(value_1) … item(value_V)`,
    /// except that a `cookie` group of more than one value is one value, the
    /// values joined with "; " (RFC 9113 §8.2.3), so HTTP/2 crumbs and one
    /// HTTP/1.1 line compare equal.
    mutating func appendGroup(_ group: FieldNameIndex.Group, of index: FieldNameIndex) {
        let entries = index.entries(of: group)
        if index.isASCII(group) {
            appendItem(ascii: index.nameBytes(of: group))
        } else {
            appendItem(index.fields[entries[0].field].name, lowercasingASCII: true)
        }
        if entries.count > 1, index.group(group, isNamed: DigestInput.cookie) {
            appendCount(1)
            let at = beginItem()
            for (offset, entry) in entries.enumerated() {
                if offset > 0 { appendText("; ") }
                appendText(index.fields[entry.field].value)
            }
            endItem(at)
            return
        }
        appendCount(entries.count)
        for entry in entries { appendItem(index.fields[entry.field].value) }
    }

    private static let cookie = Array("cookie".utf8)

    /// The field section of the previous head, else of the one before it,
    /// when its head held `fields` (`HeadDigestMemo.sameFields`), with the
    /// range of its groups' bytes in that memo's input (`appendPrior`);
    /// nil without a memo or when neither does.
    func priorSection(holding fields: HTTPFields) -> (section: HeadDigestMemo.Section, groups: Range<Int>, in: HeadDigestMemo.Reading)? {
        if let priorReading, let (section, groups) = priorReading.section(holding: fields) { return (section, groups, priorReading) }
        if let earlierReading, let (section, groups) = earlierReading.section(holding: fields) {
            return (section, groups, earlierReading)
        }
        return nil
    }

    /// Appends the bytes of `range` of a memo's input (a field section copied whole).
    mutating func appendPrior(_ range: Range<Int>, of memo: HeadDigestMemo.Reading) {
        appendRaw(memo.bytes(range))
    }

    /// Appends `bytes` as they are, no count (an HTTP/1.1 head's wire bytes,
    /// so its `exact` digest is a range like any other).
    mutating func appendRaw(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        UnsafeMutableRawPointer(claim(bytes.count)).copyMemory(from: source, byteCount: bytes.count)
    }

    /// Notes this head's field section for the memo it keeps (nothing without one).
    mutating func noteSection(_ section: HeadDigestMemo.Section, of fields: HTTPFields, at start: Int) {
        if taken != nil { (self.section, sectionStart, sectionFields) = (section, start, fields) }
    }

    /// True when this input keeps a memo for the next head.
    var keepsMemo: Bool { taken != nil }

    /// The digest of a range of what was written with `function` (the
    /// recording's), in one update; with a memo, the previous head's (or the
    /// earlier one's) digest of equal bytes when it has one, and noted for
    /// the next head.
    mutating func digest(of range: Range<Int>, using function: DigestFunction) -> SHA256Digest {
        let bytes = UnsafeRawBufferPointer(start: base + range.lowerBound, count: range.count)
        let digest = priorReading?.digest(of: bytes) ?? earlierReading?.digest(of: bytes)
            ?? SHA256Digest(digesting: bytes, using: function)
        if let taken, takenCount < taken.count {
            (taken.baseAddress! + takenCount).initialize(to: HeadDigestMemo.Entry(start: range.lowerBound, count: range.count,
                                                                                 digest: digest))
            takenCount += 1
        }
        return digest
    }
}
