import HTTP

/// Which field values a recording keeps in clear.
///
/// Secret values (by default `Cookie`, `Set-Cookie`, `Authorization`,
/// `Proxy-Authorization`, plus any configured names) are replaced by
/// `sha256:<hex>`, the SHA-256 of the value's wire bytes, unless
/// `recordSecrets` is set. The digest lets two recordings show the same
/// secret crossed a hop unchanged without revealing it; a low-entropy secret
/// can still be guessed from it, so recordings stay private files.
public struct RedactionPolicy: Codable, Hashable, Sendable {
    /// Field names (lowercased) that are secret in every policy.
    public static let defaultSecretNames: Set<String> = ["cookie", "set-cookie", "authorization", "proxy-authorization"]

    /// The prefix of a redacted value.
    public static let redactedPrefix = "sha256:"

    /// Keep secret values in clear.
    public var recordSecrets: Bool
    /// Further secret field names, lowercased.
    public var extraSecretNames: Set<String>

    public init(recordSecrets: Bool = false, extraSecretNames: [String] = []) {
        self.recordSecrets = recordSecrets
        self.extraSecretNames = Set(extraSecretNames.map(HTTPField.lowercaseASCII))
    }

    /// True when values of this field are secret (whatever `recordSecrets` says).
    public func isSecret(_ name: String) -> Bool {
        let lower = HTTPField.lowercaseASCII(name)
        return RedactionPolicy.defaultSecretNames.contains(lower) || extraSecretNames.contains(lower)
    }

    /// The field as the recording keeps it. A redacted `Cookie` or
    /// `Set-Cookie` also keeps its cookies part by part (`CookieParts`):
    /// names and attributes in clear, each value digested, so a comparison
    /// can name the part that changed.
    public func record(_ field: HTTPField) -> RecordedField {
        guard !recordSecrets, isSecret(field.name) else { return RecordedField(name: field.name, value: field.value) }
        let cookies = RecordedField.cookieParts(name: field.name, value: field.value)?.map {
            $0.redacted(RedactionPolicy.redactedValue)
        }
        return RecordedField(name: field.name, value: RedactionPolicy.redactedValue(field.value), redacted: true,
                             cookies: cookies)
    }

    /// A field section as the recording keeps it, order and case kept.
    public func record(_ fields: HTTPFields) -> [RecordedField] {
        fields.map(record)
    }

    /// `sha256:` followed by the hex SHA-256 of the value's wire (ISO-8859-1)
    /// bytes. The one function every secret value (a whole field, a cookie's
    /// value) is digested with.
    public static func redactedValue(_ value: String) -> String {
        redactedPrefix + SHA256Digest.of(value.latin1Bytes).hex
    }
}

/// One field as a recording keeps it: original name case, value in clear or
/// redacted.
public struct RecordedField: Codable, Hashable, Sendable {
    public var name: String
    /// The value, or `sha256:<hex>` when `redacted`.
    public var value: String
    /// True when `value` is a digest standing in for a secret; absent otherwise.
    public var redacted: Bool?
    /// A redacted `Cookie` or `Set-Cookie`: its cookies part by part, values
    /// digested (`CookieParts`); absent otherwise.
    public var cookies: [CookieParts]?

    public init(name: String, value: String, redacted: Bool? = nil, cookies: [CookieParts]? = nil) {
        self.name = name
        self.value = value
        self.redacted = redacted == true ? true : nil
        self.cookies = cookies
    }

    public var isRedacted: Bool { redacted == true }

    /// The cookies of a `Cookie` (its crumbs) or `Set-Cookie` (one line) field
    /// value; nil for any other field.
    public static func cookieParts(name: String, value: String) -> [CookieParts]? {
        switch HTTPField.lowercaseASCII(name) {
        case "cookie": return CookieParts.cookie(value)
        case "set-cookie": return [CookieParts.setCookie(value)]
        default: return nil
        }
    }

    /// This field's cookies: as recorded part by part, else parsed from a
    /// value in clear; nil for another field, or a redacted one recorded
    /// without parts (an older build).
    public var cookieParts: [CookieParts]? {
        if let cookies { return cookies }
        return isRedacted ? nil : RecordedField.cookieParts(name: name, value: value)
    }
}
