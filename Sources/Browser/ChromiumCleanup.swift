import Foundation
import Glibc
import Synchronization

/// Ends every browser this process started when the process is told to stop
/// (SIGINT, SIGTERM, SIGHUP): Chromium leads a process group of its own, so
/// a Ctrl-C or `kill` that ends Intact would otherwise leave it running,
/// and its profile (the CA trust, a client certificate's private key) on disk.
///
/// While at least one browser is registered the three signals go to a
/// handler of its own, which only writes the signal's number to a pipe (all
/// a signal handler may safely do); a thread reading the pipe then, under
/// the registry's lock, sends SIGKILL to every registered group, removes
/// every registered profile, puts back the dispositions the signals had
/// before and raises the signal again: with the default disposition the
/// process ends as the signal would have ended it, an ignored signal stays
/// ignored, and another watcher's handler gets it. When the last browser is
/// unregistered the earlier dispositions come back.
///
/// Thread-safe: the registry is behind a mutex. Not a dispatch signal
/// source: libdispatch keeps its own handler and blocked masks after a source
/// is cancelled, so dispositions could not be handed back reliably.
final class ChromiumCleanup: Sendable {
    static let shared = ChromiumCleanup()
    static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    private struct Entry {
        var profile: ChromiumProfile
        var group: pid_t?
    }

    private struct Registry: ~Copyable {
        var entries: [Int: Entry] = [:]
        var next = 0
        /// Each watched signal's disposition before ours; empty while none is watched.
        var previous: [Int32: __sighandler_t?] = [:]
        var readerStarted = false
    }

    private let registry = Mutex(Registry())

    /// Registers a profile (before its browser starts); the token names it later.
    func register(profile: ChromiumProfile) -> Int {
        registry.withLock { registry in
            registry.next += 1
            registry.entries[registry.next] = Entry(profile: profile)
            if registry.previous.isEmpty { install(&registry) }
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
            if registry.entries.isEmpty { ChromiumCleanup.restore(&registry) }
        }
    }

    /// Points the signals at `notifyCleanup` (keeping their earlier dispositions) and
    /// starts the pipe's reader once per process. Called with the lock held.
    private func install(_ registry: inout Registry) {
        if !registry.readerStarted {
            var ends: [Int32] = [0, 0]
            guard pipe(&ends) == 0 else { return } // No pipe: browsers are still cleaned up on every other path.
            for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) } // Never inherited by a child (Chromium, certutil).
            cleanupPipeWrite = ends[1]
            let read = ends[0]
            let thread = Thread { [self] in
                var byte: UInt8 = 0
                while true {
                    let count = Glibc.read(read, &byte, 1)
                    if count == 1 { stopEverything(signal: Int32(byte)) } else if count < 0 && errno == EINTR { continue } else { return }
                }
            }
            thread.name = "intact.chromium.cleanup"
            thread.start()
            registry.readerStarted = true
        }
        for number in ChromiumCleanup.signals {
            registry.previous[number] = signal(number, notifyCleanup)
        }
    }

    private static func restore(_ registry: inout Registry) {
        for (number, handler) in registry.previous { signal(number, handler) }
        registry.previous = [:]
    }

    private func stopEverything(signal number: Int32) {
        let wasDefault = registry.withLock { registry -> Bool? in
            guard let earlier = registry.previous[number] else { return nil } // Not watched (any more): nothing of ours runs.
            for entry in registry.entries.values {
                if let group = entry.group { _ = kill(-group, SIGKILL) }
                entry.profile.remove()
            }
            registry.entries = [:]
            ChromiumCleanup.restore(&registry)
            return earlier.map { unsafeBitCast($0, to: Int.self) } ?? 0 == 0
        }
        guard let wasDefault else { return }
        // The signal again, now to its earlier disposition: the default ends the process.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        sigaddset(&unblock, number)
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        raise(number)
        if wasDefault { _exit(128 + number) }
    }
}

/// The write end of `ChromiumCleanup`'s pipe; set once, before any handler points here.
nonisolated(unsafe) private var cleanupPipeWrite: Int32 = -1

/// The signal handler: hands the signal's number to `ChromiumCleanup`'s reader (async-signal-safe).
private func notifyCleanup(_ number: Int32) {
    var byte = UInt8(truncatingIfNeeded: number)
    _ = write(cleanupPipeWrite, &byte, 1)
}
