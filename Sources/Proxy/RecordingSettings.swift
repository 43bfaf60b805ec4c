import Evidence
import Hashing

/// How the proxy records exchanges: under which tap name, what it keeps in
/// clear, how much of each body it stores, and the clock its timings read.
///
/// Immutable once made, and copied into every exchange's recorder: it holds
/// one shared reference, so a copy is one retain rather than one of each
/// string, policy and closure.
public struct RecordingSettings: Sendable {
    private final class Storage: Sendable {
        let tap: String
        let redaction: RedactionPolicy
        let bodyStoreLimit: Int
        let clock: @Sendable () -> Timestamp
        let takesDigests: Bool

        init(tap: String, redaction: RedactionPolicy, bodyStoreLimit: Int, clock: @escaping @Sendable () -> Timestamp,
             takesDigests: Bool) {
            self.tap = tap
            self.redaction = redaction
            self.bodyStoreLimit = bodyStoreLimit
            self.clock = clock
            self.takesDigests = takesDigests
        }
    }

    private let storage: Storage

    /// The tap name every record carries.
    public var tap: String { storage.tap }
    /// Which field values stay in clear.
    public var redaction: RedactionPolicy { storage.redaction }
    /// The most bytes of each body stored in the record; 0 stores none.
    public var bodyStoreLimit: Int { storage.bodyStoreLimit }
    /// The wall clock of the timings; tests pass a fixed one.
    public var clock: @Sendable () -> Timestamp { storage.clock }

    /// What every message, body and relayed stream is digested with: the
    /// redaction's digest key (`RedactionPolicy.digests`).
    public var digests: DigestFunction { storage.redaction.digests }

    /// False when nothing reads the records' message digests (no recording
    /// file, and an exchange log that reads none: `ProxyConfiguration.exchangeLogReadsDigests`):
    /// heads and bodies are then not hashed at all, and their records carry
    /// `HeadDigest(untaken:)` and a body's length with `SHA256Digest.untaken`.
    /// Relayed streams (tunnels) and redacted secrets are digested either way.
    public var takesDigests: Bool { storage.takesDigests }

    /// What heads and bodies are digested with: `digests`, or nil when
    /// `takesDigests` is false.
    public var contentDigests: DigestFunction? { storage.takesDigests ? storage.redaction.digests : nil }

    public init(tap: String, redaction: RedactionPolicy = RedactionPolicy(), bodyStoreLimit: Int = 0,
                clock: @escaping @Sendable () -> Timestamp = { .now() }, takesDigests: Bool = true) {
        storage = Storage(tap: tap, redaction: redaction, bodyStoreLimit: max(0, bodyStoreLimit), clock: clock,
                          takesDigests: takesDigests)
    }
}
