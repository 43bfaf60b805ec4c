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
/// response relayed with nothing stripped or added), its field section is
/// this one's (`Section`): its group bytes are copied and its per-field
/// digests, names and hop-by-hop names taken as they are, with no index
/// built and no group written.
///
/// A class of constants (`@unchecked Sendable`: nothing changes after
/// `make`): a memo is held by the connection, the head being digested and
/// its input at once, and each hold is one retain (as a struct, every copy
/// retained its storage and each array of its section); its bytes are the
/// object's tail (`ManagedBuffer`), so a memo is one allocation.
public final class HeadDigestMemo: ManagedBuffer<HeadDigestMemo.Header, UInt8>, @unchecked Sendable {
    /// What a head's fields gave: the fields themselves (held, so the
    /// array's storage outlives the memo and its identity means equal
    /// contents), where their groups are in the input, and what was made
    /// of them.
    struct Section: Sendable {
        let fields: HTTPFields
        /// The groups' bytes in the input: `count(included)`, the included
        /// groups (the semantic form ends at `semanticEnd`), the left-out ones.
        let groups: Range<Int>
        let semanticEnd: Int
        let perField: FieldDigests
        let hopByHop: [String]
        let fieldNames: [String]

        /// True when `other` holds the same fields as this section's: its
        /// very array (the same storage, which cannot change while this
        /// section holds it), or one whose every name and value is the same
        /// UTF-8 bytes in the same order (the next request or response on a
        /// connection, which mostly repeats the last one's). Either way the
        /// section's bytes, digests and names are the ones `other` gives.
        func holds(_ other: HTTPFields) -> Bool {
            fields.fields.withUnsafeBufferPointer { mine in
                other.fields.withUnsafeBufferPointer { theirs in
                    guard theirs.count == mine.count else { return false }
                    if theirs.baseAddress == mine.baseAddress { return true }
                    for position in mine.indices {
                        guard HeadDigestMemo.sameUTF8(mine[position].name, theirs[position].name),
                              HeadDigestMemo.sameUTF8(mine[position].value, theirs[position].value) else { return false }
                    }
                    return true
                }
            }
        }
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
        /// The input's bytes, first in the tail.
        let inputCount: Int
        /// The tail's bytes: the input, then the records.
        let byteCount: Int
        /// The head's field section, when it noted one.
        let section: Section?
    }

    var function: DigestFunction { header.function }
    /// The head's field section, when it noted one.
    var section: Section? { header.section }

    /// The memo of `input` and the digests `entries` took over its ranges.
    static func make(function: DigestFunction, input: UnsafeRawBufferPointer, entries: UnsafeBufferPointer<Entry>,
                     section: Section?) -> HeadDigestMemo {
        let byteCount = input.count + entries.count * recordSize
        let buffer = create(minimumCapacity: byteCount) { _ in
            Header(function: function, inputCount: input.count, byteCount: byteCount, section: section)
        }
        buffer.withUnsafeMutablePointerToElements { elements in
            let base = UnsafeMutableRawPointer(elements)
            if let source = input.baseAddress { base.copyMemory(from: source, byteCount: input.count) }
            var at = input.count
            for entry in entries {
                base.storeBytes(of: UInt32(truncatingIfNeeded: entry.start), toByteOffset: at, as: UInt32.self)
                base.storeBytes(of: UInt32(truncatingIfNeeded: entry.count), toByteOffset: at + 4, as: UInt32.self)
                entry.digest.withUnsafeBytes { (base + at + 8).copyMemory(from: $0.baseAddress!, byteCount: 32) }
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
    /// array, or the same bytes: `Section.holds`) and the digests are taken
    /// with the same function; nil otherwise.
    func section(holding fields: HTTPFields, using function: DigestFunction) -> Section? {
        guard let section, function == self.function, section.holds(fields) else { return nil }
        return section
    }

    /// Calls `body` with the bytes of `range` of the input.
    func withInput<Result>(_ range: Range<Int>, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        withBytes { body(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }

    /// The digest taken over bytes equal to `range`'s, or nil. Lengths
    /// first, then the bytes: a head has a dozen entries.
    func digest(of range: UnsafeRawBufferPointer, using function: DigestFunction) -> SHA256Digest? {
        guard function == self.function else { return nil }
        let inputCount = header.inputCount
        return withBytes { bytes in
            guard let base = bytes.baseAddress else { return nil }
            var at = inputCount
            while at < bytes.count {
                let start = Int(bytes.loadUnaligned(fromByteOffset: at, as: UInt32.self))
                let count = Int(bytes.loadUnaligned(fromByteOffset: at + 4, as: UInt32.self))
                if count == range.count, count == 0 || Self.equal(base + start, range.baseAddress!, count: count) {
                    return SHA256Digest(copying: base + at + 8)
                }
                at += Self.recordSize
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

    /// True when the `count` bytes at `a` and at `b` are equal; eight at a time.
    private static func equal(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, count: Int) -> Bool {
        var offset = 0
        while offset + 8 <= count {
            if a.loadUnaligned(fromByteOffset: offset, as: UInt64.self) != b.loadUnaligned(fromByteOffset: offset, as: UInt64.self) {
                return false
            }
            offset += 8
        }
        while offset < count {
            if a.load(fromByteOffset: offset, as: UInt8.self) != b.load(fromByteOffset: offset, as: UInt8.self) { return false }
            offset += 1
        }
        return true
    }
}
