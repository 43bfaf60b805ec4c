import HTTP

/// The judgement of one message as two observation points saw it (before and
/// after a hop), made from digests alone so it works on redacted recordings.
/// `HTTP` computes the digests; judging them is the verifier's, here, in the
/// report's own vocabulary (`HopVerdict`, `Equivalence`).
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

    /// `identical`, `equivalent` or `modified`: the verdicts a comparison of two present messages can reach.
    public var verdict: HopVerdict
    /// Wire differences that do not change meaning; empty when identical.
    public var reasons: [Equivalence]
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

    public init(verdict: HopVerdict, reasons: [Equivalence], changes: [Change]) {
        self.verdict = verdict
        self.reasons = reasons
        self.changes = changes
    }
}

extension DigestComparison {
    /// The wire differences between two heads that the semantic form ignores.
    static func reasons(_ a: HeadDigest, _ b: HeadDigest) -> [Equivalence] {
        guard a.exact != b.exact else { return [] }
        var reasons: [Equivalence] = []
        if a.version != b.version { reasons.append(.version(from: a.version, to: b.version)) }
        if let from = a.targetForm, let to = b.targetForm, from != to { reasons.append(.targetForm(from: from, to: to)) }

        let spellingsA = spellings(a.fieldNames), spellingsB = spellings(b.fieldNames)
        let caseNames = spellingsA.keys.filter { name in
            spellingsB[name].map { $0 != spellingsA[name] } ?? false
        }.sorted()
        if !caseNames.isEmpty { reasons.append(.fieldNameCase(names: caseNames)) }

        let framing = HopByHopFieldNames.framing.filter { a.fields[$0] != b.fields[$0] }.sorted()
        if !framing.isEmpty { reasons.append(.framing(names: framing)) }

        let hopByHop = Set(a.hopByHop).union(b.hopByHop).subtracting(HopByHopFieldNames.framing).filter {
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

        if let from = a.pseudoFieldOrder, let to = b.pseudoFieldOrder, from.shared(with: to) != to.shared(with: from) {
            reasons.append(.pseudoFieldOrder(from: from, to: to))
        }

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

/// The wire differences a comparison names, each with its kind and sentence.
extension Equivalence {
    /// The same fields spelled with different case (lowercased names).
    public static func fieldNameCase(names: [String]) -> Equivalence {
        Equivalence(kind: .fieldNameCase, text: "field-name case (\(names.joined(separator: ", ")))")
    }
    public static func version(from: HTTPVersion, to: HTTPVersion) -> Equivalence {
        Equivalence(kind: .version, text: "version \(from) → \(to)")
    }
    /// `content-length` or `transfer-encoding` added, removed or changed.
    public static func framing(names: [String]) -> Equivalence {
        Equivalence(kind: .framing, text: "framing (\(names.joined(separator: ", ")))")
    }
    /// Hop-by-hop fields added, removed or changed.
    public static func hopByHop(names: [String]) -> Equivalence {
        Equivalence(kind: .hopByHop, text: "hop-by-hop fields (\(names.joined(separator: ", ")))")
    }
    /// `Host` added, removed or changed while the authority stayed the same
    /// (HTTP/2 `:authority` against HTTP/1.1 `Host`).
    public static let host = Equivalence(kind: .host, text: "Host field (authority unchanged)")
    /// The number of `Cookie` fields changed, the joined value did not.
    public static func cookieCrumbs(from: Int, to: Int) -> Equivalence {
        Equivalence(kind: .cookieCrumbs, text: "cookie crumbs (\(from) → \(to) fields)")
    }
    /// Fields of different names appear in another order.
    public static let fieldOrder = Equivalence(kind: .fieldOrder, text: "field order")
    public static func targetForm(from: RequestTargetForm, to: RequestTargetForm) -> Equivalence {
        Equivalence(kind: .targetForm, text: "target form \(from.rawValue) → \(to.rawValue)")
    }
    public static let reasonPhrase = Equivalence(kind: .reasonPhrase, text: "reason phrase")
    /// HTTP/2 pseudo-fields in another order (a proxy re-emitting them in its
    /// own): `pseudo-header order (:method :authority :scheme :path → :method :scheme :authority :path)`.
    public static func pseudoFieldOrder(from: HTTP2PseudoFieldOrder, to: HTTP2PseudoFieldOrder) -> Equivalence {
        Equivalence(kind: .pseudoHeaderOrder, text: "pseudo-header order (\(from) → \(to))")
    }
    /// Trailer fields differ in name case or in order between names.
    public static let trailerFormatting = Equivalence(kind: .trailerFormatting, text: "trailer formatting")
    /// The head bytes differ in nothing named above: whitespace around
    /// values, or the pseudo-field order in a record of a build that did not
    /// record it, or similar formatting.
    public static let wireFormatting = Equivalence(kind: .wireFormatting, text: "wire formatting")
}
