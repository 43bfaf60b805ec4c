import Evidence

/// Where finished exchanges go: the recording file (written off the event
/// loops by `RecordingWriter`) and the per-exchange log callback.
///
/// Each loop encodes its records into a batch of its own
/// (`LoopState.recordingBatch`) and hands the batch to the writer when the
/// round of socket events that produced it is over (`EventLoop.executeAtEndOfRound`), or at once when it has
/// grown to `handOverBytes`: no allocation and no lock per record.
///
/// `Sendable`: both parts are; `record` may be called from any loop.
final class RecordingSink: Sendable {
    let writer: RecordingWriter?
    let log: (@Sendable (ExchangeRecord) -> Void)?

    init(writer: RecordingWriter?, log: (@Sendable (ExchangeRecord) -> Void)?) {
        self.writer = writer
        self.log = log
    }

    /// A loop's batch this big goes to the writer at once, without waiting
    /// for the end of its round of socket events.
    static let handOverBytes = 64 * 1024

    /// Queues the record for the file (in `state`'s batch) and logs it,
    /// never waiting. Called only on `state`'s loop.
    func record(_ record: ExchangeRecord, on state: LoopState) {
        if writer != nil {
            let first = state.recordingBatch.isEmpty
            state.recordingBatch.add(record)
            if state.recordingBatch.byteCount >= RecordingSink.handOverBytes {
                handOver(from: state)
            } else if first {
                // Once the round of socket events this one belongs to is over:
                // their records join the batch first.
                state.loop.executeAtEndOfRound { self.handOver(from: state) }
            }
        }
        log?(record)
    }

    /// Hands `state`'s batch to the writer, never waiting (the lines are
    /// queued even when the queue is full). When the writer has no room
    /// left, the loop stops reading its client connections until it has
    /// (`LoopState.holdReading`): a disk that cannot keep up slows the
    /// clients through TCP instead of blocking the loop or growing memory.
    /// Called only on `state`'s loop; nothing to do when the batch is empty.
    func handOver(from state: LoopState) {
        guard let writer, !state.recordingBatch.isEmpty else { return }
        if !writer.offer(&state.recordingBatch) { state.holdReading(until: writer) }
    }
}
