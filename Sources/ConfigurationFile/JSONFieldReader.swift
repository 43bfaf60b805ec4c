/// Reads the fields of one JSON object of a configuration file, turning
/// every problem into a `ConfigurationError` that names the position, the
/// JSON path and the context (a rule). Creating a reader checks that the
/// value is an object and, when `allowed` is given, that it has no other
/// field; the error for an unknown one lists the allowed fields.
///
/// Readers declare each object's fields once, as the `allowed` list beside
/// the code that reads them (`static let fields = [...]`), and read each
/// field with one typed call (`string`, `int`, `choice`, `object`, `objects`…).
public struct JSONFieldReader: Sendable {
    public let members: [LocatedJSON.Member]
    /// The JSON path of this object (`rules[1].match`); empty for the document.
    public let path: String
    public let position: SourcePosition
    /// What the object belongs to, for messages (`rule 2 ("strip")`).
    public let context: String?

    public init(_ json: LocatedJSON, path: String, context: String? = nil, allowed: [String]?) throws(ConfigurationError) {
        guard case .object(let members) = json.value else {
            throw ConfigurationError(kind: .wrongType(expected: "an object", found: json.typeName),
                                     position: json.position, context: context, path: path)
        }
        self.members = members
        self.path = path
        self.position = json.position
        self.context = context
        if let allowed, let unknown = members.first(where: { !allowed.contains($0.key) }) {
            throw ConfigurationError(kind: .unknownField(unknown.key, allowed: allowed),
                                     position: unknown.keyPosition, context: context, path: path)
        }
    }

    /// The path of a field of this object (`rules[1].match.leg`).
    public func path(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    public func value(_ key: String) -> LocatedJSON? { members.first { $0.key == key }?.value }

    public func has(_ key: String) -> Bool { value(key) != nil }

    /// An error about the value of `key` (or the object itself when absent).
    public func error(_ kind: ConfigurationError.Kind, _ key: String? = nil) -> ConfigurationError {
        let at = key.flatMap(value)
        return ConfigurationError(kind: kind, position: at?.position ?? position, context: context,
                                  path: key.map(path) ?? path)
    }

    private func wrongType(_ key: String, _ expected: String) -> ConfigurationError {
        error(.wrongType(expected: expected, found: value(key)?.typeName ?? "nothing"), key)
    }

    /// The object in field `key`, read with its own `allowed` fields.
    public func object(_ key: String, allowed: [String]) throws(ConfigurationError) -> JSONFieldReader? {
        guard let v = value(key) else { return nil }
        return try JSONFieldReader(v, path: path(key), context: context, allowed: allowed)
    }

    /// The array in field `key`, each element with its path (`tolerate[2]`).
    public func array(_ key: String) throws(ConfigurationError) -> [(value: LocatedJSON, path: String)]? {
        guard let v = value(key) else { return nil }
        guard case .array(let items) = v.value else { throw wrongType(key, "an array") }
        return items.enumerated().map { ($1, "\(path(key))[\($0)]") }
    }

    /// The array of objects in field `key`, each read with the same `allowed` fields.
    public func objects(_ key: String, allowed: [String]) throws(ConfigurationError) -> [JSONFieldReader]? {
        guard let items = try array(key) else { return nil }
        var readers: [JSONFieldReader] = []
        for item in items {
            readers.append(try JSONFieldReader(item.value, path: item.path, context: context, allowed: allowed))
        }
        return readers
    }

    public func required<T>(_ key: String, _ read: (String) throws(ConfigurationError) -> T?) throws(ConfigurationError) -> T {
        guard let v = try read(key) else { throw error(.missingField(key)) }
        return v
    }

    public func string(_ key: String) throws(ConfigurationError) -> String? {
        guard let v = value(key) else { return nil }
        guard case .string(let s) = v.value else { throw wrongType(key, "a string") }
        return s
    }

    /// A string that must not be empty.
    public func name(_ key: String) throws(ConfigurationError) -> String? {
        guard let s = try string(key) else { return nil }
        guard !s.isEmpty else { throw error(.outOfRange("an empty string", allowed: "at least one character"), key) }
        return s
    }

    public func bool(_ key: String) throws(ConfigurationError) -> Bool? {
        guard let v = value(key) else { return nil }
        guard case .bool(let b) = v.value else { throw wrongType(key, "true or false") }
        return b
    }

    public func double(_ key: String, in range: ClosedRange<Double>) throws(ConfigurationError) -> Double? {
        guard let v = value(key) else { return nil }
        guard case .number(let d) = v.value else { throw wrongType(key, "a number") }
        guard range.contains(d) else { throw error(.outOfRange("\(d)", allowed: "\(range.lowerBound)…\(range.upperBound)"), key) }
        return d
    }

    public func int(_ key: String, in range: ClosedRange<Int>) throws(ConfigurationError) -> Int? {
        guard let v = value(key) else { return nil }
        return try integer(v, path: path(key), in: range)
    }

    private func integer(_ v: LocatedJSON, path: String, in range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
        func fail(_ kind: ConfigurationError.Kind) -> ConfigurationError {
            ConfigurationError(kind: kind, position: v.position, context: context, path: path)
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
    public func strings(_ key: String) throws(ConfigurationError) -> [String]? {
        guard let v = value(key) else { return nil }
        switch v.value {
        case .string(let s): return [s]
        case .array(let items):
            var out: [String] = []
            for (i, item) in items.enumerated() {
                guard case .string(let s) = item.value else {
                    throw ConfigurationError(kind: .wrongType(expected: "a string", found: item.typeName),
                                             position: item.position, context: context, path: "\(path(key))[\(i)]")
                }
                out.append(s)
            }
            return out
        default:
            throw wrongType(key, "a string or an array of strings")
        }
    }

    /// One integer or an array of integers, each in `range`.
    public func ints(_ key: String, in range: ClosedRange<Int>) throws(ConfigurationError) -> [Int]? {
        guard let v = value(key) else { return nil }
        guard case .array(let items) = v.value else { return [try integer(v, path: path(key), in: range)] }
        var out: [Int] = []
        for (i, item) in items.enumerated() { out.append(try integer(item, path: "\(path(key))[\(i)]", in: range)) }
        return out
    }

    /// A value that must be one of an enumeration's raw values.
    public func choice<E: RawRepresentable & CaseIterable>(_ key: String, _ type: E.Type) throws(ConfigurationError) -> E? where E.RawValue == String {
        try choice(key, among: Array(E.allCases))
    }

    /// A value that must be the raw value of one of `cases`.
    public func choice<E: RawRepresentable>(_ key: String, among cases: [E]) throws(ConfigurationError) -> E? where E.RawValue == String {
        guard let s = try string(key) else { return nil }
        guard let e = cases.first(where: { $0.rawValue == s }) else {
            throw error(.unknownValue(s, allowed: cases.map(\.rawValue)), key)
        }
        return e
    }

    /// Each string must be one of an enumeration's raw values.
    public func choices<E: RawRepresentable & CaseIterable>(_ key: String, _ type: E.Type) throws(ConfigurationError) -> [E]? where E.RawValue == String {
        guard let all = try strings(key) else { return nil }
        var out: [E] = []
        for s in all {
            guard let e = E(rawValue: s) else { throw error(.unknownValue(s, allowed: E.allCases.map(\.rawValue)), key) }
            out.append(e)
        }
        return out
    }
}
