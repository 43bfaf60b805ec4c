import AuthFlow
import Evidence

/// Comparing what a run produced with what the scenario expects.
extension ScenarioExpectation {
    /// The tap names around the load balancer: its hop goes from the first to the second.
    public static let loadBalancerHop = (from: "tap-a", to: "tap-b")

    /// Every way `client` and `report` differ from the expectation, one
    /// sentence each; empty when the run is as expected. `earlier` are the
    /// runs of the client before the last (`client.runs`), each of which
    /// must have signed in; `client` is the last.
    public func mismatches(client observed: ClientObservation, earlier: [ClientObservation] = [],
                           report: VerificationReport) -> [String] {
        let earlierFailures = earlier.enumerated().filter { !$0.element.succeeded }.map { run, observed in
            "client run \(run + 1) of \(earlier.count + 1): expected success (only the last run is judged by expect.client), got \(observed)"
        }
        return earlierFailures + clientMismatches(observed) + verifyMismatches(report)
    }

    private func clientMismatches(_ observed: ClientObservation) -> [String] {
        switch client {
        case .succeeds:
            guard observed.succeeded else { return ["client: expected success, got \(observed)"] }
            return []
        case let .fails(mode, step):
            guard let diagnosis = observed.outcome?.diagnosis, !observed.succeeded else {
                return ["client: expected \(mode.rawValue) at \(step.rawValue), got \(observed)"]
            }
            guard diagnosis.mode == mode, diagnosis.step == step else {
                return ["client: expected \(mode.rawValue) at \(step.rawValue), got \(observed)"]
            }
            return []
        }
    }

    private func verifyMismatches(_ report: VerificationReport) -> [String] {
        guard let hop = Self.loadBalancerHop(in: report) else {
            let hops = report.path.hops.map(\.label).joined(separator: ", ")
            return ["verify: no hop from \(Self.loadBalancerHop.from) to \(Self.loadBalancerHop.to) (hops: \(hops))"]
                + report.problems.map { "verify: \($0.message)" }
        }
        switch verify {
        case let .holds(tolerated, intermediaryRequests):
            var found: [String] = []
            if !report.policyHolds {
                found.append("verify: expected the policy to hold, but " + Self.failures(in: report).joined(separator: "; "))
            }
            if report.intermediaryRequests.total < intermediaryRequests {
                found.append("verify: expected at least \(intermediaryRequests) intermediary request"
                             + "\(intermediaryRequests == 1 ? "" : "s") listed, got \(report.intermediaryRequests.total)")
            }
            let toleratedFields = Set(report.exchanges.flatMap { exchange in
                exchange.hops.filter { $0.hop == hop.number }.flatMap { $0.request.differences + $0.response.differences }
                    .filter { $0.toleratedBy != nil }.compactMap(\.field)
            })
            for field in tolerated where !toleratedFields.contains(field) {
                found.append("verify: expected \(field) to show as tolerated on \(hop.label), it does not")
            }
            return found
        case let .fails(expected):
            var found: [String] = []
            if report.policyHolds { found.append("verify: expected the policy to fail, it holds") }
            for exchange in report.exchanges {
                for result in exchange.hops where !result.verdict.passes && result.hop != hop.number {
                    if Self.sharesTheLoadBalancersBreak(result, in: exchange, hop: hop, path: report.path) { continue }
                    let label = report.path.hops.first { $0.number == result.hop }?.label ?? "hop \(result.hop)"
                    found.append("verify: exchange \(exchange.number) (\(exchange.step?.rawValue ?? "unlabelled")) fails on \(label), "
                                 + "not on the load balancer's hop \(hop.label): \(result.verdict.rawValue)")
                }
            }
            let candidates = report.exchanges.filter { $0.step?.rawValue == expected.step.rawValue }
                .compactMap { exchange in exchange.hops.first { $0.hop == hop.number } }
            let matches = candidates.filter { $0.verdict == expected.verdict }
            guard let match = matches.first(where: { !expected.cachedCopy || $0.response.cachedCopy != nil }) else {
                if !matches.isEmpty {
                    found.append("verify: expected \(expected.step.rawValue) on \(hop.label) to be named a cached copy, "
                                 + "it is \(expected.verdict.rawValue) without one")
                    return found
                }
                let seen = candidates.map(\.verdict.rawValue).joined(separator: ", ")
                var labels: [String] = []
                for label in report.exchanges.compactMap(\.step?.rawValue) where !labels.contains(label) { labels.append(label) }
                found.append("verify: expected \(expected.step.rawValue) to be \(expected.verdict.rawValue) on \(hop.label), "
                             + "got " + (seen.isEmpty ? "no exchange labelled so (labels: \(labels.joined(separator: ", ")))" : seen))
                return found
            }
            if let text = expected.failure,
               !match.failures.contains(where: { $0.description.contains(text) || $0.explanation?.contains(text) == true }) {
                let attached = match.failures.map { $0.explanation ?? $0.description }
                found.append("verify: expected a failure saying \"\(text)\" attached to \(expected.step.rawValue) on \(hop.label), got "
                             + (attached.isEmpty ? "none" : attached.joined(separator: "; ")))
            }
            for difference in expected.differences {
                let message = difference.message == .request ? match.request : match.response
                if !message.differences.contains(where: difference.matches) {
                    let listed = message.differences.map { "\($0.kind.rawValue)" + ($0.field.map { " \($0)" } ?? "")
                        + ($0.cookie.map { " \($0)" } ?? "") + " \"\($0.text)\"" }
                    found.append("verify: expected \(difference) on \(hop.label) at \(expected.step.rawValue), got "
                                 + (listed.isEmpty ? "no difference" : listed.joined(separator: ", ")))
                }
            }
            return found
        }
    }

    /// True when `result` is the inside hop of tap A or tap B next to the
    /// load balancer's hop and broken only by the failure that broke the load
    /// balancer's hop (or was attached to its foreign answer): tap A could not
    /// get an answer from the load balancer, so its own hop shows the request
    /// never left and its 502 in the server's place; or tap B refused the load
    /// balancer's handshake, which answered itself, so tap B's own hop shows
    /// that refusal. That is one failure, the load balancer's, not a second
    /// one inside the tap.
    static func sharesTheLoadBalancersBreak(_ result: HopResult, in exchange: VerifiedExchange, hop: HopInfo,
                                            path: VerifiedPath) -> Bool {
        guard result.verdict == .broken, !result.failures.isEmpty, abs(result.hop - hop.number) == 1,
              path.hops.first(where: { $0.number == result.hop })?.kind == .inside,
              let cell = exchange.hops.first(where: { $0.hop == hop.number }),
              cell.verdict == .broken || cell.verdict == .foreign else {
            return false
        }
        return result.failures.allSatisfy { cell.failures.contains($0) }
    }

    /// The hop from tap A's upstream leg to tap B's downstream leg: what the load balancer did.
    public static func loadBalancerHop(in report: VerificationReport) -> HopInfo? {
        report.path.hops.first {
            $0.kind == .network && $0.from.tap == loadBalancerHop.from && $0.to.tap == loadBalancerHop.to
        }
    }

    /// `protected-request on tap-a → tap-b: modified (response field-removed set-cookie)`, one per failing cell.
    public static func failures(in report: VerificationReport) -> [String] {
        var lines = report.problems.map(\.message)
        for exchange in report.exchanges {
            for result in exchange.hops where !result.verdict.passes {
                let label = report.path.hops.first { $0.number == result.hop }?.label ?? "hop \(result.hop)"
                let differences = [("request", result.request), ("response", result.response)].flatMap { side, message in
                    message.differences.filter { $0.toleratedBy == nil }.map { "\(side) \($0.text)" }
                }
                let failures = result.failures.map { $0.explanation ?? $0.description }
                let copy = result.response.cachedCopy.map { ["response \($0.text)"] } ?? []
                let details = (differences + copy + failures).joined(separator: "; ")
                lines.append("\(exchange.step?.rawValue ?? "exchange \(exchange.number)") on \(label): \(result.verdict.rawValue)"
                             + (details.isEmpty ? "" : " (\(details))"))
            }
        }
        return lines
    }
}

/// How the client ended: its exit status and, when it printed one, its JSON outcome.
public struct ClientObservation: Hashable, Sendable, CustomStringConvertible {
    public var termination: ProcessTermination
    /// Nil when the client printed no readable outcome (it crashed or was killed).
    public var outcome: FlowOutcome?

    public init(termination: ProcessTermination, outcome: FlowOutcome?) {
        self.termination = termination
        self.outcome = outcome
    }

    /// Exit status 0 and an outcome that says so.
    public var succeeded: Bool {
        termination == .exited(0) && outcome?.succeeded == true
    }

    /// `success`, `strip-set-cookie at token-exchange: <evidence>`, or how the process ended.
    public var description: String {
        if succeeded { return "success" }
        if let diagnosis = outcome?.diagnosis {
            return "\(diagnosis.mode.rawValue) at \(diagnosis.step.rawValue): \(diagnosis.evidence)"
        }
        if outcome?.succeeded == true { return "success in its output, but it \(termination)" }
        return "no outcome (the client \(termination))"
    }
}
