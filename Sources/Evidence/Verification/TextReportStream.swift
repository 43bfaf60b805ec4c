/// The text report of a streamed verification, written as it goes: the
/// policy and path first, then one row per exchange (with what changed
/// beneath it) as soon as it is judged, then — from the final report — the
/// failing exchanges again (up to the cap, "and N more"), the intermediary
/// requests, connection events, problems, warnings, summary and policy
/// line, as `TextReport` ends a whole report.
///
/// Columns have fixed widths (a stream cannot know the widest value):
/// `#` 7, method 7, target 40 (clipped as `TextReport` clips it), each hop 13.
public final class TextReportStream: VerificationSink {
    private let write: (String) -> Void
    private var started = false

    /// - Parameter write: takes the report's text piece by piece, lines whole.
    public init(write: @escaping (String) -> Void) {
        self.write = write
    }

    public func begin(policy: PolicySummary, recordings: Int, path: VerifiedPath) {
        var lines = TextReport.preamble(policy: policy, recordings: recordings, path: path)
        lines.append("")
        lines.append("Exchanges, as they are judged:")
        lines.append(TextReportStream.row(["#", "method", "target"] + path.hops.map { "hop \($0.number)" }))
        write(lines.joined(separator: "\n") + "\n")
        started = true
    }

    public func judged(_ exchanges: [VerifiedExchange], path: VerifiedPath) {
        var text = ""
        for exchange in exchanges { text += TextReportStream.lines(exchange, path.hops).joined(separator: "\n") + "\n" }
        write(text)
    }

    /// An exchange's row and its notes.
    static func lines(_ exchange: VerifiedExchange, _ hops: [HopInfo]) -> [String] {
        var lines = [row([String(exchange.number), exchange.method, TextReport.clip(exchange.target, 40)]
                         + exchange.hops.map(TextReport.cell))]
        for (hop, info) in zip(exchange.hops, hops) {
            for note in hop.notes(info) { lines.append("       hop \(info.number) \(note)") }
        }
        return lines
    }

    private static let widths = [7, 7, 40]

    private static func row(_ cells: [String]) -> String {
        let padded = cells.enumerated().map { column, text in
            let width = column < widths.count ? widths[column] : 13
            return column == cells.count - 1 || text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
        }
        return "  " + padded.joined(separator: "  ")
    }

    /// The end of the report, from the final report (`StreamingVerifier.verify`'s).
    public func end(_ report: VerificationReport) {
        var lines: [String] = []
        if let listing = report.listing, listing.failingExchanges > 0 {
            lines.append("")
            let more = listing.failingExchanges - listing.failingListed
            lines.append("Failing exchanges: \(listing.failingExchanges)"
                         + (more > 0 ? " (the first \(listing.failingListed) again here, and \(more) more above)" : " (again here)"))
            for exchange in report.exchanges where !exchange.passes {
                lines += TextReportStream.lines(exchange, report.path.hops)
            }
            if more > 0 { lines.append("  … and \(more) more failing exchanges") }
        }
        lines += TextReport.ending(report)
        write(lines.joined(separator: "\n") + "\n")
    }
}
