import Evidence
import Hashing

/// How the proxy records exchanges: under which tap name, what it keeps in
/// clear, how much of each body it stores, and the clock its timings read.
public struct RecordingSettings: Sendable {
    /// The tap name every record carries.
    public var tap: String
    /// Which field values stay in clear.
    public var redaction: RedactionPolicy
    /// The most bytes of each body stored in the record; 0 stores none.
    public var bodyStoreLimit: Int
    /// The wall clock of the timings; tests pass a fixed one.
    public var clock: @Sendable () -> Timestamp

    /// What every message, body and relayed stream is digested with: the
    /// redaction's digest key (`RedactionPolicy.digests`).
    public var digests: DigestFunction { redaction.digests }

    public init(tap: String, redaction: RedactionPolicy = RedactionPolicy(), bodyStoreLimit: Int = 0,
                clock: @escaping @Sendable () -> Timestamp = { .now() }) {
        self.tap = tap
        self.redaction = redaction
        self.bodyStoreLimit = max(0, bodyStoreLimit)
        self.clock = clock
    }
}
