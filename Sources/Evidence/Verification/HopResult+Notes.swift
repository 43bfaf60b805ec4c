extension HopResult {
    /// One sentence per thing worth saying about this exchange on this hop —
    /// what changed and why it is equivalent, tolerated, missing, foreign or
    /// broken, and the faults injected — in the order the text and HTML
    /// reports list them. Empty for an identical or unreached hop with nothing injected.
    public func notes(_ info: HopInfo) -> [String] {
        var notes: [String] = []
        let near = HopResult.name(info.from, info), far = HopResult.name(info.to, info)
        if let note = HopResult.note("request", request, leaves: near, reaches: far) { notes.append(note) }
        if let note = HopResult.note("response", response, leaves: far, reaches: near) { notes.append(note) }
        for failure in failures {
            let said = failure.explanation.map { "\($0) (\(failure.description))" } ?? failure.description
            notes.append((verdict == .broken ? "broken: " : "failure recorded: ") + said)
        }
        for fault in injected {
            notes.append("injected on purpose: \(fault.name)" + (fault.detail.map { " (\($0))" } ?? ""))
        }
        return notes
    }

    /// A point as notes name it: the tap, with the leg on a hop inside one tap.
    private static func name(_ point: ObservationPoint, _ info: HopInfo) -> String {
        info.kind == .inside ? "\(point.tap) \(point.leg.rawValue)" : point.tap
    }

    private static func note(_ kind: String, _ result: MessageResult, leaves: String, reaches: String) -> String? {
        switch result.outcome {
        case .notReached, .identical, .broken:  // a message is never broken itself; its hop is
            return nil
        case .equivalent:
            return "\(kind) equivalent: " + result.reasons.map(\.text).joined(separator: "; ")
        case .tolerated, .modified:
            let items = result.differences.map { difference in
                difference.text + (difference.toleratedBy.map { " [tolerated: \($0)]" } ?? "")
            }
            return "\(kind) \(result.outcome.rawValue): " + items.joined(separator: "; ")
        case .missing:
            let what = result.before.map(describe) ?? kind
            return "\(kind) missing: \(what) left \(leaves), never reached \(reaches)"
        case .foreign:
            if let copy = result.cachedCopy { return "\(kind) foreign: \(copy.text)" }
            let what = result.after.map(describe) ?? kind
            let who = kind == "response" ? "an intermediary answered in the server's place"
                : "an intermediary sent a request the client did not"
            return "\(kind) foreign: \(what) reached \(reaches) but never left \(leaves) (\(who))"
        }
    }

    /// `POST /suite/auth` for a request, `503` for a response, with `(incomplete)` when it ended early.
    private static func describe(_ message: MessageSummary) -> String {
        let text = message.status.map { String($0) } ?? "\(message.method ?? "") \(message.target ?? "")"
        return message.complete ? text : text + " (incomplete)"
    }
}
