import Foundation
import Glibc
import Synchronization

/// A Chromium started with `--remote-debugging-pipe`: it reads DevTools
/// commands on its descriptor 3 and writes answers and events on its
/// descriptor 4, each message NUL-terminated (`CDPFramer`). The process
/// driver beside the sans-io `BrowserSignIn`: it spawns, writes, reads on a
/// thread of its own, and kills.
///
/// The browser leads a process group of its own (`/usr/bin/chromium` is a
/// shell script that execs the binary, which starts zygotes, renderers and
/// a GPU/network service): `kill()` sends SIGKILL to the whole group and
/// reaps the leader, so nothing is left behind. Standard input is
/// `/dev/null`; standard output and error go to `logPath`. Every other
/// descriptor of this process is close-on-exec and does not reach it.
///
/// Thread-safe: the pid and descriptors are immutable after `start`; the
/// ended state is behind a mutex.
public final class ChromiumProcess: Sendable {
    /// What the reader reports, in order, on the queue given to `start`.
    public enum Output: Sendable {
        case message(CDPMessage)
        /// Bytes that are not a DevTools message; the pipe is no longer trusted.
        case protocolError(String)
        /// The pipe closed: the browser exited or crashed. `termination`
        /// says how, when it had already ended.
        case closed(termination: String?)
    }

    public let pid: pid_t
    private let commands: Int32
    private let events: Int32
    private let ended = Mutex<String?>(nil)

    private init(pid: pid_t, commands: Int32, events: Int32) {
        self.pid = pid
        self.commands = commands
        self.events = events
    }

    deinit {
        kill()
        Glibc.close(commands)
        Glibc.close(events)
    }

    /// Spawns `executable` with `arguments` (argv[1...]) and exactly
    /// `environment`, its DevTools pipe on descriptors 3 and 4, its output
    /// to `logPath`.
    public static func start(executable: String, arguments: [String], environment: [String: String],
                             logPath: String) throws(BrowserLaunchError) -> ChromiumProcess {
        // Ours: write end of the command pipe, read end of the event pipe. Theirs: the others.
        let commandPipe = try pipePair()
        let eventPipe: (read: Int32, write: Int32)
        do {
            eventPipe = try pipePair()
        } catch {
            Glibc.close(commandPipe.read)
            Glibc.close(commandPipe.write)
            throw error
        }
        defer {
            Glibc.close(commandPipe.read)
            Glibc.close(eventPipe.write)
        }
        // A write to a browser that died must fail, not end this process (as Wire's loops also set).
        signal(SIGPIPE, SIG_IGN)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Both pipe ends sit at 10 or above (`pipePair`), so dup2 onto 3 and 4 never meets itself.
        posix_spawn_file_actions_adddup2(&actions, commandPipe.read, 3)
        posix_spawn_file_actions_adddup2(&actions, eventPipe.write, 4)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var everySignal = sigset_t()
        sigfillset(&everySignal)
        var noSignal = sigset_t()
        sigemptyset(&noSignal)
        posix_spawnattr_setsigdefault(&attributes, &everySignal)
        posix_spawnattr_setsigmask(&attributes, &noSignal)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard status == 0 else {
            Glibc.close(commandPipe.write)
            Glibc.close(eventPipe.read)
            throw .spawnFailed(executable, String(cString: strerror(status)))
        }
        return ChromiumProcess(pid: pid, commands: commandPipe.write, events: eventPipe.read)
    }

    /// A pipe with both ends moved to 10 or above, close-on-exec (the
    /// originals, open for an instant without the flag, are closed at once).
    private static func pipePair() throws(BrowserLaunchError) -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw .spawnFailed("pipe", String(cString: strerror(errno))) }
        var moved: [Int32] = []
        for end in ends {
            let high = fcntl(end, F_DUPFD_CLOEXEC, 10)
            Glibc.close(end)
            guard high >= 0 else {
                moved.forEach { _ = Glibc.close($0) }
                throw .spawnFailed("pipe", String(cString: strerror(errno)))
            }
            moved.append(high)
        }
        return (moved[0], moved[1])
    }

    /// Reads the event pipe on a thread of its own until it closes, framing
    /// and parsing, and calls `handler` on `queue` with each output, in
    /// order; `.closed` (or `.protocolError`) comes last. Call once.
    public func startReading(limit: Int = CDPFramer.defaultLimit, on queue: DispatchQueue,
                             _ handler: @escaping @Sendable (Output) -> Void) {
        let descriptor = events
        let thread = Thread { [self] in
            var framer = CDPFramer(limit: limit)
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 {
                    let termination = self.waitBriefly()
                    queue.async { handler(.closed(termination: termination)) }
                    return
                }
                framer.append(chunk[0..<count])
                do throws(CDPFramer.Failure) {
                    while let bytes = try framer.next() {
                        do throws(CDPProtocolError) {
                            let message = try CDPMessage.parse(bytes)
                            queue.async { handler(.message(message)) }
                        } catch {
                            queue.async { handler(.protocolError(error.description)) }
                            return
                        }
                    }
                } catch {
                    queue.async { handler(.protocolError(error.description)) }
                    return
                }
            }
        }
        thread.name = "intact.chromium.reader"
        thread.start()
    }

    /// Writes one command; false when the pipe is closed (the browser is
    /// gone: `start` ignored SIGPIPE, so the write fails with EPIPE).
    @discardableResult
    public func send(_ command: CDPCommand) -> Bool {
        let bytes = CDPFramer.frame(command.encoded)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(commands, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    /// How the browser ended, nil while it runs (reaps it when it just ended).
    public var termination: String? {
        reap(blocking: false)
    }

    /// SIGKILL to the browser's process group, then reaps the leader. Safe
    /// to call more than once and after the browser ended by itself.
    public func kill() {
        if reap(blocking: false) == nil {
            if Glibc.kill(-pid, SIGKILL) != 0 { Glibc.kill(pid, SIGKILL) }
        } else {
            // The leader is gone; its children may not be.
            _ = Glibc.kill(-pid, SIGKILL)
        }
        _ = reap(blocking: true)
    }

    /// After the pipe closed the leader is usually gone or about to be: a
    /// short look (up to 200 ms) for how it ended.
    private func waitBriefly() -> String? {
        for _ in 0..<20 {
            if let ended = reap(blocking: false) { return ended }
            usleep(10_000)
        }
        return nil
    }

    private func reap(blocking: Bool) -> String? {
        ended.withLock { ended in
            if let ended { return ended }
            var status: Int32 = 0
            while true {
                let reaped = waitpid(pid, &status, blocking ? 0 : WNOHANG)
                if reaped == pid {
                    let signal = status & 0x7f
                    ended = signal == 0 ? "exited with status \((status >> 8) & 0xff)" : "was killed by signal \(signal)"
                    return ended
                }
                if reaped == -1 && errno == EINTR { continue }
                if reaped == -1 {
                    ended = "ended (reaped elsewhere)"
                    return ended
                }
                return nil
            }
        }
    }
}

/// Why Chromium could not be started.
public enum BrowserLaunchError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No Chromium: the message names the package.
    case notInstalled(String)
    /// A tool to prepare its profile is missing (certutil, pk12util).
    case toolMissing(tool: String, package: String)
    case profile(String)
    case spawnFailed(String, String)

    public var description: String {
        switch self {
        case .notInstalled(let detail): return detail
        case .toolMissing(let tool, let package):
            return "\(tool) is not installed: install the Debian package \(package) (apt-get install \(package))"
        case .profile(let reason): return "cannot prepare the browser profile: \(reason)"
        case .spawnFailed(let executable, let reason): return "cannot start \(executable): \(reason)"
        }
    }
}
