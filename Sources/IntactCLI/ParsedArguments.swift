/// The options and positional arguments of one parsed invocation, every
/// option's value already converted to its declared type and checked.
/// Reading an option the command does not declare is a programming error and traps.
struct ParsedArguments: Sendable {
    /// The command that was invoked.
    let path: CommandPath
    /// The texts given, by long option name, in order; a flag given once has one empty text.
    let givenTexts: [String: [String]]
    /// Every declared option's typed value (defaults applied), by long name.
    let optionValues: [String: any Sendable]
    /// Positional values by argument name; `.zeroOrMore` may hold several.
    let argumentValues: [String: [String]]

    private var command: Command { path.command }

    /// The value of `option`: its default, nil, `[]` or `false` when it was not given.
    subscript<Value>(option: Option<Value>) -> Value {
        guard let boxed = optionValues[option.long], let value = boxed as? Value else {
            preconditionFailure("\(path) declares no option --\(option.long) of type \(Value.self)")
        }
        return value
    }

    /// Whether `option` was given explicitly (as opposed to defaulted).
    func isGiven<Value>(_ option: Option<Value>) -> Bool {
        givenTexts[option.long] != nil
    }

    /// The last text given for `option`, as typed (for recordings that note the options used).
    func givenText(_ option: any OptionDeclaring) -> String? {
        givenTexts[option.declaration.long]?.last
    }

    /// The value of a `.required` positional argument (the parser refuses a command line without it).
    func requiredArgument(_ name: String) -> String {
        precondition(command.arguments.contains { $0.name == name && $0.arity == .required },
                     "\(path) declares no required argument \(name)")
        return argumentValues[name]?.first ?? ""
    }

    /// The value of a required or optional positional argument.
    func argument(_ name: String) -> String? {
        precondition(command.arguments.contains { $0.name == name }, "\(path) declares no argument \(name)")
        return argumentValues[name]?.first
    }

    /// Every value of a repeating positional argument.
    func arguments(_ name: String) -> [String] {
        precondition(command.arguments.contains { $0.name == name }, "\(path) declares no argument \(name)")
        return argumentValues[name] ?? []
    }
}
