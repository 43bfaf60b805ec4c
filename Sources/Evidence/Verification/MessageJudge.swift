import Foundation
import HTTP

/// Judges one message on one hop: compares the digests with
/// `DigestComparison`, names each difference with the recorded values, and
/// applies the policy's tolerations on top of the comparison's changes.
struct MessageJudge {
    let policy: VerificationPolicy

    /// - Parameters:
    ///   - before: the message on the side it left (nil when that side did not see it).
    ///   - after: the message on the side it reached.
    func judge(before: RecordedMessage?, after: RecordedMessage?, as kind: Toleration.Message) -> MessageResult {
        switch (before, after) {
        case (nil, nil):
            return MessageResult(outcome: .absent, before: nil, after: nil)
        case (let before?, nil):
            return MessageResult(outcome: .missing, before: MessageSummary(before), after: nil)
        case (nil, let after?):
            return MessageResult(outcome: .foreign, before: nil, after: MessageSummary(after))
        case (let before?, let after?):
            let comparison = DigestComparison(before: before.digest, after: after.digest)
            let differences = comparison.changes.map { describe($0, before, after, kind) }
            let outcome: MessageResult.Outcome
            switch comparison.verdict {
            case .identical: outcome = .identical
            case .equivalent: outcome = .equivalent
            case .modified: outcome = differences.allSatisfy { $0.toleratedBy != nil } ? .tolerated : .modified
            }
            return MessageResult(outcome: outcome, before: MessageSummary(before), after: MessageSummary(after),
                                 reasons: comparison.reasons.map(MessageJudge.equivalence), differences: differences)
        }
    }

    // MARK: Differences

    private func describe(_ change: DigestComparison.Change, _ before: RecordedMessage, _ after: RecordedMessage,
                          _ kind: Toleration.Message) -> MessageDifference {
        switch change {
        case .statusChanged(let from, let to):
            return MessageDifference(kind: .statusChanged, before: String(from), after: String(to), text: change.description)
        case .methodChanged(let from, let to):
            return MessageDifference(kind: .methodChanged, before: from, after: to, text: change.description)
        case .targetChanged:
            let (from, to) = (MessageJudge.target(before), MessageJudge.target(after))
            return MessageDifference(kind: .targetChanged, before: from, after: to, text: "target changed (\(from) → \(to))")
        case .fieldAdded(let name):
            let values = FieldValues(after, name)
            return MessageDifference(kind: .fieldAdded, field: name, after: values.joined,
                              text: "\(values.spelling ?? name) added" + values.shown,
                              toleratedBy: tolerance(.added, of: name, before, after, kind))
        case .fieldRemoved(let name):
            let values = FieldValues(before, name)
            return MessageDifference(kind: .fieldRemoved, field: name, before: values.joined,
                              text: "\(values.spelling ?? name) removed" + values.shown,
                              toleratedBy: tolerance(.removed, of: name, before, after, kind))
        case .fieldChanged(let name):
            let old = FieldValues(before, name), new = FieldValues(after, name)
            let shown = old.isRedacted || new.isRedacted
                ? " (secret values differ)" : " (\(FieldValues.clip(old.joined ?? "")) → \(FieldValues.clip(new.joined ?? "")))"
            return MessageDifference(kind: .fieldChanged, field: name, before: old.joined, after: new.joined,
                              text: "\(new.spelling ?? old.spelling ?? name) changed" + shown,
                              toleratedBy: tolerance(.changed, of: name, before, after, kind))
        case .bodyChanged(let from, let to):
            return MessageDifference(kind: .bodyChanged, before: String(from), after: String(to), text: change.description)
        case .trailersChanged:
            return MessageDifference(kind: .trailersChanged, text: change.description)
        case .unexplained:
            return MessageDifference(kind: .unexplained, text: change.description)
        }
    }

    /// `scheme://authority/path` as recorded.
    private static func target(_ message: RecordedMessage) -> String {
        "\(message.scheme ?? "")://\(message.authority ?? message.firstValue("host") ?? "")\(message.path ?? "")"
    }

    private static func equivalence(_ reason: DigestComparison.Reason) -> Equivalence {
        let kind: Equivalence.Kind
        switch reason {
        case .fieldNameCase: kind = .fieldNameCase
        case .version: kind = .version
        case .framing: kind = .framing
        case .hopByHop: kind = .hopByHop
        case .host: kind = .host
        case .cookieCrumbs: kind = .cookieCrumbs
        case .fieldOrder: kind = .fieldOrder
        case .targetForm: kind = .targetForm
        case .reasonPhrase: kind = .reasonPhrase
        case .trailerFormatting: kind = .trailerFormatting
        case .wireFormatting: kind = .wireFormatting
        }
        return Equivalence(kind: kind, text: reason.description)
    }

    // MARK: Tolerations

    /// The rules that tolerate this field change, as the report shows them;
    /// nil when the policy does not tolerate it.
    private func tolerance(_ change: Toleration.Change, of field: String, _ before: RecordedMessage,
                           _ after: RecordedMessage, _ kind: Toleration.Message) -> String? {
        if let rule = policy.tolerations.first(where: { $0.subject == .field(field) && $0.covers(change, in: kind) }) {
            return rule.description
        }
        let cookieField = kind == .request ? "cookie" : "set-cookie"
        guard field == cookieField else { return nil }
        let cookieRules = policy.tolerations.filter { if case .cookie = $0.subject { return true } else { return false } }
        guard !cookieRules.isEmpty,
              let changes = CookieChanges(before: FieldValues(before, field), after: FieldValues(after, field), kind: kind),
              !changes.byName.isEmpty else { return nil }
        var used: [Toleration] = []
        for (name, cookieChange) in changes.byName.sorted(by: { $0.key < $1.key }) {
            guard let rule = cookieRules.first(where: { $0.subject == .cookie(name) && $0.covers(cookieChange, in: kind) }) else {
                return nil
            }
            if !used.contains(rule) { used.append(rule) }
        }
        return used.map(\.description).joined(separator: "; ")
    }
}

/// The recorded values of one field name in one message.
private struct FieldValues {
    let values: [String]
    /// The name as first spelled in the message.
    let spelling: String?
    let isRedacted: Bool

    init(_ message: RecordedMessage, _ lowercasedName: String) {
        let fields = message.fields.filter { HTTPField.lowercaseASCII($0.name) == lowercasedName }
        values = fields.map(\.value)
        spelling = fields.first?.name
        isRedacted = fields.contains(where: \.isRedacted)
    }

    /// The values joined with ", "; nil when the field is absent.
    var joined: String? { values.isEmpty ? nil : values.joined(separator: ", ") }

    /// ` (value)` for text, or ` (secret)` for a redacted one.
    var shown: String {
        guard let joined else { return "" }
        return isRedacted ? " (secret)" : " (\(FieldValues.clip(joined)))"
    }

    /// At most 60 characters of a value, for one-line text.
    static func clip(_ value: String) -> String {
        value.count <= 60 ? value : String(value.prefix(57)) + "..."
    }
}

/// Which cookies a `Cookie` (request) or `Set-Cookie` (response) change
/// added, removed or changed, by cookie name; nil when a value is redacted
/// and the names cannot be known.
private struct CookieChanges {
    let byName: [String: Toleration.Change]

    init?(before: FieldValues, after: FieldValues, kind: Toleration.Message) {
        guard !before.isRedacted && !after.isRedacted else { return nil }
        let old = CookieChanges.cookies(before.values, kind), new = CookieChanges.cookies(after.values, kind)
        var byName: [String: Toleration.Change] = [:]
        for name in Set(old.keys).union(new.keys) {
            switch (old[name], new[name]) {
            case (nil, _?): byName[name] = .added
            case (_?, nil): byName[name] = .removed
            case let (a?, b?) where a != b: byName[name] = .changed
            default: break
            }
        }
        self.byName = byName
    }

    /// Cookie name → its values (crumbs of `Cookie`, whole lines of `Set-Cookie`), in order.
    private static func cookies(_ values: [String], _ kind: Toleration.Message) -> [String: [String]] {
        let items: [String]
        switch kind {
        case .request: items = values.flatMap { $0.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) } }
        case .response: items = values
        }
        var result: [String: [String]] = [:]
        for item in items where !item.isEmpty {
            let name = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)[0]
            result[String(name).trimmingCharacters(in: .whitespaces), default: []].append(item)
        }
        return result
    }
}
