import Hashing

/// The digests one head's canonical input was cut into (its groups, its
/// target, its semantic form, its HTTP/2 list), with that input, kept so
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
/// Invariant: `entries` are ranges of `bytes`, in the order they were taken.
public struct HeadDigestMemo: Sendable {
    /// One digest taken, and the range of `bytes` it covers.
    struct Entry: Sendable {
        var start: Int
        var count: Int
        var digest: SHA256Digest
    }

    let function: DigestFunction
    let bytes: [UInt8]
    let entries: [Entry]

    /// The digest taken over bytes equal to `range`'s, or nil. Lengths
    /// first, then the bytes: a head has a dozen entries.
    func digest(of range: UnsafeRawBufferPointer, using function: DigestFunction) -> SHA256Digest? {
        guard function == self.function else { return nil }
        return bytes.withUnsafeBytes { bytes in
            for entry in entries where entry.count == range.count {
                guard let base = bytes.baseAddress, let other = range.baseAddress else { return entry.digest }
                if Self.equal(base + entry.start, other, count: entry.count) { return entry.digest }
            }
            return nil
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
