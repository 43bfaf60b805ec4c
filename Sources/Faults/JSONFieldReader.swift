/// Reads the fields of one JSON object of a rule file, turning every
/// problem into a `FaultRuleError` that names the rule, the path and the
/// position. Creating a reader checks that the value is an object and, when
/// `allowed` is given, that it has no other field.
struct JSONFieldReader {
    let members: [LocatedJSON.Member]
    let path: String
    let position: SourcePosition
    let rule: RuleReference?

    init(_ json: LocatedJSON, path: String, rule: RuleReference?, allowed: [String]?) throws(FaultRuleError) {
        guard case .object(let members) = json.value else {
            throw FaultRuleError(kind: .wrongType(expected: "an object", found: json.typeName),
                                 position: json.position, rule: rule, path: path)
        }
        self.members = members
        self.path = path
        self.position = json.position
        self.rule = rule
        if let allowed, let unknown = members.first(where: { !allowed.contains($0.key) }) {
            throw FaultRuleError(kind: .unknownField(unknown.key, allowed: allowed),
                                 position: unknown.keyPosition, rule: rule, path: path)
        }
    }

    func path(_ key: String) -> String { "\(path).\(key)" }

    func value(_ key: String) -> LocatedJSON? { members.first { $0.key == key }?.value }

    func has(_ key: String) -> Bool { value(key) != nil }

    /// An error about the value of `key` (or the object itself when absent).
    func error(_ kind: FaultRuleError.Kind, _ key: String? = nil) -> FaultRuleError {
        let at = key.flatMap(value)
        return FaultRuleError(kind: kind, position: at?.position ?? position, rule: rule, path: key.map(path) ?? path)
    }

    private func wrongType(_ key: String, _ expected: String) -> FaultRuleError {
        error(.wrongType(expected: expected, found: value(key)?.typeName ?? "nothing"), key)
    }

    func required<T>(_ key: String, _ read: (String) throws(FaultRuleError) -> T?) throws(FaultRuleError) -> T {
        guard let v = try read(key) else { throw error(.missingField(key)) }
        return v
    }

    func string(_ key: String) throws(FaultRuleError) -> String? {
        guard let v = value(key) else { return nil }
        guard case .string(let s) = v.value else { throw wrongType(key, "a string") }
        return s
    }

    /// A string that must not be empty.
    func name(_ key: String) throws(FaultRuleError) -> String? {
        guard let s = try string(key) else { return nil }
        guard !s.isEmpty else { throw error(.outOfRange("an empty string", allowed: "at least one character"), key) }
        return s
    }

    func bool(_ key: String) throws(FaultRuleError) -> Bool? {
        guard let v = value(key) else { return nil }
        guard case .bool(let b) = v.value else { throw wrongType(key, "true or false") }
        return b
    }

    func double(_ key: String, in range: ClosedRange<Double>) throws(FaultRuleError) -> Double? {
        guard let v = value(key) else { return nil }
        guard case .number(let d) = v.value else { throw wrongType(key, "a number") }
        guard range.contains(d) else { throw error(.outOfRange("\(d)", allowed: "\(range.lowerBound)…\(range.upperBound)"), key) }
        return d
    }

    func int(_ key: String, in range: ClosedRange<Int>) throws(FaultRuleError) -> Int? {
        guard let v = value(key) else { return nil }
        return try integer(v, path: path(key), in: range)
    }

    private func integer(_ v: LocatedJSON, path: String, in range: ClosedRange<Int>) throws(FaultRuleError) -> Int {
        func fail(_ kind: FaultRuleError.Kind) -> FaultRuleError {
            FaultRuleError(kind: kind, position: v.position, rule: rule, path: path)
        }
        guard case .number(let d) = v.value, d.rounded() == d, abs(d) < 0x1p53 else {
            throw fail(.wrongType(expected: "an integer", found: v.typeName))
        }
        let n = Int(d)
        guard range.contains(n) else {
            let upper = range.upperBound == Int.max ? "" : "\(range.upperBound)"
            throw fail(.outOfRange("\(n)", allowed: "\(range.lowerBound)…\(upper)"))
        }
        return n
    }

    /// One string or an array of strings.
    func strings(_ key: String) throws(FaultRuleError) -> [String]? {
        guard let v = value(key) else { return nil }
        switch v.value {
        case .string(let s): return [s]
        case .array(let items):
            var out: [String] = []
            for (i, item) in items.enumerated() {
                guard case .string(let s) = item.value else {
                    throw FaultRuleError(kind: .wrongType(expected: "a string", found: item.typeName),
                                         position: item.position, rule: rule, path: "\(path(key))[\(i)]")
                }
                out.append(s)
            }
            return out
        default:
            throw wrongType(key, "a string or an array of strings")
        }
    }

    /// One integer or an array of integers, each in `range`.
    func ints(_ key: String, in range: ClosedRange<Int>) throws(FaultRuleError) -> [Int]? {
        guard let v = value(key) else { return nil }
        guard case .array(let items) = v.value else { return [try integer(v, path: path(key), in: range)] }
        var out: [Int] = []
        for (i, item) in items.enumerated() { out.append(try integer(item, path: "\(path(key))[\(i)]", in: range)) }
        return out
    }

    /// A value that must be one of an enumeration's raw values.
    func choice<E: RawRepresentable & CaseIterable>(_ key: String, _ type: E.Type) throws(FaultRuleError) -> E? where E.RawValue == String {
        guard let s = try string(key) else { return nil }
        guard let e = E(rawValue: s) else { throw error(.unknownValue(s, allowed: E.allCases.map(\.rawValue)), key) }
        return e
    }

    /// Each string must be one of an enumeration's raw values.
    func choices<E: RawRepresentable & CaseIterable>(_ key: String, _ type: E.Type) throws(FaultRuleError) -> [E]? where E.RawValue == String {
        guard let all = try strings(key) else { return nil }
        var out: [E] = []
        for s in all {
            guard let e = E(rawValue: s) else { throw error(.unknownValue(s, allowed: E.allCases.map(\.rawValue)), key) }
            out.append(e)
        }
        return out
    }

    func regex(_ key: String) throws(FaultRuleError) -> CompiledRegex? {
        guard let pattern = try string(key) else { return nil }
        do throws(InvalidRegex) {
            return try CompiledRegex(pattern)
        } catch {
            throw self.error(.invalidRegex(pattern: pattern, reason: error.reason), key)
        }
    }

    /// A cookie attribute edit: a string sets `Name=value`, `true` sets a flag, `false` or `null` removes it.
    func attribute(_ key: String) throws(FaultRuleError) -> SetCookieEdit.Attribute? {
        guard let v = value(key) else { return nil }
        switch v.value {
        case .string(let s): return .set(s)
        case .bool(true): return .set(nil)
        case .bool(false), .null: return .remove
        default: throw wrongType(key, "a string, true, false or null")
        }
    }
}
