import Evidence
import Synchronization

/// A tap's recording: where the mock server or the client simulator writes
/// its view of every exchange, as any tap does (`VERIFY.md`). One Evidence
/// recording (header line, then one `ExchangeRecord` per exchange), so
/// `intact verify` pairs it with a proxy's by the `Intact-Trace` id.
///
/// Safe to use from any thread: the writer queues records on its own queue,
/// and the exchange counter is behind a mutex.
public final class TapRecorder: Sendable {
    /// What the recording keeps and how it names itself.
    public struct Settings: Sendable {
        /// The tap's name in the header and in every record (`server`, `client`).
        public var tap: String
        /// What the tap's values mean: what was received, what was sent.
        public var role: ExchangeRecord.Leg.Role
        /// Which field values are kept in clear.
        public var redaction: RedactionPolicy
        /// Body bytes kept per message; 0 keeps digests only (the default).
        public var bodyStoreLimit: Int

        public init(tap: String, role: ExchangeRecord.Leg.Role, redaction: RedactionPolicy = RedactionPolicy(),
                    bodyStoreLimit: Int = 0) {
            self.tap = tap
            self.role = role
            self.redaction = redaction
            self.bodyStoreLimit = max(0, bodyStoreLimit)
        }
    }

    public let settings: Settings
    private let writer: RecordingWriter
    private let sequence = Mutex(0)

    /// The recording's path.
    public var path: String { writer.path }

    /// Creates the recording file (never overwriting one unless `replacing`)
    /// and writes its header. Blocks on disk I/O: never call on a loop queue.
    ///
    /// - Parameters:
    ///   - mode: how the tap ran (`server`, `client`), for the header.
    ///   - options: the options that shaped the run, as given, for the header.
    ///   - origin: the origin a server's recording stands for (its external URL), for the header.
    public init(path: String, settings: Settings, toolVersion: String, mode: String,
                options: [String: String] = [:], replacing: Bool = false, origin: String? = nil) throws {
        self.settings = settings
        let header = RecordingHeader(toolVersion: toolVersion, tap: settings.tap, mode: mode, options: options,
                                     redaction: settings.redaction, origin: origin)
        writer = try RecordingWriter(path: path, header: header, replacing: replacing)
    }

    /// A fresh exchange id, unique within the recording (`server-1`, `server-2`, …).
    public func nextExchangeID() -> String {
        let number = sequence.withLock { value -> Int in
            value += 1
            return value
        }
        return "\(settings.tap)-\(number)"
    }

    /// Queues one exchange record; waits only while the writer's queue is full.
    public func record(_ record: ExchangeRecord) {
        writer.append(record)
    }

    /// Writes what is queued, syncs and closes the file; the first problem
    /// seen, if any. Blocks on disk I/O: never call on a loop queue.
    public func close() -> RecordingWriteError? {
        writer.closeAndWait()
    }
}

extension TapRecorder {
    /// Records one exchange seen on one leg in this tap's role.
    ///
    /// - Parameters:
    ///   - traceID: the request's `Intact-Trace` value, the key for pairing across taps.
    ///   - step: the auth-flow step label (`AuthStep` raw value).
    ///   - request: nil when no request crossed this leg; `response` likewise.
    ///   - error: why the exchange broke, when it did.
    ///   - connection: for a connection that carried no request (a refused handshake), what happened to it.
    public func record(traceID: String?, step: String?, connectionID: String, streamID: Int? = nil,
                       tls: TLSDetails?, request: RecordedMessage?, response: RecordedMessage?,
                       error: ExchangeRecord.Failure? = nil, connection: RequestlessConnection? = nil) {
        let leg = ExchangeRecord.Leg(role: settings.role, connectionID: connectionID, streamID: streamID, tls: tls,
                                     request: request, response: response)
        record(ExchangeRecord(exchangeID: nextExchangeID(), traceID: traceID, tap: settings.tap, legs: [leg],
                              authFlowStep: step, error: error, connection: connection))
    }
}
