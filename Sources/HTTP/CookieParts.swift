/// One cookie split into the parts that are digested and compared one by
/// one: a crumb of a `Cookie` field (`name=value`), or a `Set-Cookie` line
/// (`name=value` and its attributes, RFC 6265 §4.1).
///
/// A recording keeps a secret cookie as these parts with only the value
/// digested (the name and the attributes are not secret), so a comparison
/// names exactly what an intermediary changed: an attribute added, a path
/// rewritten, the value replaced, a whole cookie added or removed.
///
/// Parsing never fails: a `Set-Cookie` line that is not `name=value` followed
/// by well-formed attributes is kept as one opaque part (`opaque`): `value`
/// holds the whole line and no attribute is split out.
public struct CookieParts: Codable, Hashable, Sendable {
    /// The cookie name, trimmed; for an opaque part, the text before its first `=`, or empty when it has none.
    public var name: String
    /// The value in clear, or its digest when recorded redacted; for an opaque part, the whole line.
    public var value: String
    /// Each attribute as written, trimmed (`Path=/suite`, `HttpOnly`), in order; empty for a `Cookie` crumb.
    public var attributes: [String]
    /// True when the line could not be split into parts: it is compared as one.
    public var opaque: Bool?

    public init(name: String, value: String, attributes: [String] = [], opaque: Bool = false) {
        self.name = name
        self.value = value
        self.attributes = attributes
        self.opaque = opaque ? true : nil
    }

    public var isOpaque: Bool { opaque == true }

    /// The parts of one `Set-Cookie` line.
    public static func setCookie(_ line: String) -> CookieParts {
        let pieces = line.split(separator: ";", omittingEmptySubsequences: false).map { trim($0) }
        var attributes = Array(pieces.dropFirst())
        // One trailing "; " is common and harmless; any other empty attribute is malformed.
        if attributes.last == "" { attributes.removeLast() }
        let pair = pieces.first ?? ""
        // An opaque part is named only when its pair has a name (a pair without `=` may be all secret).
        let opaqueName = pair.contains("=") ? trim(pair.prefix { $0 != "=" }) : ""
        guard let eq = pair.firstIndex(of: "="), !trim(pair[..<eq]).isEmpty,
              attributes.allSatisfy(isWellFormedAttribute) else {
            return CookieParts(name: opaqueName, value: line, opaque: true)
        }
        return CookieParts(name: trim(pair[..<eq]), value: trim(pair[pair.index(after: eq)...]), attributes: attributes)
    }

    /// The crumbs of one `Cookie` field value (`a=1; b=2`); a crumb without `=` is opaque.
    public static func cookie(_ value: String) -> [CookieParts] {
        value.split(separator: ";").map { trim($0) }.filter { !$0.isEmpty }.map { crumb in
            guard let eq = crumb.firstIndex(of: "="), !trim(crumb[..<eq]).isEmpty else {
                return CookieParts(name: "", value: crumb, opaque: true)
            }
            return CookieParts(name: trim(crumb[..<eq]), value: trim(crumb[crumb.index(after: eq)...]))
        }
    }

    /// The same parts with the value replaced by `digest(value)` (the name and
    /// attributes are not secret and stay in clear; an opaque part is all value).
    public func redacted(_ digest: (String) -> String) -> CookieParts {
        CookieParts(name: name, value: digest(value), attributes: attributes, opaque: isOpaque)
    }

    /// An attribute is `name` or `name=value` with a token name (RFC 9110 `tchar`) and no control byte.
    static func isWellFormedAttribute(_ attribute: String) -> Bool {
        let name = attribute.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first.map { trim($0) } ?? ""
        guard !name.isEmpty, HTTP1Grammar.isToken(name.utf8) else { return false }
        return !attribute.utf8.contains { $0 < 0x20 || $0 == 0x7F }
    }

    /// The attribute's name, lowercased, and its value ("" for a flag).
    static func split(attribute: String) -> (name: String, value: String) {
        let halves = attribute.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        return (HTTPField.lowercaseASCII(trim(halves[0])), halves.count > 1 ? trim(halves[1]) : "")
    }
}

/// One difference between two sets of cookies (the `Set-Cookie` lines of two
/// responses, or the `Cookie` crumbs of two requests), compared by name: the
/// words the verifier's report and the client's checks both use.
public enum CookieChange: Hashable, Sendable, CustomStringConvertible {
    case added(name: String)
    case removed(name: String)
    /// The value changed; `secret` when either side is a digest (then no value is shown).
    case valueChanged(name: String, from: String, to: String, secret: Bool)
    case attributeAdded(name: String, attribute: String)
    case attributeRemoved(name: String, attribute: String)
    /// An attribute of the same name has another value (`Path` `/suite` → `/`).
    case attributeChanged(name: String, attribute: String, from: String, to: String)
    /// A line that could not be split into parts changed; it was compared whole.
    case opaqueChanged(name: String)

    /// The cookie the change is about.
    public var cookie: String {
        switch self {
        case .added(let name), .removed(let name), .valueChanged(let name, _, _, _), .attributeAdded(let name, _),
             .attributeRemoved(let name, _), .attributeChanged(let name, _, _, _), .opaqueChanged(let name):
            return name
        }
    }

    /// `SERVERID added`, `JSESSIONID: attribute SameSite=None added`,
    /// `JSESSIONID: Path changed (/suite → /)`, `JSESSIONID: value changed (secret)`.
    public var description: String {
        switch self {
        case .added(let name): return "\(name) added"
        case .removed(let name): return "\(name) removed"
        case .valueChanged(let name, let from, let to, let secret):
            return "\(name): value changed" + (secret ? " (secret)" : " (\(from) → \(to))")
        case .attributeAdded(let name, let attribute): return "\(name): attribute \(attribute) added"
        case .attributeRemoved(let name, let attribute): return "\(name): attribute \(attribute) removed"
        case .attributeChanged(let name, let attribute, let from, let to):
            return "\(name): \(attribute) changed (\(from) → \(to))"
        case .opaqueChanged(let name):
            return "\(name.isEmpty ? "a malformed Set-Cookie" : name) changed "
                + "(malformed Set-Cookie, kept verbatim and compared as one opaque part)"
        }
    }

    /// The changes from `before` to `after`, by cookie name in order of first
    /// appearance (before's names first); cookies of one name pair in order.
    /// `isSecret` says whether a value is a digest rather than the value.
    public static func compare(_ before: [CookieParts], _ after: [CookieParts],
                               isSecret: (String) -> Bool = { _ in false }) -> [CookieChange] {
        var names: [String] = []
        for part in before + after where !names.contains(part.name) { names.append(part.name) }
        var changes: [CookieChange] = []
        for name in names {
            let old = before.filter { $0.name == name }, new = after.filter { $0.name == name }
            for index in 0..<max(old.count, new.count) {
                switch (index < old.count ? old[index] : nil, index < new.count ? new[index] : nil) {
                case (nil, _?): changes.append(.added(name: name))
                case (_?, nil): changes.append(.removed(name: name))
                case let (a?, b?): changes += compare(a, b, isSecret: isSecret)
                case (nil, nil): break
                }
            }
        }
        return changes
    }

    private static func compare(_ a: CookieParts, _ b: CookieParts, isSecret: (String) -> Bool) -> [CookieChange] {
        if a.isOpaque || b.isOpaque {
            return a == b ? [] : [.opaqueChanged(name: a.name)]
        }
        var changes: [CookieChange] = []
        if a.value != b.value {
            changes.append(.valueChanged(name: a.name, from: a.value, to: b.value, secret: isSecret(a.value) || isSecret(b.value)))
        }
        let old = a.attributes.map(CookieParts.split), new = b.attributes.map(CookieParts.split)
        var seen: Set<String> = []
        for (index, attribute) in old.enumerated() where seen.insert(attribute.name).inserted {
            if let match = new.last(where: { $0.name == attribute.name }) {
                let mine = old.last { $0.name == attribute.name }!
                if mine.value != match.value {
                    let spelled = b.attributes.first { CookieParts.split(attribute: $0).name == attribute.name }
                        .map { trim($0.prefix { $0 != "=" }) } ?? a.attributes[index]
                    changes.append(.attributeChanged(name: a.name, attribute: spelled, from: mine.value, to: match.value))
                }
            } else {
                changes.append(.attributeRemoved(name: a.name, attribute: a.attributes[index]))
            }
        }
        for (index, attribute) in new.enumerated() where !old.contains(where: { $0.name == attribute.name }) {
            changes.append(.attributeAdded(name: a.name, attribute: b.attributes[index]))
        }
        return changes
    }
}

/// Trims spaces and tabs (RFC 6265's whitespace around cookie parts).
private func trim<S: StringProtocol>(_ text: S) -> String {
    var slice = Substring(text)
    while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
    while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
    return String(slice)
}
