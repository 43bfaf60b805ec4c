import Codecs
import HTTP

/// Recording lines one producer (an event loop) encodes for a
/// `RecordingWriter`, gathered in one buffer of its own and handed to the
/// writer a batch at a time (`RecordingWriter.offer(_:)`).
///
/// Encoding into a buffer kept from batch to batch allocates nothing per
/// record, and the writer's lock is taken once per batch
/// (Docs/performance.md#recording-batches).
///
/// Invariants: the buffer holds whole lines only (each `add` writes one
/// line, `\n` included), and `records` is the number of lines in it. Owned
/// by one producer and used from one thread at a time: not shared.
public struct RecordingBatch: ~Copyable {
    private var lines: JSONWriter
    /// The lines in the batch.
    public private(set) var records = 0

    /// A buffer that grew past this (a record with big recorded bodies) is
    /// given back once its batch is handed over.
    static let keptCapacity = 256 * 1024

    public init() {
        lines = JSONWriter(capacity: 64 * 1024)
    }

    /// The bytes in the batch.
    public var byteCount: Int { lines.count }
    public var isEmpty: Bool { records == 0 }

    /// Encodes `record` as one line at the end of the batch.
    public mutating func add(_ record: ExchangeRecord) {
        record.writeLine(to: &lines)
        records += 1
    }

    /// Lends the batch's bytes (whole lines) to `body`.
    func withBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        lines.withUnsafeBytes(body)
    }

    /// Empties the batch after it was handed over, keeping a buffer of
    /// ordinary size for the next one. (The buffer doubles only when a batch
    /// outgrows it, so a buffer bigger than `keptCapacity` always comes with
    /// a batch bigger than that: checking the count suffices.)
    mutating func removeAll() {
        if lines.count > RecordingBatch.keptCapacity {
            lines = JSONWriter(capacity: 64 * 1024)
        } else {
            lines.removeAll()
        }
        records = 0
    }
}
