/// An option a command accepts: a flag (`--verbose`) or an option with a
/// value (`--dir DIR`, `--dir=DIR`, `-d DIR`, `-dDIR`).
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
    /// Used when the option is absent; shown in `--help` as "(default: …)".
    let defaultValue: String?
    /// Absent → usage error.
    let isRequired: Bool
    /// May be given several times (values collected in order); otherwise a repeat is a usage error.
    let isRepeatable: Bool

    /// A flag: present or not, never with a value.
    static func flag(_ long: String, short: Character? = nil, help: String) -> CommandOption {
        CommandOption(long: long, short: short, kind: .flag, help: help, defaultValue: nil,
                      isRequired: false, isRepeatable: false)
    }

    /// An option that takes a value.
    static func value(_ long: String, short: Character? = nil, valueName: String, help: String,
                      defaultValue: String? = nil, isRequired: Bool = false,
                      isRepeatable: Bool = false) -> CommandOption {
        CommandOption(long: long, short: short, kind: .value(valueName: valueName), help: help,
                      defaultValue: defaultValue, isRequired: isRequired, isRepeatable: isRepeatable)
    }

    /// An option that may be given alone or with an attached value (`--record-bodies[=LIMIT]`).
    static func optionalValue(_ long: String, valueName: String, help: String) -> CommandOption {
        CommandOption(long: long, short: nil, kind: .optionalValue(valueName: valueName), help: help,
                      defaultValue: nil, isRequired: false, isRepeatable: false)
    }

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
