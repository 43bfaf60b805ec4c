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

    /// Queues the record for the file and logs it, never waiting (the
    /// record is queued even when the queue is full). When the writer has
    /// no room left, the loop that produced the record stops reading its
    /// client connections until it has (`LoopState.holdReading`): a disk
    /// that cannot keep up slows the clients through TCP instead of
    /// blocking the loop or growing memory. Called only on `state`'s loop.
    func record(_ record: ExchangeRecord, on state: LoopState) {
        if let writer, !writer.offer(record) { state.holdReading(until: writer) }
        log?(record)
    }
}
