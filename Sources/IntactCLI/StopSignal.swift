import Dispatch
import Glibc

/// Waiting for the user to stop a long-running command (`intact server`)
/// with Ctrl-C or `kill`: SIGINT and SIGTERM are taken from their default
/// action (which would end the process before recordings are closed) and
/// delivered through Dispatch instead.
enum StopSignal {
    /// Blocks the calling thread until SIGINT or SIGTERM arrives. The default actions are restored before returning, so a second
    /// Ctrl-C during shutdown ends the process. Never call on a loop queue.
    static func wait() {
        let queue = DispatchQueue(label: "intact.stop-signal")
        let received = DispatchSemaphore(value: 0)
        let sources = [SIGINT, SIGTERM].map { number -> DispatchSourceSignal in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler {
                received.signal()
            }
            source.resume()
            return source
        }
        received.wait()
        for source in sources { source.cancel() }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }
}
