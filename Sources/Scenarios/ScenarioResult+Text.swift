import Evidence

/// How `intact scenario run` shows a run.
extension ScenarioResult {
    /// A few lines: the path with its ports, what the client concluded, what
    /// the verifier concluded, and whether that is what the scenario expects.
    /// Where the reports are is the caller's to say: only a kept run directory still holds them.
    public var summary: String {
        let scenario = plan.scenario
        let ports = plan.ports
        var lines = ["Scenario \(scenario.name): \(scenario.summary)"]
        if let breaks = scenario.breaks { lines.append("  breaks:   \(breaks)") }
        let kind = scenario.intermediary
        let inner = kind.usesInnerPort ? " → \(kind.processes.first?.name ?? "") :\(ports.inner)" : ""
        let product = kind.processes.count > 1 ? (kind.processes.last?.name ?? kind.displayName) : kind.displayName
        let tapA = kind.topology == .forward ? "tap A (forward proxy) :\(ports.tapA)" : "tap A :\(ports.tapA)"
        lines.append("  path:     client → \(tapA) → \(product) :\(ports.loadBalancer)\(inner)"
                     + " → tap B\(kind.upstreamTLS ? "" : " (plain HTTP)") :\(ports.tapB) → server :\(ports.server) (127.0.0.1)")
        if let tls = tlsLine { lines.append("  tls:      " + tls) }
        let runs = earlierClients + [client]
        for (index, run) in runs.enumerated() {
            let label = runs.count == 1 ? "client:   " : "client \(index + 1): "
            lines.append("  " + label + (run.succeeded ? "signed in, follow-up request succeeded" : "FAILED, \(run)"))
        }
        if let quote = client.outcome?.diagnosis?.quote { lines.append("            breaks: \"\(quote)\"") }
        if report.policyHolds {
            lines.append("  verify:   policy \(report.policy.name) holds")
        } else {
            lines.append("  verify:   policy \(report.policy.name) FAILS")
            lines += ScenarioExpectation.failures(in: report).map { "            \($0)" }
            let hints = IntermediaryDirective.hints(in: report, product: scenario.intermediary.name)
            lines += hints.map { "  fix:      \($0)" }
        }
        let tolerated = report.exchanges.flatMap(\.hops).flatMap { $0.request.differences + $0.response.differences }
            .filter { $0.toleratedBy != nil }.map(\.text)
        for text in Set(tolerated).sorted() { lines.append("            tolerated: \(text)") }
        for text in report.intermediaryRequests.lines { lines.append("            intermediary requests: \(text)") }
        for text in report.connections.flatMap(\.lines) { lines.append("            connections: \(text)") }
        switch mismatches {
        case nil:
            lines.append("  result:   the load balancer was left stopped; the scenario's expectation does not apply")
        case let list? where list.isEmpty:
            lines.append("  result:   as expected (\(scenario.expectation.isGood ? "a good configuration" : "a broken configuration, caught"))")
        case let list?:
            lines.append("  result:   NOT AS EXPECTED")
            lines += list.map { "            \($0)" }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
