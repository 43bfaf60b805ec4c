import ConfigurationFile

/// Which rule of a file an error is about: its position in `rules` and,
/// once read, its name. It is the `context` of the rule file's `ConfigurationError`s.
public struct RuleReference: Sendable, Hashable, CustomStringConvertible {
    /// The position in the `rules` array, from 0.
    public var index: Int
    public var name: String?

    public init(index: Int, name: String?) {
        self.index = index
        self.name = name
    }

    public var description: String { "rule \(index + 1)" + (name.map { " (\"\($0)\")" } ?? "") }
}

/// Why a rule file was refused: a `ConfigurationError` whose context is the rule.
public typealias FaultRuleError = ConfigurationError

extension ConfigurationError {
    init(kind: Kind, position: SourcePosition, rule: RuleReference?, path: String) {
        self.init(kind: kind, position: position, context: rule?.description, path: path)
    }
}
