import Dispatch
import Synchronization

/// A one-shot timer on an event loop, from `EventLoop.schedule(after:_:)`.
///
/// The loop keeps its pending timers in one `DeadlineHeap` behind one
/// Dispatch timer source (see `EventLoop`'s "Timers"), so a timer costs a
/// small object, not a Dispatch source of its own per connection.
///
/// The loop keeps the timer alive until it fires or is cancelled, so
/// dropping the `LoopTimer` does not stop it; call `cancel()` for that.
///
/// States: pending (in the loop's heap, or on its way there when scheduled
/// from another thread), then fired or cancelled, for good. `work` is
/// dropped with the pending state, and with it whatever it captured.
///
/// `@unchecked Sendable`: `work` and `heapIndex` are touched only on the
/// loop; `cancelled` is atomic, so `cancel()` is safe from any thread.
public final class LoopTimer: @unchecked Sendable, DeadlineHeapElement {
    private let loop: EventLoop
    /// When the timer is due, in nanoseconds of the loop's clock
    /// (`EventLoop.uptimeNanoseconds`). Fixed when the timer is made.
    let deadline: UInt64
    /// What the timer runs; nil once it fired or was cancelled. Touched only on the loop.
    private var work: (@Sendable () -> Void)?
    /// Set by `cancel()`, from any thread: the work must not start any more.
    private let cancelled = Atomic<Bool>(false)
    /// The timer's place in the loop's heap. Touched only on the loop (by the heap).
    var heapIndex: Int?

    init(on loop: EventLoop, after delay: Duration, _ work: @escaping @Sendable () -> Void) {
        self.loop = loop
        self.deadline = delay.deadline(after: loop.uptimeNanoseconds)
        self.work = work
        if loop.isOnLoop {
            loop.addTimer(self)
        } else {
            // The heap is the loop's: join it there (the deadline is already fixed).
            loop.executeAfterOthers { [self] in
                guard !isCancelled else { return self.work = nil }
                loop.addTimer(self)
            }
        }
    }

    /// Stops the timer. Called on the loop before it fired, the work never
    /// runs and is released at once; from another thread the work does not
    /// start after this returns (one already running goes on) and is
    /// released on the loop soon after. Idempotent.
    public func cancel() {
        guard cancelled.exchange(true, ordering: .acquiringAndReleasing) == false else { return }
        if loop.isOnLoop {
            removeFromLoop()
        } else {
            loop.executeAfterOthers { [self] in removeFromLoop() }
        }
    }

    /// True once `cancel()` was called, on any thread.
    var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    /// Takes the cancelled timer out of the loop's heap and drops its work. Called only on the loop.
    private func removeFromLoop() {
        loop.removeTimer(self)
        work = nil
    }

    /// Runs the work, once, unless the timer was cancelled. Called only on the
    /// loop, by the loop, after it took the timer out of its heap.
    func fire() {
        guard let work else { return }
        self.work = nil
        guard !isCancelled else { return }
        work()
    }
}
