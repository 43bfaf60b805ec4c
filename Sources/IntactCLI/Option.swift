/// One option of a command, declared once with the type commands read it
/// as: `Option<Int>` (with a default or required), `Option<String?>` (may
/// be absent), `Option<[String]>` (repeatable), `Option<Bool>` (a flag).
///
/// A command reads it with `arguments[options.listen]`, which returns a
/// `Value` that was already checked when the command line was parsed: a
/// misspelt option is a compile error, a bad value a usage error naming the
/// option ("option --listen expects …, got '…'"), and no command unwraps a
/// default it knows is there.
///
/// Declare options as stored properties of an `OptionGroup`; that one
/// declaration is also what makes the command accept the option and what
/// `--help` lists (in declaration order).
struct Option<Value: Sendable>: Sendable, OptionDeclaring {
    let declaration: CommandOption

    /// The name after `--`.
    var long: String { declaration.long }
}

extension Option {
    /// `--long VALUE`; `defaultValue` when absent. `--help` shows the default
    /// as `shownDefault`, else as the value's description.
    static func value(_ long: String, short: Character? = nil, _ parser: ValueParser<Value>, help: String,
                      default defaultValue: Value, shownDefault: String? = nil) -> Option<Value> {
        Option(declaration: CommandOption(
            long: long, short: short, kind: .value(valueName: parser.valueName), help: help,
            shownDefault: shownDefault ?? "\(defaultValue)", isRequired: false, isRepeatable: false,
            resolve: { texts in try texts.last.map { try parser.parse(option: long, $0) } ?? defaultValue }))
    }

    /// `--long VALUE` that must be given.
    static func required(_ long: String, short: Character? = nil, _ parser: ValueParser<Value>,
                         help: String) -> Option<Value> {
        Option(declaration: CommandOption(
            long: long, short: short, kind: .value(valueName: parser.valueName), help: help,
            shownDefault: nil, isRequired: true, isRepeatable: false,
            resolve: { texts in
                // The parser reports a missing required option before resolving.
                guard let text = texts.last else { throw InvalidOptionValue(option: long, expected: "a value", got: "") }
                return try parser.parse(option: long, text)
            }))
    }

    /// `--long VALUE` that may be absent (nil).
    static func optional<Wrapped>(_ long: String, short: Character? = nil, _ parser: ValueParser<Wrapped>,
                                  help: String) -> Option<Wrapped?> where Value == Wrapped? {
        Option(declaration: CommandOption(
            long: long, short: short, kind: .value(valueName: parser.valueName), help: help,
            shownDefault: nil, isRequired: false, isRepeatable: false,
            resolve: { texts in try texts.last.map { try parser.parse(option: long, $0) } as Wrapped? }))
    }

    /// `--long VALUE` given any number of times; the values in order.
    static func repeatable<Element>(_ long: String, short: Character? = nil, _ parser: ValueParser<Element>,
                                    help: String) -> Option<[Element]> where Value == [Element] {
        Option(declaration: CommandOption(
            long: long, short: short, kind: .value(valueName: parser.valueName), help: help,
            shownDefault: nil, isRequired: false, isRepeatable: true,
            resolve: { texts in try texts.map { try parser.parse(option: long, $0) } }))
    }

    /// `--long` alone (`whenAlone`), `--long=VALUE`, or absent (nil):
    /// `--record-bodies[=LIMIT]`.
    static func optionalValue<Wrapped>(_ long: String, _ parser: ValueParser<Wrapped>, whenAlone: Wrapped,
                                       help: String) -> Option<Wrapped?> where Value == Wrapped? {
        Option(declaration: CommandOption(
            long: long, short: nil, kind: .optionalValue(valueName: parser.valueName), help: help,
            shownDefault: nil, isRequired: false, isRepeatable: false,
            resolve: { texts in
                guard let text = texts.last else { return nil as Wrapped? }
                return text.isEmpty ? whenAlone : try parser.parse(option: long, text)
            }))
    }
}

extension Option where Value == Bool {
    /// `--long`: present or not, never with a value.
    static func flag(_ long: String, short: Character? = nil, help: String) -> Option<Bool> {
        Option(declaration: CommandOption(
            long: long, short: short, kind: .flag, help: help, shownDefault: nil, isRequired: false,
            isRepeatable: false, resolve: { texts in !texts.isEmpty }))
    }
}

/// Anything that declares one option: `Option<Value>` for every `Value`.
protocol OptionDeclaring: Sendable {
    var declaration: CommandOption { get }
}

/// A value (usually a struct) whose stored properties are the options of a
/// command: `Option<…>` values and nested groups shared by several commands
/// (`FaultOptions`, `RecordingOptions`). The command accepts exactly these
/// options, and `--help` lists them in the order the properties are declared,
/// nested groups in place. Adding an option to a command is adding one property.
protocol OptionGroup: Sendable {}

extension OptionGroup {
    /// Every option of the group, nested groups flattened, in declaration order.
    var declarations: [CommandOption] {
        Mirror(reflecting: self).children.flatMap { child -> [CommandOption] in
            if let option = child.value as? any OptionDeclaring { return [option.declaration] }
            if let group = child.value as? any OptionGroup { return group.declarations }
            return []
        }
    }
}

/// The options of a command that has none.
struct NoOptions: OptionGroup {}
