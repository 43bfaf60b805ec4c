import Foundation
import Hashing
import HTTP

/// What a recording keeps in clear, and how it digests the rest.
///
/// Unless `recordSecrets` is set, secrets are replaced by keyed digests
/// (`SecretDigester`, `hmac-sha256:<hex>`) under the setup's digest key:
/// - field values of `Cookie`, `Set-Cookie`, `Authorization`,
///   `Proxy-Authorization` and every extra secret name;
/// - values of query parameters in the request target, of fields in stored
///   `application/x-www-form-urlencoded` bodies and of string members (any
///   depth) of stored JSON bodies whose name is a secret parameter: `token`, `code`, `codeVerifier`, `pw`, `password`,
///   `csrf` (the credentials of the sign-in flow) and every extra secret
///   name. `codeChallenge` is public by design (PKCE) and stays in clear.
///
/// Names match case-insensitively. A value is digested as it was on the
/// wire (still percent-encoded, or JSON-escaped), so the same value gives the same
/// digest at every tap that shares the key.
///
/// The same key keys every digest of message content (`digests`: heads,
/// bodies, trailers, relayed streams), whether or not secrets are recorded
/// in clear: a sign-in form body `pw=…` or a head with a `Cookie` then has
/// no digest anyone without the key can test guesses against.
///
/// The recording header carries the policy with the key's fingerprint
/// (`digestKey`), never the key.
public struct RedactionPolicy: Codable, Hashable, Sendable {
    /// Field names (lowercased) that are secret in every policy.
    public static let defaultSecretNames = Set(defaultSecretNameLiterals.map(\.description))
    /// The same names as literals, lowercase ASCII (`defaultSecretName(ofLength:)`
    /// lists them by length; its test checks the two agree).
    static let defaultSecretNameLiterals: [StaticString] = [
        "cookie", "set-cookie", "authorization", "proxy-authorization",
    ]
    /// The default secret name of `length` bytes, if there is one (no two
    /// have one length; `RedactionPolicyTests` checks this against
    /// `defaultSecretNameLiterals`): the one name a field of that length
    /// can match, so `isSecret` compares a recorded field's name with at
    /// most one name, and most fields with none, without hashing it or
    /// iterating a set. A switch, not a table: nothing to load or to
    /// initialise once per call.
    @inline(__always)
    static func defaultSecretName(ofLength length: Int) -> StaticString? {
        switch length {
        case 6: "cookie"
        case 10: "set-cookie"
        case 13: "authorization"
        case 19: "proxy-authorization"
        default: nil
        }
    }

    /// True when `name` is one of the default secret names, ignoring ASCII case.
    @inline(__always)
    private static func isDefaultSecret(_ name: String) -> Bool {
        guard let secret = defaultSecretName(ofLength: name.utf8.count) else { return false }
        return RedactionPolicy.name(name, is: secret)
    }

    /// True when `name` is `lower` (lowercase ASCII of the same length as
    /// `name`'s UTF-8) ignoring ASCII case. Borrows only `name`'s bytes and
    /// stops at the first byte that differs (for most names of a secret
    /// name's length, the first: `server`, `user-agent`, `last-modified`).
    @inline(__always)
    private static func name(_ name: String, is lower: StaticString) -> Bool {
        let bytes = name.utf8Span.span
        let other = lower.utf8Start
        for offset in 0..<bytes.count {
            let byte = bytes[offset]
            if (byte &- 0x41 < 26 ? byte | 0x20 : byte) != other[offset] { return false }
        }
        return true
    }
    /// Query parameter and form field names (lowercased) that are secret in every policy.
    public static let defaultSecretParameterNames: Set<String> = ["token", "code", "codeverifier", "pw", "password", "csrf"]

    /// The prefix of a redacted value.
    public static let redactedPrefix = SecretDigester.prefix

    /// What a policy holds, shared: a policy is immutable once made and is
    /// copied into every recorder and every record it finishes, so a copy is
    /// one reference rather than a retain of each name set, string and key.
    private final class Storage: Sendable {
        let recordSecrets: Bool
        let extraSecretNames: Set<String>
        let digestKey: String?
        let digester: SecretDigester

        init(recordSecrets: Bool, extraSecretNames: Set<String>, digestKey: String?, digester: SecretDigester) {
            self.recordSecrets = recordSecrets
            self.extraSecretNames = extraSecretNames
            self.digestKey = digestKey
            self.digester = digester
        }
    }

    private let storage: Storage

    /// Keep secret values in clear.
    public var recordSecrets: Bool { storage.recordSecrets }
    /// Further secret names, lowercased: field names and parameter names alike (`--secret-name`).
    public var extraSecretNames: Set<String> { storage.extraSecretNames }
    /// The fingerprint of the digest key (nil when secrets are recorded in clear).
    public var digestKey: String? { storage.digestKey }
    /// The key secrets are digested under; not written to the recording.
    private var digester: SecretDigester { storage.digester }

    /// What every digest of message content is taken with: HMAC-SHA-256
    /// under the digest key (also with `recordSecrets`, so the taps of a
    /// setup compare whatever each keeps in clear).
    public var digests: DigestFunction { storage.digester.digests }

    /// - Parameter digester: the setup's key (`DigestKeyFile`); by default a
    ///   key made for this process only.
    public init(recordSecrets: Bool = false, extraSecretNames: [String] = [],
                digester: SecretDigester = .ephemeral) {
        storage = Storage(recordSecrets: recordSecrets, extraSecretNames: Set(extraSecretNames.map(HTTPField.lowercaseASCII)),
                          digestKey: recordSecrets ? nil : digester.fingerprint, digester: digester)
    }

    /// True when values of this field are secret (whatever `recordSecrets` says).
    public func isSecret(_ name: String) -> Bool {
        isSecret(HTTPField(name: name, value: ""))
    }

    /// True when values of `field` are secret (whatever `recordSecrets` says).
    public func isSecret(_ field: HTTPField) -> Bool {
        // Most names are none of these: rule them out without lowercasing
        // (which builds a String for a long name with capitals, on every field).
        if RedactionPolicy.isDefaultSecret(field.name) { return true }
        return !storage.extraSecretNames.isEmpty && storage.extraSecretNames.contains(HTTPField.lowercaseASCII(field.name))
    }

    /// True when a query parameter or form field of this name (already
    /// percent-decoded) carries a secret.
    public func isSecretParameter(_ name: String) -> Bool {
        let lower = HTTPField.lowercaseASCII(name)
        return RedactionPolicy.defaultSecretParameterNames.contains(lower) || extraSecretNames.contains(lower)
    }

    /// The field as the recording keeps it. A redacted `Cookie` or
    /// `Set-Cookie` also keeps its cookies part by part (`CookieParts`):
    /// names and attributes in clear, each value digested under the same
    /// key, so a comparison can name the part that changed.
    public func record(_ field: HTTPField) -> RecordedField {
        guard !recordSecrets, isSecret(field) else { return RecordedField(name: field.name, value: field.value) }
        let cookies = RecordedField.cookieParts(name: field.name, value: field.value)?.map { $0.redacted(redactedValue) }
        return RecordedField(name: field.name, value: redactedValue(field.value), redacted: true, cookies: cookies)
    }

    /// A field section as the recording keeps it, order and case kept.
    /// (The array's `map`, not the collection's: one allocation of the
    /// final size, elements read from the buffer in place.)
    public func record(_ fields: HTTPFields) -> [RecordedField] {
        fields.fields.map(record)
    }

    /// A request target (path and query) as the recording keeps it: the
    /// values of secret query parameters digested, everything else as sent.
    public func recordTarget(_ path: String) -> String {
        guard !recordSecrets, let question = path.utf8.firstIndex(of: UInt8(ascii: "?")) else { return path }
        let query = path.utf8[path.utf8.index(after: question)...]
        guard let redacted = redactPairs(query) else { return path }
        return String(decoding: path.utf8[...question], as: UTF8.self) + String(decoding: redacted, as: UTF8.self)
    }

    /// A stored body as the recording keeps it: for an
    /// `application/x-www-form-urlencoded` body, the values of secret fields
    /// digested; for a JSON body (`application/json`, `…+json`), the string
    /// values of members with a secret name, at any depth; any other body as it is.
    public func recordBody(_ body: StoredBody?, contentType: String?) -> StoredBody? {
        guard !recordSecrets, let body, let contentType, let bytes = body.bytes else { return body }
        let type = HTTPField.lowercaseASCII(contentType).split(separator: ";").first?
            .trimmingCharacters(in: .whitespaces) ?? ""
        let redacted: [UInt8]?
        if type == "application/x-www-form-urlencoded" {
            redacted = redactPairs(bytes[...])
        } else if type == "application/json" || type.hasSuffix("+json") {
            redacted = redactJSONMembers(bytes)
        } else {
            redacted = nil
        }
        guard let redacted else { return body }
        return StoredBody(base64: Data(redacted).base64EncodedString(), truncated: body.truncated)
    }

    /// JSON text with the string value of every member whose name is a
    /// secret parameter replaced by the digest of its bytes as written
    /// (escapes included); nil when there is none. A linear scan of strings,
    /// so it also works on a truncated body; it never reorders or reformats.
    private func redactJSONMembers(_ bytes: [UInt8]) -> [UInt8]? {
        let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
        /// The index after the string starting at `start` (a quote), or nil if it does not end.
        func stringEnd(_ start: Int) -> Int? {
            var index = start + 1
            while index < bytes.count {
                if bytes[index] == backslash { index += 2; continue }
                if bytes[index] == quote { return index + 1 }
                index += 1
            }
            return nil
        }
        func skipSpace(_ index: Int) -> Int {
            var index = index
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
            return index
        }
        var output: [UInt8] = []
        var copied = 0
        var index = 0
        while index < bytes.count {
            guard bytes[index] == quote, let keyEnd = stringEnd(index) else { index += 1; continue }
            let colon = skipSpace(keyEnd)
            guard colon < bytes.count, bytes[colon] == UInt8(ascii: ":") else { index = keyEnd; continue }
            let valueStart = skipSpace(colon + 1)
            let name = String(decoding: bytes[(index + 1)..<(keyEnd - 1)], as: UTF8.self)
            guard isSecretParameter(name), valueStart < bytes.count, bytes[valueStart] == quote,
                  let valueEnd = stringEnd(valueStart) else { index = keyEnd; continue }
            output.append(contentsOf: bytes[copied...valueStart])
            output.append(contentsOf: digester.digest(bytes[(valueStart + 1)..<(valueEnd - 1)]).utf8)
            output.append(quote)
            copied = valueEnd
            index = valueEnd
        }
        guard copied > 0 else { return nil }
        output.append(contentsOf: bytes[copied...])
        return output
    }

    /// The keyed digest standing in for a secret value (its wire,
    /// ISO-8859-1, bytes): the one function every secret value (a whole
    /// field, a cookie's value) is digested with.
    public func redactedValue(_ value: String) -> String {
        digester.digest(value.latin1Bytes)
    }

    /// `name=value&…` with each secret value replaced by its digest; nil when
    /// no pair is secret (the caller keeps the original).
    private func redactPairs<Bytes: BidirectionalCollection>(_ pairs: Bytes) -> [UInt8]? where Bytes.Element == UInt8 {
        var output: [UInt8] = []
        var changed = false
        var first = true
        for pair in pairs.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false) {
            if !first { output.append(UInt8(ascii: "&")) }
            first = false
            guard let equals = pair.firstIndex(of: UInt8(ascii: "=")),
                  isSecretParameter(RedactionPolicy.formDecoded(pair[..<equals])) else {
                output.append(contentsOf: pair)
                continue
            }
            output.append(contentsOf: pair[...equals])
            output.append(contentsOf: digester.digest(pair[pair.index(after: equals)...]).utf8)
            changed = true
        }
        return changed ? output : nil
    }

    /// A form-encoded name: `+` is a space, `%XX` a byte; invalid escapes kept as they are.
    private static func formDecoded<Bytes: Collection>(_ name: Bytes) -> String where Bytes.Element == UInt8 {
        let text = String(decoding: name.map { $0 == UInt8(ascii: "+") ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
        return text.removingPercentEncoding ?? text
    }

    // MARK: Codable and Hashable: what the header records

    private enum CodingKeys: String, CodingKey {
        case recordSecrets, extraSecretNames, digestKey
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        // A policy read back from a header digests nothing; its key is not in the file.
        storage = Storage(recordSecrets: try container.decode(Bool.self, forKey: .recordSecrets),
                          extraSecretNames: try container.decode(Set<String>.self, forKey: .extraSecretNames),
                          digestKey: try container.decodeIfPresent(String.self, forKey: .digestKey),
                          digester: .ephemeral)
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(recordSecrets, forKey: .recordSecrets)
        try container.encode(extraSecretNames.sorted(), forKey: .extraSecretNames)
        try container.encodeIfPresent(digestKey, forKey: .digestKey)
    }

    public static func == (a: RedactionPolicy, b: RedactionPolicy) -> Bool {
        a.recordSecrets == b.recordSecrets && a.extraSecretNames == b.extraSecretNames && a.digestKey == b.digestKey
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(recordSecrets)
        hasher.combine(extraSecretNames)
        hasher.combine(digestKey)
    }
}

/// One field as a recording keeps it: original name case, value in clear or
/// redacted.
public struct RecordedField: Codable, Hashable, Sendable {
    public var name: String
    /// The value, or `hmac-sha256:<hex>` when `redacted`.
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
