import Hashing

/// The digests one head's canonical input was cut into (its groups, its
/// target, its semantic form, its wire form), with that input, kept so
/// that the next head digested with the memo (the same message on the other
/// leg of an exchange) takes, for each range whose bytes are equal to one
/// of these, the digest already taken instead of hashing again.
///
/// A forwarded head keeps most of its fields: from the client's HTTP/1.1
/// request to the upstream's HTTP/2 one, or the origin's response back to
/// the client, every group whose values did not change has the same bytes,
/// and so, with the same `DigestFunction`, the same digest
/// (Docs/performance.md#digests). A range is reused only when its bytes are
/// equal byte for byte and the function is the same: a memo never changes
/// a digest, only whether it is computed.
///
/// One allocation: the object's tail holds the input (`inputCount`
/// bytes), then one record per digest taken, in the order taken: the
/// range's start and length (4 bytes each, native order) and the digest's
/// 32 bytes.
///
/// When the next head carries the very same fields (one array, shared: a
/// response relayed with nothing stripped or added, or fields of the same
/// bytes), its field section is this one's (`Section`, one object that the
/// next memo holds too): its group bytes are copied and its per-field
/// digests, names and hop-by-hop names taken as they are, with no index
/// built, no group written and no section made.
///
/// A head being digested reads a memo through a `Reading` taken once (the
/// tail's address and sizes, the function compared once), so a digest
/// looked up is pointer arithmetic: no retain, no header copied.
///
/// A class of constants (`@unchecked Sendable`: nothing changes after
/// `make`): a memo is held by the connection, the head being digested and
/// its input at once, and each hold is one retain (as a struct, every copy
/// retained its storage and each array of its section); its bytes are the
/// object's tail (`ManagedBuffer`), so a memo is one allocation.
public final class HeadDigestMemo: ManagedBuffer<HeadDigestMemo.Header, UInt8>, @unchecked Sendable {
    /// What a head's fields gave: the length of their groups' bytes, and
    /// what was made of them. One object, shared by every memo whose head
    /// held fields of these bytes (the next such head notes this section
    /// again instead of making one); the fields themselves and where the
    /// groups start are each memo's (`Header.sectionFields`, `sectionStart`).
    final class Section: Sendable {
        /// The groups' bytes: `count(included)`, the included groups (the
        /// semantic form ends `semanticLength` bytes from their start), the
        /// left-out ones.
        let groupsCount: Int
        let semanticLength: Int
        let perField: FieldDigests
        let hopByHop: [String]
        let fieldNames: [String]

        init(groupsCount: Int, semanticLength: Int, perField: FieldDigests, hopByHop: [String], fieldNames: [String]) {
            self.groupsCount = groupsCount
            self.semanticLength = semanticLength
            self.perField = perField
            self.hopByHop = hopByHop
            self.fieldNames = fieldNames
        }
    }

    /// True when `other` holds the same fields as `held` (a memo's): its
    /// very array (the same storage, which cannot change while the memo
    /// holds it), or one whose every name and value is the same UTF-8 bytes
    /// in the same order (the next request or response on a connection,
    /// which mostly repeats the last one's). Either way the section's
    /// bytes, digests and names are the ones `other` gives.
    static func sameFields(_ held: HTTPFields, _ other: HTTPFields) -> Bool {
        held.fields.withUnsafeBufferPointer { mine in
            other.fields.withUnsafeBufferPointer { theirs in
                guard theirs.count == mine.count else { return false }
                guard let a = mine.baseAddress, let b = theirs.baseAddress, a != b else { return true }
                for position in mine.indices {
                    // A field whose four words are the same (small strings of the same bytes, or the
                    // same storage) holds the same bytes: compared in place, no string retained.
                    let x = UnsafeRawPointer(a + position), y = UnsafeRawPointer(b + position)
                    if sameWords(x, y, offset: 0) && sameWords(x, y, offset: 16) { continue }
                    guard sameUTF8(mine[position].name, theirs[position].name),
                          sameUTF8(mine[position].value, theirs[position].value) else { return false }
                }
                return true
            }
        }
    }

    /// True when the two words at `offset` of `x` and `y` (one `String` of a field) are the same bits.
    @inline(__always)
    private static func sameWords(_ x: UnsafeRawPointer, _ y: UnsafeRawPointer, offset: Int) -> Bool {
        x.loadUnaligned(fromByteOffset: offset, as: UInt64.self) == y.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            && x.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)
                == y.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)
    }

    /// One digest taken, and the range of the input it covers.
    struct Entry {
        var start: Int
        var count: Int
        var digest: SHA256Digest
    }

    static let recordSize = 40

    /// What a memo holds besides its bytes.
    public struct Header {
        let function: DigestFunction
        /// `function.keyIdentity`: the same key object is the same function, compared as one word.
        let functionKey: ObjectIdentifier
        /// The input's bytes, first in the tail.
        let inputCount: Int
        /// The tail's bytes: the input, then the records.
        let byteCount: Int
        /// The head's field section, when it noted one, where its groups
        /// start in the input, and the head's fields (the section's bytes;
        /// empty without a section).
        let section: Section?
        let sectionStart: Int
        let sectionFields: HTTPFields
    }

    var function: DigestFunction { withUnsafeMutablePointerToHeader { $0.pointee.function } }
    /// The head's field section, when it noted one.
    var section: Section? { withUnsafeMutablePointerToHeader { $0.pointee.section } }

    /// The memo of `input` and the digests `entries` took over its ranges,
    /// with the head's field section when it noted one (its groups at `sectionStart`).
    static func make(function: DigestFunction, input: UnsafeRawBufferPointer, entries: UnsafeBufferPointer<Entry>,
                     section: Section?, sectionStart: Int = 0, sectionFields: HTTPFields = HTTPFields()) -> HeadDigestMemo {
        let byteCount = input.count + entries.count * recordSize
        let buffer = create(minimumCapacity: byteCount) { _ in
            Header(function: function, functionKey: function.keyIdentity, inputCount: input.count, byteCount: byteCount,
                   section: section, sectionStart: sectionStart, sectionFields: sectionFields)
        }
        buffer.withUnsafeMutablePointerToElements { elements in
            let base = UnsafeMutableRawPointer(elements)
            if let source = input.baseAddress { base.copyMemory(from: source, byteCount: input.count) }
            var at = input.count
            for entry in entries {
                base.storeBytes(of: UInt32(truncatingIfNeeded: entry.start), toByteOffset: at, as: UInt32.self)
                base.storeBytes(of: UInt32(truncatingIfNeeded: entry.count), toByteOffset: at + 4, as: UInt32.self)
                entry.digest.store(to: base + at + 8)
                at += recordSize
            }
        }
        return unsafeDowncast(buffer, to: HeadDigestMemo.self)
    }

    /// Calls `body` with the tail's bytes (the input, then the records).
    private func withBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        let count = header.byteCount
        return withUnsafeMutablePointerToElements { body(UnsafeRawBufferPointer(start: $0, count: count)) }
    }

    /// The digests taken, in order (for tests and checks).
    var entries: [Entry] {
        let inputCount = header.inputCount
        return withBytes { bytes in
            stride(from: inputCount, to: bytes.count, by: Self.recordSize).map { at in
                Entry(start: Int(bytes.loadUnaligned(fromByteOffset: at, as: UInt32.self)),
                      count: Int(bytes.loadUnaligned(fromByteOffset: at + 4, as: UInt32.self)),
                      digest: SHA256Digest(copying: bytes.baseAddress! + at + 8))
            }
        }
    }

    /// The input the digests were taken over.
    var input: [UInt8] {
        let inputCount = header.inputCount
        return withBytes { Array($0[..<inputCount]) }
    }

    /// This memo's field section when `fields` are its fields (its very
    /// array, or the same bytes: `sameFields`) and the digests are taken
    /// with the same function; nil otherwise.
    func section(holding fields: HTTPFields, using function: DigestFunction) -> Section? {
        reading(using: function)?.section(holding: fields)?.0
    }

    /// Calls `body` with the bytes of `range` of the input.
    func withInput<Result>(_ range: Range<Int>, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        withBytes { body(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }

    /// The digest taken over bytes equal to `range`'s, or nil (for tests:
    /// a head being digested reads through `reading(using:)`).
    func digest(of range: UnsafeRawBufferPointer, using function: DigestFunction) -> SHA256Digest? {
        reading(using: function)?.digest(of: range)
    }

    /// What a head being digested reads of this memo, when its digests are
    /// taken with `function` (the memo's; nil otherwise): the tail's address
    /// and sizes, taken once, so that each lookup is pointer arithmetic
    /// with no retain of the memo and no function compared again.
    /// Valid while the memo is held (`DigestInput` holds it for its call).
    func reading(using function: DigestFunction) -> Reading? {
        withUnsafeMutablePointerToHeader { header in
            guard header.pointee.functionKey == function.keyIdentity || header.pointee.function == function else { return nil }
            return withUnsafeMutablePointerToElements { elements in
                Reading(base: UnsafeRawPointer(elements), inputCount: header.pointee.inputCount,
                        byteCount: header.pointee.byteCount, header: header)
            }
        }
    }

    /// A memo's tail as `reading(using:)` lends it: the input's bytes,
    /// then one record per digest (range start and length, then the digest).
    struct Reading {
        let base: UnsafeRawPointer
        let inputCount: Int
        let byteCount: Int
        /// The memo's header (its section, where the groups start, its head's fields).
        let header: UnsafeMutablePointer<Header>

        /// The memo's field section when its head's fields are `fields`'s
        /// (`sameFields`), with the range of its groups' bytes in the input;
        /// nil otherwise. Read in place: the header is not copied out.
        func section(holding fields: HTTPFields) -> (Section, groups: Range<Int>)? {
            guard header.pointee.section != nil, HeadDigestMemo.sameFields(header.pointee.sectionFields, fields),
                  let held = header.pointee.section else { return nil }
            let start = header.pointee.sectionStart
            return (held, start..<start + held.groupsCount)
        }

        /// The bytes of `range` of the input.
        func bytes(_ range: Range<Int>) -> UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(start: base + range.lowerBound, count: range.count)
        }

        /// The digest taken over bytes equal to `range`'s, or nil. Lengths
        /// first, then the bytes: a head has a dozen entries.
        func digest(of range: UnsafeRawBufferPointer) -> SHA256Digest? {
            var at = inputCount
            while at < byteCount {
                let start = Int(base.loadUnaligned(fromByteOffset: at, as: UInt32.self))
                let count = Int(base.loadUnaligned(fromByteOffset: at + 4, as: UInt32.self))
                if count == range.count, count == 0 || HeadDigestMemo.equal(base + start, range.baseAddress!, count: count) {
                    return SHA256Digest(copying: base + at + 8)
                }
                at += HeadDigestMemo.recordSize
            }
            return nil
        }
    }

    /// True when `a` and `b` are the same UTF-8 bytes (so the same
    /// ISO-8859-1 bytes in a digest input): the same representation first
    /// (most names and short values are small strings, compared as two
    /// words), then lengths, then the bytes eight at a time, borrowed in place. Bytes, not `String` equality,
    /// which holds for canonically equivalent scalars too.
    static func sameUTF8(_ a: String, _ b: String) -> Bool {
        // The same representation (a small string's bytes inline, or one storage) holds the same bytes.
        let identical = withUnsafeBytes(of: a) { first in
            withUnsafeBytes(of: b) { second in
                first.loadUnaligned(as: UInt64.self) == second.loadUnaligned(as: UInt64.self)
                    && first.loadUnaligned(fromByteOffset: 8, as: UInt64.self) == second.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            }
        }
        if identical { return true }
        guard a.utf8.count == b.utf8.count else { return false }
        return a.utf8Span.span.withUnsafeBytes { x in
            b.utf8Span.span.withUnsafeBytes { y in
                x.isEmpty || equal(x.baseAddress!, y.baseAddress!, count: x.count)
            }
        }
    }

    /// True when the `count` bytes at `a` and at `b` are equal: 32 at a
    /// time (four words, one test), then a word at a time, the last word
    /// overlapping the one before; byte by byte only below 8 bytes.
    static func equal(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, count: Int) -> Bool {
        @inline(__always) func difference(_ offset: Int) -> UInt64 {
            a.loadUnaligned(fromByteOffset: offset, as: UInt64.self) ^ b.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
        }
        guard count >= 8 else {
            for offset in 0..<count where a.load(fromByteOffset: offset, as: UInt8.self) != b.load(fromByteOffset: offset, as: UInt8.self) {
                return false
            }
            return true
        }
        var offset = 0
        while offset + 32 <= count {
            if difference(offset) | difference(offset + 8) | difference(offset + 16) | difference(offset + 24) != 0 { return false }
            offset += 32
        }
        while offset + 8 <= count {
            if difference(offset) != 0 { return false }
            offset += 8
        }
        return offset == count || difference(count - 8) == 0
    }
}
