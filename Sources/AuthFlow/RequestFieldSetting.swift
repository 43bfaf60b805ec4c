import HTTP

/// One change to the fields the client sends on every request
/// (`SignInFlow.Configuration.requestFields`), as `intact client
/// --request-field` and a scenario's `client.requestFields` give it:
/// `Name: value` sets the field (replacing a default of that name), `Name:`
/// with no value removes it.
///
/// Invariant: `name` is a token (RFC 9110 `tchar`) and not a field the flow
/// sets itself per request (`Host`, `Accept`, `Cookie`, `Content-Type`,
/// `Content-Length`, the trace field); `value` holds no CR, LF or NUL.
public struct RequestFieldSetting: Hashable, Sendable, CustomStringConvertible {
    public let name: String
    /// The value to send, or nil to send no such field.
    public let value: String?

    /// Fields the flow writes itself on each request: a setting cannot name them.
    public static let reservedNames: Set<String> = ["host", "accept", "cookie", "content-type", "content-length",
                                                     HTTPField.lowercaseASCII(SignInFlow.traceFieldName)]

    /// Why a text is not a setting, in words that complete "expected …".
    public static let expected = "NAME: VALUE (or NAME: to send no such field), NAME a field name other than "
        + "Host, Accept, Cookie, Content-Type, Content-Length and Intact-Trace"

    /// RFC 9110 §5.6.2 `tchar`: the characters of a field name.
    private static let tchar = Set("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ!#$%&'*+-.^_`|~".unicodeScalars)

    /// Parses `Name: value` / `Name:`; nil when the text is not one (see `expected`).
    public init?(parsing text: String) {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let name = String(text[..<colon])
        let value = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty, name.unicodeScalars.allSatisfy(RequestFieldSetting.tchar.contains),
              !RequestFieldSetting.reservedNames.contains(HTTPField.lowercaseASCII(name)),
              !value.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) else { return nil }
        self.name = name
        self.value = value.isEmpty ? nil : value
    }

    public var description: String { "\(name): \(value ?? "")" }

    /// `fields` with each setting applied in order: a set replaces every
    /// field of its name where the first one was (or is appended), a removal drops them.
    public static func apply(_ settings: [RequestFieldSetting], to fields: [HTTPField]) -> [HTTPField] {
        var result = fields
        for setting in settings {
            let name = HTTPField.Name(setting.name)
            let first = result.firstIndex { $0.hasName(name) }
            result.removeAll { $0.hasName(name) }
            guard let value = setting.value else { continue }
            result.insert(HTTPField(name: setting.name, value: value), at: min(first ?? result.count, result.count))
        }
        return result
    }
}
