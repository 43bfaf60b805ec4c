/// The options and positional arguments of one parsed invocation, with
/// defaults applied. Asking for an option or argument the command does not
/// declare is a programming error and traps.
struct ParsedArguments: Sendable {
    /// The command that was invoked.
    let path: CommandPath
    /// Values by long option name, in the order given; a flag given once has one empty value.
    let optionValues: [String: [String]]
    /// Positional values by argument name; `.zeroOrMore` may hold several.
    let argumentValues: [String: [String]]

    private var command: Command { path.command }

    private func declared(_ long: String) -> CommandOption {
        guard let option = command.option(long: long) else {
            preconditionFailure("\(path) declares no option --\(long)")
        }
        return option
    }

    /// Whether the flag `--long` was given.
    func flag(_ long: String) -> Bool {
        precondition(declared(long).kind == .flag, "--\(long) of \(path) is not a flag")
        return optionValues[long] != nil
    }

    /// The last value given for `--long`, else its default, else `nil`.
    func value(_ long: String) -> String? {
        optionValues[long]?.last ?? declared(long).defaultValue
    }

    /// Every value given for a repeatable `--long`, in order; the default (if any) when none was given.
    func values(_ long: String) -> [String] {
        optionValues[long] ?? declared(long).defaultValue.map { [$0] } ?? []
    }

    /// Whether `--long` was given explicitly (as opposed to defaulted).
    func isGiven(_ long: String) -> Bool {
        _ = declared(long)
        return optionValues[long] != nil
    }

    /// `value(long)` as a whole number within `range`, or `nil` when absent
    /// with no default. Throws a usage error naming the option for anything else.
    func integer(_ long: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = value(long) else { return nil }
        guard let number = Int(text), range.contains(number) else {
            throw UsageError("option --\(long) expects a whole number from \(range.lowerBound) to "
                             + "\(range.upperBound), got '\(text)'", path: path)
        }
        return number
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
