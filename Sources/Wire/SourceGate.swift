import Dispatch

/// Suspend/resume/cancel bookkeeping for one `DispatchSource`, so that the
/// calls Dispatch crashes on cannot happen.
///
/// Dispatch traps when a source is resumed more often than it was suspended,
/// and when the last reference to a suspended or never-activated source is
/// released; a suspended source's cancel handler never runs. The gate keeps
/// the real state of its source, makes `resume()` and `suspend()` idempotent,
/// and `cancel()` always leaves the source running-and-cancelled so its cancel
/// handler runs and it may be released.
///
/// Loop-confined: every method is called only on the queue the source targets.
final class SourceGate {
    private enum State {
        /// Created, never activated (Dispatch starts sources inactive).
        case inactive
        case running
        case suspended
        case cancelled
    }

    private let source: DispatchSourceProtocol
    private var state = State.inactive

    /// Wraps a freshly made, inactive source whose handlers are already set.
    init(_ source: DispatchSourceProtocol) {
        self.source = source
    }

    /// True while events are let through.
    var isRunning: Bool {
        if case .running = state { return true }
        return false
    }

    /// Lets events through. No-op when running or cancelled.
    func resume() {
        switch state {
        case .inactive: source.activate()
        case .suspended: source.resume()
        case .running, .cancelled: return
        }
        state = .running
    }

    /// Holds events back. No-op unless running.
    func suspend() {
        guard case .running = state else { return }
        source.suspend()
        state = .suspended
    }

    /// Cancels the source and makes sure its cancel handler will run. Idempotent.
    func cancel() {
        switch state {
        case .cancelled:
            return
        case .running:
            source.cancel()
        case .suspended:
            source.cancel()
            source.resume()
        case .inactive:
            source.cancel()
            source.activate()
        }
        state = .cancelled
    }

    deinit {
        assert(state == .cancelled || state == .running, "released a suspended or inactive dispatch source")
    }
}
