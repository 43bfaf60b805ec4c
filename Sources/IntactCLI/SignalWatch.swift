import Dispatch
import Glibc

/// Watches process signals on a queue of its own and calls `handler` for
/// each; the signals' default action (terminate) is turned off while it runs.
/// `@unchecked Sendable`: `sources` is set in `init` and only cancelled after.
final class SignalWatch: @unchecked Sendable {
    private let sources: [DispatchSourceSignal]
    private let signals: [Int32]

    init(signals: [Int32], handler: @escaping @Sendable () -> Void) {
        self.signals = signals
        let queue = DispatchQueue(label: "intact.signals")
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler(handler: handler)
            source.resume()
            return source
        }
    }

    /// Stops watching; a second signal then kills the process as usual.
    func cancel() {
        for source in sources { source.cancel() }
        for number in signals { signal(number, SIG_DFL) }
    }
}

/// Waiting for the user to stop a long-running command (`intact server`,
/// `intact demo --keep`) with Ctrl-C or `kill`.
enum StopSignal {
    /// Blocks the calling thread until SIGINT or SIGTERM arrives; their
    /// default actions are restored before returning, so a second Ctrl-C
    /// during shutdown ends the process. Never call on a loop queue.
    static func wait() {
        let received = DispatchSemaphore(value: 0)
        let watch = SignalWatch(signals: [SIGINT, SIGTERM]) { received.signal() }
        received.wait()
        watch.cancel()
    }
}
