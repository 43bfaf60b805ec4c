import Dispatch
import Foundation
import Glibc
import Synchronization

/// Ends every browser this process started when the process is told to stop
/// (SIGINT, SIGTERM, SIGHUP): Chromium leads a process group of its own, so
/// a Ctrl-C or `kill` that ends Intact would otherwise leave it running,
/// and its profile (the CA trust, a client certificate's private key) on disk.
///
/// While at least one browser is registered the three signals are watched
/// (their default action off); on one, every registered group gets SIGKILL,
/// every registered profile is removed, the signals' earlier dispositions
/// come back, and a signal whose earlier disposition was the default is
/// raised again, so the process ends as it would have. A disposition someone
/// else installed (another watcher) is left to act. When the last browser
/// is unregistered the earlier dispositions come back.
///
/// Thread-safe: the registry is behind a mutex; the handler runs on a queue of its own.
final class ChromiumCleanup: Sendable {
    static let shared = ChromiumCleanup()
    static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    private struct Entry {
        var profile: String
        var group: pid_t?
    }

    private struct Registry: ~Copyable {
        var entries: [Int: Entry] = [:]
        var next = 0
        var watch: Watch?
    }

    /// The signal sources and each signal's disposition before them.
    private final class Watch: @unchecked Sendable {
        // @unchecked Sendable: set once in init; touched again only under the registry's mutex.
        let sources: [DispatchSourceSignal]
        let previous: [Int32: __sighandler_t?]

        init(handler: @escaping @Sendable (Int32) -> Void) {
            let queue = DispatchQueue(label: "intact.chromium.cleanup")
            var previous: [Int32: __sighandler_t?] = [:]
            sources = ChromiumCleanup.signals.map { number in
                previous[number] = signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler { handler(number) }
                source.resume()
                return source
            }
            self.previous = previous
        }

        func restore() {
            for source in sources { source.cancel() }
            for (number, handler) in previous { signal(number, handler) }
        }
    }

    private let registry = Mutex(Registry())

    /// Registers a profile directory (before its browser starts); the token names it later.
    func register(profile: String) -> Int {
        registry.withLock { registry in
            registry.next += 1
            registry.entries[registry.next] = Entry(profile: profile)
            if registry.watch == nil {
                registry.watch = Watch { [self] number in self.stopEverything(signal: number) }
            }
            return registry.next
        }
    }

    /// The process group of the browser using `token`'s profile, once started.
    func attach(_ token: Int, group: pid_t) {
        registry.withLock { $0.entries[token]?.group = group }
    }

    /// The browser ended (the driver killed its group): removes the profile
    /// unless a stop signal's cleanup already did. Under the registry's lock,
    /// so the two never remove one profile at once, and a run that ends
    /// because the signal's cleanup killed its browser waits for that cleanup.
    func unregister(_ token: Int, removing profile: ChromiumProfile) {
        registry.withLock { registry in
            guard registry.entries.removeValue(forKey: token) != nil else { return }
            profile.remove()
            if registry.entries.isEmpty, let watch = registry.watch {
                watch.restore()
                registry.watch = nil
            }
        }
    }

    private func stopEverything(signal number: Int32) {
        let watch = registry.withLock { registry in
            for entry in registry.entries.values {
                if let group = entry.group { _ = kill(-group, SIGKILL) }
                try? FileManager.default.removeItem(atPath: entry.profile)
            }
            registry.entries = [:]
            defer { registry.watch = nil }
            return registry.watch
        }
        guard let watch else { return }
        watch.restore()
        if let earlier = watch.previous[number], earlier.map({ unsafeBitCast($0, to: Int.self) }) ?? 0 == 0 {
            // The default action was to end the process: end it, as the signal would have (the
            // signal itself, unblocked and at its default; should a handler still catch it, the status a shell shows for it).
            signal(number, SIG_DFL)
            var unblock = sigset_t()
            sigemptyset(&unblock)
            sigaddset(&unblock, number)
            pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
            raise(number)
            _exit(128 + number)
        }
    }
}
