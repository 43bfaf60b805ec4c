import Glibc

/// Decides which part of a file written front to back to give back to the
/// page cache (`POSIX_FADV_DONTNEED`) as it grows, one `window` at a time.
///
/// Each time the file has grown by a window since the last advice, the
/// advice covers everything not yet given back: the window before the new
/// one (whose writeback the previous advice started, so its pages are clean
/// by now and are dropped) and the new window (Linux starts its writeback).
/// Invariants: `released <= writebackStarted <= ` the length last seen, and
/// successive ranges neither overlap nor leave a gap. No I/O: the caller
/// advises.
struct PageCacheRelease {
    let window: off_t
    /// The end of the bytes whose writeback the last advice started.
    private(set) var writebackStarted: off_t = 0
    /// The end of the bytes given back (their advice came a window ago).
    private(set) var released: off_t = 0

    init(window: off_t) {
        self.window = max(window, 1)
    }

    /// The range to advise now that the file is `length` bytes long, if any.
    mutating func advance(to length: off_t) -> Range<off_t>? {
        guard length - writebackStarted >= window else { return nil }
        let range = released..<length
        released = writebackStarted
        writebackStarted = length
        return range
    }
}
