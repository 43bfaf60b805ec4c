import Evidence

/// Where finished exchanges go: the recording file (written off the event
/// loops by `RecordingWriter`) and the per-exchange log callback.
///
/// `Sendable`: both parts are; `record` may be called from any loop.
final class RecordingSink: Sendable {
    let writer: RecordingWriter?
    let log: (@Sendable (ExchangeRecord) -> Void)?

    init(writer: RecordingWriter?, log: (@Sendable (ExchangeRecord) -> Void)?) {
        self.writer = writer
        self.log = log
    }

    /// Queues the record for the file and logs it. Never blocks.
    func record(_ record: ExchangeRecord) {
        writer?.append(record)
        log?(record)
    }
}
