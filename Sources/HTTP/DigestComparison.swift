/// The judgement of one message as two observation points saw it (before and
/// after a hop), made from digests alone so it works on redacted recordings.
///
/// - `identical`: exact and semantic head digests, body and exact trailer
///   digests equal. (The exact digest of an origin-form HTTP/1.1 head does not
///   see the connection's scheme; the semantic digest does, so the same bytes
///   sent over TLS and then over plain TCP are `modified`, target changed.)
/// - `equivalent`: semantic digests, body and semantic trailer digests equal;
///   `reasons` says what differs on the wire.
/// - `modified`: anything else; `changes` names each semantic difference
///   (field added, removed or changed, status, method, target, body, trailers)
///   and `reasons` still lists the wire differences that came with it.
public struct DigestComparison: Codable, Hashable, Sendable {
    /// The three verdicts a comparison of two present messages can reach.
    public enum Verdict: String, Codable, Hashable, Sendable {
        case identical, equivalent, modified
    }

    /// A difference HTTP lets an intermediary make without changing meaning.
    public enum Reason: Codable, Hashable, Sendable, CustomStringConvertible {
        /// The same fields spelled with different case (lowercased names).
        case fieldNameCase(names: [String])
        case version(from: HTTPVersion, to: HTTPVersion)
        /// `content-length` or `transfer-encoding` added, removed or changed.
        case framing(names: [String])
        /// Hop-by-hop fields added, removed or changed.
        case hopByHop(names: [String])
        /// `Host` added, removed or changed while the authority stayed the same
        /// (HTTP/2 `:authority` against HTTP/1.1 `Host`).
        case host
        /// The number of `Cookie` fields changed, the joined value did not.
        case cookieCrumbs(from: Int, to: Int)
        /// Fields of different names appear in another order.
        case fieldOrder
        case targetForm(from: RequestTargetForm, to: RequestTargetForm)
        case reasonPhrase
        /// Trailer fields differ in name case or in order between names.
        case trailerFormatting
        /// The head bytes differ in nothing named above: whitespace around
        /// values, pseudo-field order, or similar formatting.
        case wireFormatting

        public var description: String {
            switch self {
            case .fieldNameCase(let names): return "field-name case (\(names.joined(separator: ", ")))"
            case .version(let from, let to): return "version \(from) → \(to)"
            case .framing(let names): return "framing (\(names.joined(separator: ", ")))"
            case .hopByHop(let names): return "hop-by-hop fields (\(names.joined(separator: ", ")))"
            case .host: return "Host field (authority unchanged)"
            case .cookieCrumbs(let from, let to): return "cookie crumbs (\(from) → \(to) fields)"
            case .fieldOrder: return "field order"
            case .targetForm(let from, let to): return "target form \(from.rawValue) → \(to.rawValue)"
            case .reasonPhrase: return "reason phrase"
            case .trailerFormatting: return "trailer formatting"
            case .wireFormatting: return "wire formatting"
            }
        }
    }

    /// A semantic difference.
    public enum Change: Codable, Hashable, Sendable, CustomStringConvertible {
        case statusChanged(from: Int, to: Int)
        case methodChanged(from: String, to: String)
        /// Scheme, authority or path changed.
        case targetChanged
        case fieldAdded(name: String)
        case fieldRemoved(name: String)
        /// The values of a field changed (including their order within the name).
        case fieldChanged(name: String)
        case bodyChanged(fromLength: Int, toLength: Int)
        case trailersChanged
        /// The semantic digests differ but no recorded detail says where: the
        /// two digests were made by builds with different canonical forms, or
        /// a request was compared with a response.
        case unexplained

        public var description: String {
            switch self {
            case .statusChanged(let from, let to): return "status \(from) → \(to)"
            case .methodChanged(let from, let to): return "method \(from) → \(to)"
            case .targetChanged: return "target changed"
            case .fieldAdded(let name): return "\(name) added"
            case .fieldRemoved(let name): return "\(name) removed"
            case .fieldChanged(let name): return "\(name) changed"
            case .bodyChanged(let from, let to): return "body changed (\(from) → \(to) bytes)"
            case .trailersChanged: return "trailers changed"
            case .unexplained: return "head changed (no detail recorded)"
            }
        }
    }

    public var verdict: Verdict
    /// Wire differences that do not change meaning; empty when identical.
    public var reasons: [Reason]
    /// Semantic differences; non-empty exactly when `verdict == .modified`.
    public var changes: [Change]

    /// Compares a message as seen before a hop with the same message after it.
    public init(before: MessageDigest, after: MessageDigest) {
        let bodyEqual = before.body.length == after.body.length && before.body.sha256 == after.body.sha256
        let trailersExactEqual = before.body.trailers?.exact == after.body.trailers?.exact
        let trailersSemanticEqual = before.body.trailers?.semantic == after.body.trailers?.semantic
        if before.head.exact == after.head.exact && before.head.semantic == after.head.semantic
            && bodyEqual && trailersExactEqual {
            self.init(verdict: .identical, reasons: [], changes: [])
            return
        }
        var reasons = DigestComparison.reasons(before.head, after.head)
        if !trailersExactEqual && trailersSemanticEqual { reasons.append(.trailerFormatting) }
        if before.head.semantic == after.head.semantic && bodyEqual && trailersSemanticEqual {
            self.init(verdict: .equivalent, reasons: reasons, changes: [])
            return
        }
        var changes = DigestComparison.headChanges(before.head, after.head)
        if !bodyEqual { changes.append(.bodyChanged(fromLength: before.body.length, toLength: after.body.length)) }
        if !trailersSemanticEqual { changes.append(.trailersChanged) }
        self.init(verdict: .modified, reasons: reasons, changes: changes)
    }

    public init(verdict: Verdict, reasons: [Reason], changes: [Change]) {
        self.verdict = verdict
        self.reasons = reasons
        self.changes = changes
    }
}

extension DigestComparison {
    /// The wire differences between two heads that the semantic form ignores.
    static func reasons(_ a: HeadDigest, _ b: HeadDigest) -> [Reason] {
        guard a.exact != b.exact else { return [] }
        var reasons: [Reason] = []
        if a.version != b.version { reasons.append(.version(from: a.version, to: b.version)) }
        if let from = a.targetForm, let to = b.targetForm, from != to { reasons.append(.targetForm(from: from, to: to)) }

        let spellingsA = spellings(a.fieldNames), spellingsB = spellings(b.fieldNames)
        let caseNames = spellingsA.keys.filter { name in
            spellingsB[name].map { $0 != spellingsA[name] } ?? false
        }.sorted()
        if !caseNames.isEmpty { reasons.append(.fieldNameCase(names: caseNames)) }

        let framing = HeadDigest.framingFieldNames.filter { a.fields[$0] != b.fields[$0] }.sorted()
        if !framing.isEmpty { reasons.append(.framing(names: framing)) }

        let hopByHop = Set(a.hopByHop).union(b.hopByHop).subtracting(HeadDigest.framingFieldNames).filter {
            !a.semanticallyIncludes($0) && !b.semanticallyIncludes($0) && a.fields[$0] != b.fields[$0]
        }.sorted()
        if !hopByHop.isEmpty { reasons.append(.hopByHop(names: hopByHop)) }

        if a.fields["host"] != b.fields["host"] && a.target == b.target { reasons.append(.host) }

        let cookiesA = a.fieldNames.count { HTTPField.lowercaseASCII($0) == "cookie" }
        let cookiesB = b.fieldNames.count { HTTPField.lowercaseASCII($0) == "cookie" }
        if cookiesA > 0 && cookiesB > 0 && cookiesA != cookiesB && a.fields["cookie"] == b.fields["cookie"] {
            reasons.append(.cookieCrumbs(from: cookiesA, to: cookiesB))
        }

        let orderA = firstOccurrences(a).filter(b.semanticallyIncludes)
        let orderB = firstOccurrences(b).filter(a.semanticallyIncludes)
        if orderA != orderB { reasons.append(.fieldOrder) }

        if let from = a.reasonPhrase, let to = b.reasonPhrase, from != to { reasons.append(.reasonPhrase) }

        if reasons.isEmpty && a.semantic == b.semantic { reasons.append(.wireFormatting) }
        return reasons
    }

    /// The semantic differences between two heads, fields in name order.
    static func headChanges(_ a: HeadDigest, _ b: HeadDigest) -> [Change] {
        guard a.semantic != b.semantic else { return [] }
        var changes: [Change] = []
        if let from = a.status, let to = b.status, from != to { changes.append(.statusChanged(from: from, to: to)) }
        if let from = a.method, let to = b.method, from != to { changes.append(.methodChanged(from: from, to: to)) }
        if a.target != b.target { changes.append(.targetChanged) }
        let names = Set(a.fields.keys.filter(a.semanticallyIncludes)).union(b.fields.keys.filter(b.semanticallyIncludes))
        for name in names.sorted() {
            switch (a.semanticallyIncludes(name), b.semanticallyIncludes(name)) {
            case (true, false): changes.append(.fieldRemoved(name: name))
            case (false, true): changes.append(.fieldAdded(name: name))
            default: if a.fields[name] != b.fields[name] { changes.append(.fieldChanged(name: name)) }
            }
        }
        if changes.isEmpty { changes.append(.unexplained) }
        return changes
    }

    /// The set of original spellings of each lowercased field name.
    private static func spellings(_ names: [String]) -> [String: Set<String>] {
        var result: [String: Set<String>] = [:]
        for name in names { result[HTTPField.lowercaseASCII(name), default: []].insert(name) }
        return result
    }

    /// The lowercased names the semantic form includes, in order of first appearance.
    private static func firstOccurrences(_ head: HeadDigest) -> [String] {
        var seen: Set<String> = []
        var order: [String] = []
        for name in head.fieldNames {
            let lower = HTTPField.lowercaseASCII(name)
            if seen.insert(lower).inserted && head.semanticallyIncludes(lower) { order.append(lower) }
        }
        return order
    }
}
