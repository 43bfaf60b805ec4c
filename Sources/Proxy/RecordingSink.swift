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

    /// Queues the record for the file and logs it. Waits only while the
    /// writer's queue is full (`RecordingWriter.append`): a disk that cannot
    /// keep up slows the proxy instead of growing memory.
    func record(_ record: ExchangeRecord) {
        writer?.append(record)
        log?(record)
    }
}
