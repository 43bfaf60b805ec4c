import ConfigurationFile

/// The values only rule files have: regexes and cookie attribute edits.
extension JSONFieldReader {
    init(_ json: LocatedJSON, path: String, rule: RuleReference?, allowed: [String]?) throws(ConfigurationError) {
        try self.init(json, path: path, context: rule?.description, allowed: allowed)
    }

    func regex(_ key: String) throws(ConfigurationError) -> CompiledRegex? {
        guard let pattern = try string(key) else { return nil }
        do throws(InvalidRegex) {
            return try CompiledRegex(pattern)
        } catch {
            throw self.error(.invalidRegex(pattern: pattern, reason: error.reason), key)
        }
    }

    /// A cookie attribute edit: a string sets `Name=value`, `true` sets a flag, `false` or `null` removes it.
    func attribute(_ key: String) throws(ConfigurationError) -> SetCookieEdit.Attribute? {
        guard let v = value(key) else { return nil }
        switch v.value {
        case .string(let s): return .set(s)
        case .bool(true): return .set(nil)
        case .bool(false), .null: return .remove
        default: throw error(.wrongType(expected: "a string, true, false or null", found: v.typeName), key)
        }
    }
}
