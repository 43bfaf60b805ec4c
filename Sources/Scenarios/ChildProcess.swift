import Glibc
import Synchronization

/// How a child process ended.
public enum ProcessTermination: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// It called `exit` with this status.
    case exited(Int32)
    /// A signal ended it.
    case signalled(Int32)

    public var description: String {
        switch self {
        case let .exited(status): return "exited with status \(status)"
        case let .signalled(signal): return "was killed by signal \(signal)"
        }
    }

    /// Decodes a `waitpid` status word.
    init(waitStatus status: Int32) {
        let signal = status & 0x7f
        self = signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
    }
}

/// A process the runner started with `posix_spawn` and owns by its PID:
/// nothing else signals or reaps it. Standard input is `/dev/null`; standard
/// output and error go to files. The child runs in its own process group, so
/// a Ctrl-C at the terminal reaches the runner, which then stops its
/// children in order; signal dispositions and the signal mask are reset.
///
/// A child still running when the object is released is killed (SIGKILL)
/// and reaped, so a runner that throws half-way leaves nothing behind.
/// Safe to use from any thread: the state is behind a mutex.
public final class ChildProcess: Sendable {
    /// The state of the child: running until `waitpid` reaps it.
    private enum State {
        case running
        case ended(ProcessTermination)
    }

    public let pid: pid_t
    /// What was started, for messages.
    public let command: ProcessCommand
    private let state = Mutex(State.running)

    private init(pid: pid_t, command: ProcessCommand) {
        self.pid = pid
        self.command = command
    }

    deinit {
        if termination == nil {
            killGroup()
            _ = reap(blocking: true)
        }
    }

    /// Starts `command`, its standard output to `outputFile` and its standard
    /// error to `errorFile` (both truncated; the same path for both merges
    /// them in one file), its environment the runner's plus `command.environment`.
    ///
    /// When `command.inheritsListener`, `listener` (a listening socket the
    /// caller reserved) appears in the child at
    /// `ProcessCommand.listenerDescriptor`, without close-on-exec; the
    /// caller's descriptor stays open and the caller's to close. Every other
    /// descriptor of the runner is close-on-exec and does not reach the child.
    public static func spawn(_ command: ProcessCommand, outputFile: String, errorFile: String,
                             listener: Int32? = nil) throws(ScenarioError) -> ChildProcess {
        precondition(command.inheritsListener == (listener != nil),
                     "\(command.role) takes a listening socket exactly when it inherits one")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let writeFlags = O_WRONLY | O_CREAT | O_TRUNC
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, outputFile, writeFlags, 0o644)
        if errorFile == outputFile {
            posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO)
        } else {
            posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, errorFile, writeFlags, 0o644)
        }
        // dup2 onto the target clears close-on-exec there; a copy numbered
        // above the target makes source and target differ even when the
        // caller's descriptor happens to be 3 (dup2 of a descriptor onto
        // itself keeps the flag on older C libraries).
        var handedCopy: Int32?
        defer { handedCopy.map { _ = close($0) } }
        if let listener {
            let target = ProcessCommand.listenerDescriptor
            let copy = fcntl(listener, F_DUPFD_CLOEXEC, target + 1)
            guard copy >= 0 else {
                throw .spawnFailed(executable: command.executable,
                                   reason: "cannot hand over listening socket \(listener): \(String(cString: strerror(errno)))")
            }
            handedCopy = copy
            posix_spawn_file_actions_adddup2(&actions, copy, target)
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD] { sigaddset(&defaults, signal) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP))

        let argumentVector = ([command.executable] + command.arguments).map { strdup($0) }
        defer { argumentVector.forEach { free($0) } }
        let environmentVector = environment(adding: command.environment).map { strdup($0) }
        defer { environmentVector.forEach { free($0) } }
        var pid: pid_t = 0
        let result = (argumentVector + [nil]).withUnsafeBufferPointer { argv in
            (environmentVector + [nil]).withUnsafeBufferPointer { envp in
                posix_spawn(&pid, command.executable, &actions, &attributes, argv.baseAddress!, envp.baseAddress!)
            }
        }
        guard result == 0 else {
            throw .spawnFailed(executable: command.executable, reason: String(cString: strerror(result)))
        }
        return ChildProcess(pid: pid, command: command)
    }

    /// The runner's environment (`NAME=value` entries) with `additions` set over it.
    private static func environment(adding additions: [String: String]) -> [String] {
        var entries: [String] = []
        var cursor = environ
        while let entry = cursor.pointee {
            let text = String(cString: entry)
            let name = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? text
            if additions[name] == nil { entries.append(text) }
            cursor += 1
        }
        return entries + additions.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
    }

    /// How the child ended, or `nil` while it runs. Reaps it when it just ended.
    public var termination: ProcessTermination? {
        reap(blocking: false)
    }

    /// Waits for the child to end, at most `timeout` seconds (`nil`: no
    /// limit); `nil` when it still runs. Polls, so that a stuck child never
    /// blocks the caller past the limit.
    public func wait(timeout: Double?) -> ProcessTermination? {
        guard let timeout else { return reap(blocking: true) }
        let deadline = Clock.now + timeout
        var pause = 0.002
        while true {
            if let ended = reap(blocking: false) { return ended }
            if Clock.now >= deadline { return nil }
            Clock.sleep(min(pause, max(0, deadline - Clock.now)))
            pause = min(pause * 2, 0.025)
        }
    }

    /// Asks the child to stop (SIGTERM), gives it `grace` seconds to exit,
    /// then kills it (SIGKILL). Returns how it ended. Does nothing to a child
    /// that already ended.
    @discardableResult
    public func stop(grace: Double) -> ProcessTermination {
        if let ended = termination { return ended }
        kill(pid, SIGTERM)
        if let ended = wait(timeout: grace) { return ended }
        killGroup()
        return reap(blocking: true) ?? .signalled(SIGKILL)
    }

    /// SIGKILL to the child's process group (it leads one of its own), so
    /// the processes it started (nginx's worker) go with it.
    private func killGroup() {
        if kill(-pid, SIGKILL) != 0 { kill(pid, SIGKILL) }
    }

    /// `waitpid` on this PID only, under the lock so one reap records the status.
    private func reap(blocking: Bool) -> ProcessTermination? {
        state.withLock { state in
            if case let .ended(termination) = state { return termination }
            var status: Int32 = 0
            while true {
                let reaped = waitpid(pid, &status, blocking ? 0 : WNOHANG)
                if reaped == pid {
                    let ended = ProcessTermination(waitStatus: status)
                    state = .ended(ended)
                    return ended
                }
                if reaped == -1 && errno == EINTR { continue }
                if reaped == -1 {
                    // ECHILD: someone else reaped it; it has ended, status unknown.
                    let ended = ProcessTermination.exited(-1)
                    state = .ended(ended)
                    return ended
                }
                return nil
            }
        }
    }
}

/// Monotonic seconds and sleeping, for polling loops (never for asserting timings).
enum Clock {
    static var now: Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    static func sleep(_ seconds: Double) {
        guard seconds > 0 else { return }
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
        var remaining = timespec()
        while nanosleep(&request, &remaining) == -1 && errno == EINTR { request = remaining }
    }
}
