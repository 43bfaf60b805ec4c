import Glibc

/// Process-wide signal set-up. `EventLoop.init` runs it, so every user of
/// `Wire` has it before its first socket write.
public enum Signals {
    /// Ignores SIGPIPE so a write to a closed socket returns `EPIPE` instead of
    /// killing the process. Idempotent.
    public static func ignoreSIGPIPE() {
        signal(SIGPIPE, SIG_IGN)
    }
}
