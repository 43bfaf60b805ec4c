import Dispatch
import Synchronization

/// Judges the batches of a streamed verification on a queue of its own,
/// one batch after the other in the order submitted, while the caller
/// reads and pairs on: the two halves of the work run on two cores.
///
/// Ownership: `tally` and the sink's `judged` calls belong to the judging
/// queue (never touched elsewhere until `finish()`, which waits for it);
/// `counts` is the one value read across threads, under its lock. At most
/// two batches wait to be judged: `submit` blocks the reader beyond that,
/// so memory stays bounded when judging is the slower half.
final class BatchJudge: @unchecked Sendable {
    /// Exchanges judged and failing so far, for progress lines.
    struct Counts: Sendable {
        var exchanges = 0
        var failing = 0
    }

    private let verifier: Verifier
    private let path: TapPath
    private let sink: VerificationSink?
    private var tally: VerificationTally
    private let queue = DispatchQueue(label: "intact.verify.judge")
    private let slots = DispatchSemaphore(value: 2)
    private let shared = Mutex(Counts())

    init(verifier: Verifier, path: TapPath, sink: VerificationSink?, tally: VerificationTally) {
        self.verifier = verifier
        self.path = path
        self.sink = sink
        self.tally = tally
    }

    var counts: Counts { shared.withLock { $0 } }

    /// Judges `batch` after those submitted before it.
    func submit(_ batch: ExchangeBatch) {
        slots.wait()
        queue.async { [self] in
            let judged = verifier.judge(batch.chains, in: TapPath(path, records: batch.records), firstNumber: tally.exchanges + 1)
            tally.add(judged, hops: path.hops.count)
            shared.withLock { $0 = Counts(exchanges: tally.exchanges, failing: tally.failingTotal) }
            sink?.judged(judged.exchanges, path: path.verifiedPath)
            slots.signal()
        }
    }

    /// Waits until every batch submitted has been judged.
    func wait() {
        queue.sync {}
    }

    /// The tally of every batch, once all are judged.
    func finish() -> VerificationTally {
        queue.sync { tally }
    }
}
