import Dispatch

/// A one-shot timer on an event loop (a `DispatchSourceTimer`), from
/// `EventLoop.schedule(after:_:)`.
///
/// The source keeps itself alive until it fires or is cancelled, so dropping
/// the `LoopTimer` does not stop it; call `cancel()` for that.
///
/// `@unchecked Sendable`: the only stored state is an immutable reference to
/// the source, and `DispatchSource.cancel()` is safe from any thread.
public final class LoopTimer: @unchecked Sendable {
    private let source: DispatchSourceTimer

    init(on loop: EventLoop, after delay: Duration, _ work: @escaping @Sendable () -> Void) {
        let source = DispatchSource.makeTimerSource(queue: loop.queue)
        source.schedule(deadline: .now() + delay.dispatchInterval, leeway: .milliseconds(1))
        // The handler holds the source (a cycle) until it fires or is cancelled;
        // Dispatch frees the handler on cancellation, which breaks the cycle.
        source.setEventHandler { [source] in
            guard !source.isCancelled else { return }
            source.cancel()
            loop.runTurn(work)
        }
        self.source = source
        source.activate()
    }

    /// Stops the timer. Called on the loop before it fired, the work never runs;
    /// from another thread it may race with a firing that has already begun.
    /// Idempotent.
    public func cancel() {
        source.cancel()
    }
}
