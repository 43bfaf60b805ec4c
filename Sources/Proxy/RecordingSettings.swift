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

        init(tap: String, redaction: RedactionPolicy, bodyStoreLimit: Int, clock: @escaping @Sendable () -> Timestamp) {
            self.tap = tap
            self.redaction = redaction
            self.bodyStoreLimit = bodyStoreLimit
            self.clock = clock
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

    public init(tap: String, redaction: RedactionPolicy = RedactionPolicy(), bodyStoreLimit: Int = 0,
                clock: @escaping @Sendable () -> Timestamp = { .now() }) {
        storage = Storage(tap: tap, redaction: redaction, bodyStoreLimit: max(0, bodyStoreLimit), clock: clock)
    }
}
