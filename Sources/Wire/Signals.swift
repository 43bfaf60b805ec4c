import Glibc

/// Process-wide signal set-up that every I/O-doing entry point runs once.
public enum Signals {
    /// Ignores SIGPIPE so a write to a closed socket returns `EPIPE` instead of
    /// killing the process. Idempotent.
    public static func ignoreSIGPIPE() {
        signal(SIGPIPE, SIG_IGN)
    }
}
