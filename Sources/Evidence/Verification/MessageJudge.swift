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
    ///   - schemeChoice: a side of the hop that is a tap's upstream leg whose
    ///     scheme the tap chose itself: a change of the scheme, to or from
    ///     that one, is the tap's doing and never a target change, whatever
    ///     else differs on the hop; so is
    ///     the upstream's authority a reverse tap supplied for a request that
    ///     named none (`TapSchemeChoice.OnHop.explains`).
    ///   - answer: for a request, the response on the leg `after` was
    ///     recorded on: a request cut because that response had already
    ///     completed is `equivalent`, answered early (`answeredEarly`).
    func judge(before: RecordedMessage?, after: RecordedMessage?, as kind: Toleration.Message,
               schemeChoice: TapSchemeChoice.OnHop? = nil, answer: RecordedMessage? = nil) -> MessageResult {
        switch (before, after) {
        case (nil, nil):
            return MessageResult(outcome: .notReached, before: nil, after: nil)
        case (let before?, nil):
            return MessageResult(outcome: .missing, before: MessageSummary(before), after: nil)
        case (nil, let after?):
            return MessageResult(outcome: .foreign, before: nil, after: MessageSummary(after))
        case (let before?, let after?):
            var comparison = DigestComparison(before: before.digest, after: after.digest)
            comparison = MessageJudge.extendedConnect(comparison, before: before, after: after, kind: kind)
            if let schemeChoice, let explained = schemeChoice.explains(comparison, before, after) {
                comparison = explained
            }
            if kind == .request, let reason = MessageJudge.answeredEarly(comparison, before: before, after: after, response: answer) {
                comparison = DigestComparison(verdict: .equivalent, reasons: comparison.reasons + [reason], changes: [])
            }
            let differences = comparison.changes.flatMap { describe($0, before, after, kind) }
            let tolerated = comparison.verdict == .modified && differences.allSatisfy { $0.toleratedBy != nil }
            return MessageResult(outcome: tolerated ? .tolerated : comparison.verdict, before: MessageSummary(before),
                                 after: MessageSummary(after), reasons: comparison.reasons, differences: differences)
        }
    }

    // MARK: Differences

    /// The differences one change makes: one, or one per cookie part for `Cookie` and `Set-Cookie`.
    private func describe(_ change: DigestComparison.Change, _ before: RecordedMessage, _ after: RecordedMessage,
                          _ kind: Toleration.Message) -> [MessageDifference] {
        let cookieField = kind == .request ? "cookie" : "set-cookie"
        switch change {
        case .fieldAdded(cookieField):
            if let differences = cookieDifferences(.added, field: cookieField, before, after, kind) { return differences }
        case .fieldRemoved(cookieField):
            if let differences = cookieDifferences(.removed, field: cookieField, before, after, kind) { return differences }
        case .fieldChanged(cookieField):
            if let differences = cookieDifferences(.changed, field: cookieField, before, after, kind) { return differences }
        default:
            break
        }
        return [describeOne(change, before, after, kind)]
    }

    private func describeOne(_ change: DigestComparison.Change, _ before: RecordedMessage, _ after: RecordedMessage,
                             _ kind: Toleration.Message) -> MessageDifference {
        switch change {
        case .statusChanged(let from, let to):
            return MessageDifference(kind: .statusChanged, before: String(from), after: String(to), text: change.description)
        case .methodChanged(let from, let to):
            return MessageDifference(kind: .methodChanged, before: from, after: to, text: change.description)
        case .targetChanged:
            let (from, to) = (MessageJudge.target(before), MessageJudge.target(after))
            // Only the authority differs: the Host an intermediary sent (Apache ProxyPreserveHost Off, nginx's default).
            if before.scheme == after.scheme, before.path == after.path, let a = before.authority, let b = after.authority, a != b {
                return MessageDifference(kind: .targetChanged, before: from, after: to, text: "Host changed (\(a) → \(b))")
            }
            return MessageDifference(kind: .targetChanged, before: from, after: to, text: "target changed (\(from) → \(to))")
        case .fieldAdded(let name):
            let values = FieldValues(after, name)
            return MessageDifference(kind: .fieldAdded, field: name, after: values.joined,
                              text: "\(values.spelling ?? FieldDisplayName.of(name)) added" + values.shown,
                              toleratedBy: tolerance(.added, of: name, kind))
        case .fieldRemoved(let name):
            let values = FieldValues(before, name)
            return MessageDifference(kind: .fieldRemoved, field: name, before: values.joined,
                              text: "\(values.spelling ?? FieldDisplayName.of(name)) removed" + values.shown,
                              toleratedBy: tolerance(.removed, of: name, kind))
        case .fieldChanged(let name):
            let old = FieldValues(before, name), new = FieldValues(after, name)
            let shown = old.isRedacted || new.isRedacted
                ? " (secret values differ)" : " (\(FieldValues.clip(old.joined ?? "")) → \(FieldValues.clip(new.joined ?? "")))"
            return MessageDifference(kind: .fieldChanged, field: name, before: old.joined, after: new.joined,
                              text: "\(new.spelling ?? old.spelling ?? FieldDisplayName.of(name)) changed" + shown,
                              toleratedBy: tolerance(.changed, of: name, kind))
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

    // MARK: Tolerations

    /// The first rule that tolerates this kind of change of a field, as the report shows it.
    private func tolerance(_ change: Toleration.Change, of field: String, _ kind: Toleration.Message) -> String? {
        policy.tolerations.first { $0.subject == .field(field) && $0.covers(change, in: kind) }?.description
    }

    /// The first rule that tolerates this kind of change of a cookie by name, else of its field.
    private func tolerance(_ change: Toleration.Change, ofCookie cookie: String, field: String,
                           fieldChange: Toleration.Change, _ kind: Toleration.Message) -> String? {
        policy.tolerations.first { $0.subject.names(cookie: cookie) && $0.covers(change, in: kind) }?.description
            ?? tolerance(fieldChange, of: field, kind)
    }

    // MARK: Cookies

    /// A `Cookie` or `Set-Cookie` change as one difference per cookie part
    /// (`SERVERID added`, `JSESSIONID: attribute SameSite=None added`,
    /// `JSESSIONID: value changed (secret)`); nil when a side was recorded
    /// without parts (redacted by an older build), so only the field can be named.
    private func cookieDifferences(_ change: Toleration.Change, field: String, _ before: RecordedMessage,
                                   _ after: RecordedMessage, _ kind: Toleration.Message) -> [MessageDifference]? {
        let old = FieldValues(before, field), new = FieldValues(after, field)
        guard let oldParts = old.cookies, let newParts = new.cookies else { return nil }
        let secret = old.isRedacted || new.isRedacted
        let changes = CookieChange.compare(oldParts, newParts) { _ in secret }
        let spelling = new.spelling ?? old.spelling ?? field
        guard !changes.isEmpty else {
            return [MessageDifference(kind: .fieldChanged, field: field, text: "\(spelling) changed (the same cookies, "
                                      + "in another order or with other spacing)", toleratedBy: tolerance(.changed, of: field, kind))]
        }
        return changes.map { cookieChange in
            let cookieKind: Toleration.Change
            let differenceKind: MessageDifference.Kind
            switch cookieChange {
            case .added: (cookieKind, differenceKind) = (.added, change == .added ? .fieldAdded : .cookieAdded)
            case .removed: (cookieKind, differenceKind) = (.removed, change == .removed ? .fieldRemoved : .cookieRemoved)
            default: (cookieKind, differenceKind) = (.changed, .cookieChanged)
            }
            var values: (String?, String?) = (nil, nil)
            switch cookieChange {
            case .valueChanged(_, let from, let to, false): values = (from, to)
            case .attributeChanged(_, _, let from, let to): values = (from, to)
            case .attributeAdded(_, let attribute): values = (nil, attribute)
            case .attributeRemoved(_, let attribute): values = (attribute, nil)
            default: break
            }
            return MessageDifference(kind: differenceKind, field: field, cookie: cookieChange.cookie.isEmpty ? nil : cookieChange.cookie,
                                     before: values.0, after: values.1, text: cookieChange.description,
                                     toleratedBy: tolerance(cookieKind, ofCookie: cookieChange.cookie, field: field,
                                                            fieldChange: change, kind))
        }
    }
}

/// The recorded values of one field name in one message.
private struct FieldValues {
    let values: [String]
    /// The name as the reports spell it (`FieldDisplayName`), from its first spelling in the message.
    let spelling: String?
    let isRedacted: Bool

    /// The cookies of every line of the field, part by part; nil when a line has none recorded.
    let cookies: [CookieParts]?

    init(_ message: RecordedMessage, _ lowercasedName: String) {
        let name = HTTPField.Name(lowercasedName)
        let fields = message.fields.filter { name.matches($0.name) }
        values = fields.map(\.value)
        spelling = fields.first.map { FieldDisplayName.of($0.name) }
        isRedacted = fields.contains(where: \.isRedacted)
        var cookies: [CookieParts]? = []
        for field in fields {
            guard let parts = field.cookieParts else { cookies = nil; break }
            cookies?.append(contentsOf: parts)
        }
        self.cookies = cookies
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
