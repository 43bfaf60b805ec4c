/// A digest of 32 bytes, written in records as 64 lowercase hexadecimal
/// digits: SHA-256, or HMAC-SHA-256 under the recording's digest key, as
/// the `DigestFunction` that took it (named in the recording's header).
/// Two values compare meaningfully only when taken with the same function.
///
/// Invariant: exactly 32 bytes; every initialiser enforces it, and decoding
/// rejects any other text with a precise error.
public struct SHA256Digest: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The 32 bytes, inline: a digest costs no allocation and copying one no
    /// reference counting (Docs/performance.md#digests).
    @usableFromInline private(set) var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

    /// The 32 digest bytes, as a new array.
    public var bytes: [UInt8] {
        withUnsafeBytes { Array($0) }
    }

    /// Calls `body` with the 32 digest bytes, without copying them.
    @inlinable
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try Swift.withUnsafeBytes(of: words, body)
    }

    /// Wraps 32 bytes; nil for any other length.
    public init?(bytes: [UInt8]) {
        guard bytes.count == SHA256.byteCount else { return nil }
        Swift.withUnsafeMutableBytes(of: &words) { $0.copyBytes(from: bytes) }
    }

    /// Parses 64 hexadecimal digits (either case); nil otherwise.
    public init?(hex: String) {
        guard let bytes = Encoding.fromHex(hex) else { return nil }
        self.init(bytes: bytes)
    }

    /// The digest whose 32 bytes are at `bytes` (as `withUnsafeBytes` lends
    /// them, any alignment), for a caller that keeps digests in a buffer of
    /// its own: four loads, inlined (no call, no `memcpy`).
    @inlinable
    public init(copying bytes: UnsafeRawPointer) {
        words = (bytes.loadUnaligned(as: UInt64.self), bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
                 bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self), bytes.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
    }

    /// Stores the 32 bytes at `target` (any alignment), as `init(copying:)` reads them back.
    @inlinable
    public func store(to target: UnsafeMutableRawPointer) {
        target.storeBytes(of: words.0, as: UInt64.self)
        target.storeBytes(of: words.1, toByteOffset: 8, as: UInt64.self)
        target.storeBytes(of: words.2, toByteOffset: 16, as: UInt64.self)
        target.storeBytes(of: words.3, toByteOffset: 24, as: UInt64.self)
    }

    /// Stores the 32 bytes `fill` writes at the pointer it is given.
    init(filling fill: (UnsafeMutableRawPointer) -> Void) {
        Swift.withUnsafeMutableBytes(of: &words) { fill($0.baseAddress!) }
    }

    /// The digest of `buffer` with `function`, in one update.
    public init(digesting buffer: UnsafeRawBufferPointer, using function: DigestFunction) {
        Swift.withUnsafeMutableBytes(of: &words) { function.digest(buffer, into: $0.baseAddress!) }
    }

    /// The plain SHA-256 of a byte collection, hashed in one update.
    public static func of<Bytes: Collection>(_ bytes: Bytes) -> SHA256Digest where Bytes.Element == UInt8 {
        of(bytes, using: .sha256)
    }

    /// The digest of a byte collection with `function`, in one update.
    public static func of<Bytes: Collection>(_ bytes: Bytes, using function: DigestFunction) -> SHA256Digest
        where Bytes.Element == UInt8 {
        let digest: SHA256Digest? = bytes.withContiguousStorageIfAvailable { buffer in
            SHA256Digest { function.digest(UnsafeRawBufferPointer(buffer), into: $0) }
        }
        if let digest { return digest }
        return Array(bytes).withUnsafeBytes { buffer in SHA256Digest { function.digest(buffer, into: $0) } }
    }

    /// The result of a running digest, which must not be updated afterwards.
    public static func finishing(_ running: inout RunningDigest) -> SHA256Digest {
        SHA256Digest { running.finish(into: $0) }
    }

    /// The plain SHA-256 of no bytes at all.
    public static let ofNothing = SHA256Digest.of([UInt8]())

    /// 32 zero bytes: what stands for a digest that was not taken (records
    /// nothing reads digests from, `HeadDigest.init(untaken:)`); never
    /// written to a recording.
    public static let untaken = SHA256Digest(filling: { _ in })  // `words` start as zeros

    public static func == (a: SHA256Digest, b: SHA256Digest) -> Bool {
        a.words.0 == b.words.0 && a.words.1 == b.words.1 && a.words.2 == b.words.2 && a.words.3 == b.words.3
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }

    /// 64 lowercase hexadecimal digits.
    public var hex: String { Encoding.hex(bytes) }

    public var description: String { hex }

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let digest = SHA256Digest(hex: text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "expected 64 hexadecimal digits for a SHA-256 digest, found \"\(text)\"")
        }
        self = digest
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }
}
