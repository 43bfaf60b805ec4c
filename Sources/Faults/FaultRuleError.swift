/// Which rule of a file an error is about: its position in `rules` and,
/// once read, its name.
public struct RuleReference: Sendable, Hashable, CustomStringConvertible {
    /// The position in the `rules` array, from 0.
    public var index: Int
    public var name: String?

    public var description: String { "rule \(index + 1)" + (name.map { " (\"\($0)\")" } ?? "") }
}

/// Why a rule file was refused, and exactly where: the line and column, the
/// rule, the JSON path of the offending value (`rules[1].match.leg`).
public struct FaultRuleError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// The file is not JSON.
        case syntax(String)
        /// A field this object does not have; `allowed` lists the ones it has.
        case unknownField(String, allowed: [String])
        case missingField(String)
        case wrongType(expected: String, found: String)
        /// A value outside its range; `allowed` says which range.
        case outOfRange(String, allowed: String)
        /// A name that is not one of `allowed` (a leg, a step, an action).
        case unknownValue(String, allowed: [String])
        case invalidRegex(pattern: String, reason: String)
        /// Values that do not fit together (a status match on the request leg).
        case inconsistent(String)
    }

    public var kind: Kind
    public var position: SourcePosition
    public var rule: RuleReference?
    /// The JSON path of the value, empty for the document itself.
    public var path: String
    /// The file name, for messages; set by whoever read the file.
    public var file: String?

    public init(kind: Kind, position: SourcePosition, rule: RuleReference?, path: String, file: String? = nil) {
        self.kind = kind
        self.position = position
        self.rule = rule
        self.path = path
        self.file = file
    }

    /// `rules.json:7:15: rule 2 ("strip") at rules[1].match: unknown field "lge" (allowed: leg, step, …)`
    public var description: String {
        var where_ = "\(file ?? "rules"):\(position.line):\(position.column):"
        if let rule { where_ += " \(rule)" }
        if !path.isEmpty { where_ += " at \(path)" }
        return "\(where_): \(message)"
    }

    /// The problem itself, without the place.
    public var message: String {
        switch kind {
        case .syntax(let text): return "not valid JSON: \(text)"
        case .unknownField(let field, let allowed): return "unknown field \"\(field)\" (allowed: \(allowed.joined(separator: ", ")))"
        case .missingField(let field): return "missing field \"\(field)\""
        case .wrongType(let expected, let found): return "expected \(expected), found \(found)"
        case .outOfRange(let value, let allowed): return "\(value) is out of range (\(allowed))"
        case .unknownValue(let value, let allowed): return "unknown value \"\(value)\" (one of: \(allowed.joined(separator: ", ")))"
        case .invalidRegex(let pattern, let reason): return "regex \"\(pattern)\" does not compile: \(reason)"
        case .inconsistent(let text): return text
        }
    }
}
