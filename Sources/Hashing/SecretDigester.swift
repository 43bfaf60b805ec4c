/// Keyed digests of secret values: HMAC-SHA-256 (RFC 2104) under the digest
/// key that the taps of one setup share.
///
/// A recording keeps a secret (a cookie, an Authorization value, a password
/// or token parameter) only as `digest(value)`. The same secret under the
/// same key gives the same digest at every tap, so verification still sees
/// that it crossed a hop unchanged; without the key, holding the recording
/// does not let anyone test guesses against the digest, which a plain
/// SHA-256 of a low-entropy password would.
///
/// This is the one key of a recording: the recorder's redaction digests
/// secret values with it, and every digest of message content (heads,
/// bodies) is taken with `digests`, HMAC-SHA-256 under the same key.
///
/// Invariant: `digests` is HMAC-SHA-256 under the key, its states computed
/// once in `init` (`DigestFunction`); digesting only copies them, so one
/// value digests any number of messages from any thread without allocating
/// an OpenSSL object.
public struct SecretDigester: Sendable, Hashable, CustomStringConvertible {
    /// The length of a digest key file's key.
    public static let keyByteCount = 32
    /// The prefix of a keyed digest in a recording.
    public static let prefix = "hmac-sha256:"

    /// Names the key without revealing it: the first 8 bytes of SHA-256 over
    /// the key, hex. Two recordings with different fingerprints used
    /// different keys, so their secret digests cannot be compared.
    public let fingerprint: String
    /// HMAC-SHA-256 under this key: the function the recording digests
    /// message content with (heads, bodies), as well as secret values.
    public let digests: DigestFunction

    /// A digester under `key` (any length; a digest key file holds `keyByteCount` bytes).
    public init(key: [UInt8]) {
        fingerprint = Encoding.hex(SHA256.hash(key).prefix(8))
        digests = DigestFunction(hmacKey: key, fingerprint: fingerprint)
    }

    /// A key made for this process only, for taps that were given none: their
    /// secrets are still never plain digests, and recordings made by other
    /// processes show a different fingerprint.
    public static let ephemeral = SecretDigester(key: SecureRandom.bytes(keyByteCount))

    /// HMAC-SHA-256 of `message`: 32 bytes.
    public func authenticate<Bytes: Collection>(_ message: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        digests.digest(message)
    }

    /// `hmac-sha256:` followed by the hex HMAC of `message`: what a recording
    /// keeps in place of a secret.
    public func digest<Bytes: Collection>(_ message: Bytes) -> String where Bytes.Element == UInt8 {
        SecretDigester.prefix + Encoding.hex(authenticate(message))
    }

    public var description: String { "digest key \(fingerprint)" }

    public static func == (a: SecretDigester, b: SecretDigester) -> Bool { a.fingerprint == b.fingerprint }

    public func hash(into hasher: inout Hasher) { hasher.combine(fingerprint) }
}
