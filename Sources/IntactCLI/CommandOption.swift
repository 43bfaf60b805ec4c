/// The untyped description of one option, as the parser and `--help` read
/// it: a flag (`--verbose`) or an option with a value (`--dir DIR`,
/// `--dir=DIR`, `-d DIR`, `-dDIR`). Commands never build these directly:
/// they declare an `Option<Value>` (see Option.swift), which carries one.
struct CommandOption: Sendable {
    enum Kind: Sendable, Equatable {
        case flag
        /// `valueName` is the placeholder shown in usage ("DIR").
        case value(valueName: String)
        /// `--name` alone (an empty value) or `--name=VALUE`; never takes the
        /// next word, so it can stand before a positional argument.
        case optionalValue(valueName: String)
    }

    /// The name after `--`.
    let long: String
    /// The letter after `-`, if any.
    let short: Character?
    let kind: Kind
    /// One line for `--help`.
    let help: String
    /// The default as `--help` shows it ("(default: …)"); nil when there is none to show.
    let shownDefault: String?
    /// Absent → usage error.
    let isRequired: Bool
    /// May be given several times (values collected in order); otherwise a repeat is a usage error.
    let isRepeatable: Bool
    /// Turns the texts given on the command line (in order; empty when the
    /// option is absent, `[""]` for a flag or a bare optional value) into the
    /// option's typed value, boxed. Throws `InvalidOptionValue` for a text
    /// the option does not accept. The parser calls it once per parse, so
    /// every value a command reads has already been checked.
    let resolve: @Sendable ([String]) throws -> any Sendable

    /// "--dir DIR", "--verbose" or "--limit[=N]", as usage and error messages show it.
    var synopsis: String {
        switch kind {
        case .flag: return "--" + long
        case let .value(valueName): return "--\(long) \(valueName)"
        case let .optionalValue(valueName): return "--\(long)[=\(valueName)]"
        }
    }
}

/// A positional argument of a command.
struct CommandArgument: Sendable {
    enum Arity: Sendable, Equatable {
        case required, optional, zeroOrMore
    }

    /// The placeholder shown in usage ("NAME") and the key for `ParsedArguments.argument(_:)`.
    let name: String
    let help: String
    let arity: Arity

    init(_ name: String, help: String, arity: Arity = .required) {
        self.name = name
        self.help = help
        self.arity = arity
    }

    /// "NAME", "[NAME]" or "[NAME...]".
    var synopsis: String {
        switch arity {
        case .required: return name
        case .optional: return "[\(name)]"
        case .zeroOrMore: return "[\(name)...]"
        }
    }
}
