import Evidence
import Foundation
import Synchronization

/// The progress line of `intact verify` on standard error: shown only on a
/// terminal, only once the run has taken a second, rewritten in place
/// (`\\r`, erase to the end of the line) at most four times a second, and
/// cleared before the report writes anything. Reading: records read, bytes
/// of bytes, records per second, time left; following: a live summary
/// (exchanges judged, failing, waiting for a tap).
final class VerifyProgress: Sendable {
    private let output: OutputWriter
    private let enabled: Bool
    private let follow: Bool
    private let started = Date()
    /// Whether a progress line is on the screen.
    private let shown = Mutex(false)

    init(_ output: OutputWriter, enabled: Bool, follow: Bool) {
        self.output = output
        self.enabled = enabled
        self.follow = follow
    }

    /// Shows `progress`, when enabled and the run has taken a second.
    func show(_ progress: StreamingVerifier.Progress) {
        guard enabled else { return }
        let elapsed = Date().timeIntervalSince(started)
        guard elapsed >= 1 else { return }
        output.write("\r\u{1B}[K" + VerifyProgress.text(progress, elapsed: elapsed, follow: follow))
        shown.withLock { $0 = true }
    }

    /// Erases the progress line, if one is shown.
    func clear() {
        guard enabled, shown.withLock({ let was = $0; $0 = false; return was }) else { return }
        output.write("\r\u{1B}[K")
    }

    /// `verify: 120,000 records read, 96.1 MiB of 400.0 MiB, 40,000 records/s, 9 s left`, or while
    /// following `verify --follow: 1,200 exchanges judged, 3 failing, 5 waiting; 2,400 records read`.
    static func text(_ progress: StreamingVerifier.Progress, elapsed: Double, follow: Bool) -> String {
        let rate = Double(progress.records) / max(elapsed, 0.001)
        if follow {
            return "verify --follow: \(count(progress.exchanges)) exchanges judged, \(count(progress.failing)) failing, "
                + "\(count(progress.pending)) waiting for a tap; \(count(progress.records)) records read"
        }
        var text = "verify: \(count(progress.records)) records read, \(mebibytes(progress.bytesRead)) of "
            + "\(mebibytes(progress.bytesTotal)), \(count(Int(rate))) records/s"
        let byteRate = Double(progress.bytesRead) / max(elapsed, 0.001)
        if byteRate > 0, progress.bytesTotal > progress.bytesRead {
            text += ", \(Int((Double(progress.bytesTotal - progress.bytesRead) / byteRate).rounded(.up))) s left"
        }
        return text
    }

    private static func count(_ value: Int) -> String {
        let digits = String(value)
        var out = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out += "," }
            out.append(character)
        }
        return out
    }

    private static func mebibytes(_ bytes: Int) -> String {
        String(format: "%.1f MiB", Double(bytes) / 1_048_576)
    }
}

/// A stop asked for from a signal handler's queue, read by the verification loop.
final class StopRequest: Sendable {
    private let flag = Mutex(false)

    func request() { flag.withLock { $0 = true } }

    var requested: Bool { flag.withLock { $0 } }
}
