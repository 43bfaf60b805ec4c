/// Changes to one `Set-Cookie` value: its cookie value and its attributes.
public struct SetCookieEdit: Sendable, Hashable {
    /// What happens to one attribute.
    public enum Attribute: Sendable, Hashable {
        /// Sets `Name=value`, or the flag `Name` when the value is nil; replaces an existing one in place.
        case set(String?)
        /// Removes the attribute.
        case remove
    }

    /// A new cookie value, or nil to keep it.
    public var value: String?
    /// Attribute edits by canonical name (`Path`, `Domain`, `Secure`, `HttpOnly`,
    /// `SameSite`, `Max-Age`, `Expires`), applied in this order.
    public var attributes: [(name: String, edit: Attribute)]

    public init(value: String? = nil, attributes: [(name: String, edit: Attribute)] = []) {
        self.value = value
        self.attributes = attributes
    }

    public static func == (a: SetCookieEdit, b: SetCookieEdit) -> Bool {
        a.value == b.value && a.attributes.elementsEqual(b.attributes) { $0.name == $1.name && $0.edit == $1.edit }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(value)
        for (name, edit) in attributes {
            hasher.combine(name)
            hasher.combine(edit)
        }
    }

    /// Applies the edit to a `Set-Cookie` value; returns it unchanged when nothing applies.
    func apply(to setCookie: String) -> String {
        var cookie = SetCookieValue(setCookie)
        if let value { cookie.value = value }
        for (name, edit) in attributes { cookie.edit(name, edit) }
        return cookie.rendered
    }

    /// "Path=/; no Secure; SameSite=Strict" for the record.
    var summary: String {
        var parts: [String] = []
        if value != nil { parts.append("value changed") }
        for (name, edit) in attributes {
            switch edit {
            case .set(let v?): parts.append("\(name)=\(v)")
            case .set(nil): parts.append(name)
            case .remove: parts.append("no \(name)")
            }
        }
        return parts.joined(separator: "; ")
    }
}
