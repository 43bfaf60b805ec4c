import Hashing

/// A digest of 32 bytes, written in records as 64 lowercase hexadecimal
/// digits: SHA-256, or HMAC-SHA-256 under the recording's digest key, as
/// the `DigestFunction` that took it (named in the recording's header).
/// Two values compare meaningfully only when taken with the same function.
///
/// Invariant: `bytes.count == 32`; every initialiser enforces it, and decoding
/// rejects any other text with a precise error.
public struct SHA256Digest: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The 32 digest bytes.
    public let bytes: [UInt8]

    /// Wraps 32 bytes; nil for any other length.
    public init?(bytes: [UInt8]) {
        guard bytes.count == SHA256.byteCount else { return nil }
        self.bytes = bytes
    }

    /// Parses 64 hexadecimal digits (either case); nil otherwise.
    public init?(hex: String) {
        guard let bytes = Encoding.fromHex(hex) else { return nil }
        self.init(bytes: bytes)
    }

    /// Wraps the output of `SHA256.finalize()`, which is 32 bytes by construction.
    init(finalized bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The plain SHA-256 of a byte collection, hashed in one update.
    public static func of<Bytes: Collection>(_ bytes: Bytes) -> SHA256Digest where Bytes.Element == UInt8 {
        SHA256Digest(finalized: SHA256.hash(bytes))
    }

    /// The digest of a byte collection with `function`, in one update.
    public static func of<Bytes: Collection>(_ bytes: Bytes, using function: DigestFunction) -> SHA256Digest
        where Bytes.Element == UInt8 {
        SHA256Digest(finalized: function.digest(bytes))
    }

    /// The plain SHA-256 of no bytes at all.
    public static let ofNothing = SHA256Digest.of([UInt8]())

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
