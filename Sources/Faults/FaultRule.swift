import AuthFlow
/// Which message of an exchange a rule acts on.
public enum FaultLeg: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// The request, on its way from the client to the server.
    case request
    /// The response, on its way from the server to the client.
    case response

    public var description: String { rawValue }
}

/// One fault: where it applies (`match`) and what it does (`actions`, in order).
///
/// Invariant (checked by `FaultRuleFile` and, for presets, by tests through
/// `problem`): a rule either has only TLS actions and no leg (a connection
/// rule, applied when a client connects), or has a leg and only actions valid
/// on that leg.
public struct FaultRule: Sendable, Hashable {
    /// The name written into every `AppliedFault` this rule produces.
    public var name: String
    public var match: FaultMatch
    public var actions: [FaultAction]

    public init(name: String, match: FaultMatch, actions: [FaultAction]) {
        self.name = name
        self.match = match
        self.actions = actions
    }

    /// True when the rule acts on the TLS handshake of a connection rather than on messages.
    public var isConnectionRule: Bool { match.leg == nil }

    /// Why this rule cannot work as written, or nil when it is consistent.
    /// The index names the offending action when there is one.
    public var problem: (actionIndex: Int?, message: String)? {
        if actions.isEmpty { return (nil, "a rule needs at least one action") }
        guard let leg = match.leg else {
            if let i = actions.firstIndex(where: { !$0.kind.isConnectionLevel }) {
                return (i, "\(actions[i].kind) acts on messages, so the rule needs \"leg\" in its match")
            }
            if let field = match.messageCriteria.first {
                return (nil, "TLS actions apply when a client connects, before any request is read, so the match cannot use \"\(field)\"")
            }
            return nil
        }
        if match.statuses != nil && leg == .request {
            return (nil, "\"status\" only matches on the response leg")
        }
        for (i, action) in actions.enumerated() {
            if action.kind.isConnectionLevel {
                return (i, "\(action.kind) applies to the whole connection: put it in a rule without \"leg\"")
            }
            if !action.kind.legs.contains(leg) {
                return (i, "\(action.kind) only applies to the \(action.kind.legs.map(\.rawValue).sorted().joined(separator: " or ")) leg, and this rule's leg is \(leg)")
            }
            if case .rewriteURLs(_, let places) = action,
               let place = places.first(where: { !$0.legs.contains(leg) }) {
                return (i, "rewrite-urls in \"\(place.rawValue)\" only applies to the \(place.legs.map(\.rawValue).joined(separator: " or ")) leg")
            }
        }
        return nil
    }
}
