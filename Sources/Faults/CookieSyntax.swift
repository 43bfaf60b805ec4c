/// A `Set-Cookie` value split into `name=value` and its attributes (RFC 6265 §4.1).
/// Rendering joins the pieces with "; ", so an untouched value is given back
/// byte for byte only by not rendering it: callers render only what they changed.
struct SetCookieValue {
    var name: String
    var value: String
    var attributes: [(name: String, value: String?)]

    init(_ text: String) {
        let pieces = text.split(separator: ";", omittingEmptySubsequences: false).map { $0.trimmingSpaces }
        let pair = pieces.first ?? ""
        if let eq = pair.firstIndex(of: "=") {
            name = pair[..<eq].trimmingSpaces
            value = pair[pair.index(after: eq)...].trimmingSpaces
        } else {
            name = ""
            value = pair
        }
        attributes = pieces.dropFirst().filter { !$0.isEmpty }.map { piece in
            if let eq = piece.firstIndex(of: "=") {
                return (piece[..<eq].trimmingSpaces, piece[piece.index(after: eq)...].trimmingSpaces)
            }
            return (piece, nil)
        }
    }

    /// The cookie name a `Set-Cookie` value sets.
    static func cookieName(_ text: String) -> String { SetCookieValue(text).name }

    mutating func edit(_ attribute: String, _ edit: SetCookieEdit.Attribute) {
        let lower = attribute.lowercased()
        let index = attributes.firstIndex { $0.name.lowercased() == lower }
        switch (edit, index) {
        case (.remove, _):
            attributes.removeAll { $0.name.lowercased() == lower }
        case (.set(let value), let i?):
            attributes[i] = (attributes[i].name, value)
        case (.set(let value), nil):
            attributes.append((attribute, value))
        }
    }

    var rendered: String {
        var out = name.isEmpty ? value : "\(name)=\(value)"
        for (n, v) in attributes { out += v.map { "; \(n)=\($0)" } ?? "; \(n)" }
        return out
    }
}

/// The crumbs of a `Cookie` field value (`a=1; b=2`).
struct CookieCrumbs {
    var crumbs: [(name: String, text: String)]

    init(_ value: String) {
        crumbs = value.split(separator: ";").map { $0.trimmingSpaces }.filter { !$0.isEmpty }.map { crumb in
            let name = crumb.firstIndex(of: "=").map { crumb[..<$0].trimmingSpaces } ?? crumb
            return (name, crumb)
        }
    }

    func contains(_ name: String) -> Bool { crumbs.contains { $0.name == name } }

    var rendered: String { crumbs.map(\.text).joined(separator: "; ") }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (HTTP's OWS).
    var trimmingSpaces: String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" { s.removeLast() }
        return String(s)
    }
}
