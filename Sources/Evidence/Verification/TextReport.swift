/// Renders a report for a terminal: the path and its hops, then per
/// auth-flow step a table (number, method, target, verdict per hop) with what
/// changed beneath each exchange, then problems, a summary line and the
/// policy result.
///
/// Verdict cells carry `~` when the hop's pairing was inferred and `*` when a
/// fault was injected on that hop; `-` means not reached.
public enum TextReport {
    public static func render(_ report: VerificationReport) -> String {
        var lines = preamble(policy: report.policy, recordings: report.recordings.count, path: report.path)

        let labelled = report.exchanges.contains { $0.step != nil }
        for group in report.stepGroups {
            lines.append("")
            if labelled { lines.append("Step \(group.step?.rawValue ?? "(unlabelled)")") }
            lines.append(contentsOf: table(group.exchanges, report.path.hops))
        }

        lines.append(contentsOf: ending(report))
        return lines.joined(separator: "\n") + "\n"
    }

    /// The policy, the path and its hops: what comes before the exchanges
    /// (a streamed report starts the same way, `TextReportStream`).
    static func preamble(policy: PolicySummary, recordings count: Int, path: VerifiedPath) -> [String] {
        var lines: [String] = []
        let recordings = count == 1 ? "1 recording" : "\(count) recordings"
        lines.append("Verified \(recordings) with policy \(policy.name)" + (policy.description.map { ": \($0)" } ?? ""))
        for toleration in policy.tolerations { lines.append("  tolerates \(toleration)") }
        let order = path.source == .option ? "as given" : "ordered from the recordings"
        lines.append("Path (\(order)): " + path.taps.map(\.name).joined(separator: " → "))
        for hop in path.hops {
            let kind = hop.kind == .inside ? "what \(hop.from.tap) itself changed" : "network"
            lines.append("  hop \(hop.number)  \(hop.label)  (\(kind))")
        }
        return lines
    }

    /// What follows the exchanges: intermediary requests, connection events,
    /// the legend, problems, warnings, the summary and the policy line (a
    /// streamed report ends the same way, `TextReportStream`).
    static func ending(_ report: VerificationReport) -> [String] {
        var lines: [String] = []
        if let heading = intermediaryHeading(report) {
            lines.append("")
            lines.append(heading)
            lines.append(contentsOf: report.intermediaryRequests.lines.map { "  " + $0 })
        }
        if let heading = connectionsHeading(report) {
            lines.append("")
            lines.append(heading)
            lines.append(contentsOf: report.connections.flatMap(\.lines).map { "  " + $0 })
        }
        if let other = report.otherOrigins {
            lines.append("")
            lines.append(other.line)
        }

        let cells = report.exchanges.flatMap(\.hops)
        // The legend names only the marks the tables use.
        var legend: [String] = []
        if cells.contains(where: { $0.pairing == .inferred }) { legend.append("~ paired by sequence alignment (no shared trace id)") }
        if cells.contains(where: { !$0.injected.isEmpty }) { legend.append("* a fault was injected on this hop on purpose") }
        if !legend.isEmpty {
            lines.append("")
            lines.append(legend.joined(separator: "   "))
        }
        if !report.problems.isEmpty || !report.warnings.isEmpty { lines.append("") }
        for problem in report.problems { lines.append("Problem: \(problem.message)") }
        for warning in report.warnings { lines.append("Warning: \(warning)") }
        lines.append("")
        lines.append(summaryLine(report.summary))
        lines.append(policyLine(report))
        return lines
    }

    /// The heading of the intermediary requests section; nil when there are none.
    static func intermediaryHeading(_ report: VerificationReport) -> String? {
        let requests = report.intermediaryRequests
        guard requests.total > 0 else { return nil }
        return "Intermediary requests (made by an intermediary itself, not exchanges of the app; policy: "
            + "\(report.policy.intermediaryRequests)): \(requests.total)"
    }

    /// The heading of the connection events section; nil when there are none.
    static func connectionsHeading(_ report: VerificationReport) -> String? {
        guard !report.connections.isEmpty else { return nil }
        return "Connections without a request (connection events, never exchanges; no policy fails on them):"
    }

    /// `12 exchanges over 3 hops: 30 identical, …; 2 pairings inferred`, then
    /// the intermediary requests and connection events when there are any.
    static func summaryLine(_ summary: VerificationSummary) -> String {
        let counts = HopVerdict.allCases.filter { $0 != .notReached }.map { "\(summary.count($0)) \($0.rawValue)" }
        var line = "Summary: \(summary.exchanges) exchange\(summary.exchanges == 1 ? "" : "s") over \(summary.hops) "
            + "hop\(summary.hops == 1 ? "" : "s"): " + counts.joined(separator: ", ")
            + "; \(summary.inferredPairings) pairing\(summary.inferredPairings == 1 ? "" : "s") inferred"
        if summary.intermediaryRequests > 0 {
            line += "; \(summary.intermediaryRequests) intermediary request\(summary.intermediaryRequests == 1 ? "" : "s")"
        }
        if summary.connectionEvents > 0 {
            line += "; \(summary.connectionEvents) connection event\(summary.connectionEvents == 1 ? "" : "s")"
        }
        return line
    }

    /// `Policy strict holds.` or `Policy strict FAILS: …`.
    static func policyLine(_ report: VerificationReport) -> String {
        if report.policyHolds { return "Policy \(report.policy.name) holds." }
        var reasons: [String] = []
        let failing = report.exchanges.filter { !$0.passes }
        // A streamed report lists only some exchanges; its listing has the counts.
        let failingCount = report.listing?.failingExchanges ?? failing.count
        if failingCount > 0 {
            let injected = report.listing?.failingOnInjectedHops
                ?? failing.count { $0.hops.contains { !$0.verdict.passes && !$0.injected.isEmpty } }
            reasons.append("\(failingCount) of \(report.listing?.exchanges ?? report.exchanges.count) exchanges fail"
                           + (injected > 0 ? " (\(injected) on hops with injected faults)" : ""))
        }
        let forbidden = report.intermediaryRequests.forbidden
        if forbidden > 0 {
            reasons.append("\(forbidden) intermediary request\(forbidden == 1 ? "" : "s") the policy does not allow")
        }
        reasons.append(contentsOf: report.problems.map(\.kind.rawValue))
        return "Policy \(report.policy.name) FAILS: " + reasons.joined(separator: "; ") + "."
    }

    /// The verdict as a table cell: `-` when not reached, `~` inferred, `*` injected.
    static func cell(_ hop: HopResult) -> String {
        guard hop.verdict != .notReached else { return "-" }
        return hop.verdict.rawValue + (hop.pairing == .inferred ? "~" : "") + (hop.injected.isEmpty ? "" : "*")
    }

    private static func table(_ exchanges: [VerifiedExchange], _ hops: [HopInfo]) -> [String] {
        // Several clients verified together: a column says whose each exchange is.
        let clients = exchanges.contains { $0.client != nil }
        let header = ["#"] + (clients ? ["client"] : []) + ["method", "target"] + hops.map { "hop \($0.number)" }
        let rows = exchanges.map { exchange in
            [String(exchange.number)] + (clients ? [exchange.client ?? "-"] : [])
                + [RequestLabel.method(exchange.method), clip(RequestLabel.target(exchange.target), 40)]
                + exchange.hops.map(cell)
        }
        var widths = header.map(\.count)
        for row in rows {
            for (column, text) in row.enumerated() { widths[column] = max(widths[column], text.count) }
        }
        func line(_ cells: [String]) -> String {
            let padded = cells.enumerated().map { column, text in
                column == cells.count - 1 ? text : text + String(repeating: " ", count: widths[column] - text.count)
            }
            return "  " + padded.joined(separator: "  ")
        }
        var lines = [line(header)]
        for (exchange, row) in zip(exchanges, rows) {
            lines.append(line(row))
            for (hop, info) in zip(exchange.hops, hops) {
                for note in hop.notes(info) { lines.append("       hop \(info.number) \(note)") }
            }
        }
        return lines
    }

    static func clip(_ text: String, _ limit: Int) -> String {
        text.count <= limit ? text : String(text.prefix(limit - 3)) + "..."
    }
}
