/// One node of the `intact` command tree: a group of subcommands (`intact
/// ca`) or a runnable command (`intact ca init`), with the options and
/// positional arguments it accepts and the text its `--help` prints.
///
/// A new subcommand is one file that defines a `Command` value plus one line
/// in `CommandRegistry.commands`. A new option is one property of the
/// command's `OptionGroup` (`let keepAlive = Option.value("keep-alive",
/// .integer(in: 0...600), help: "…", default: 60)`), read with
/// `arguments[options.keepAlive]`; see Option.swift and ValueParser.swift.
/// `-h`/`--help` is accepted by every command without being declared.
struct Command: Sendable {
    /// What a runnable command does with its parsed arguments; returns the
    /// exit status. Throwing `UsageError` prints the command's usage and exits
    /// with status 2; any other error prints `intact: <error>` and exits with 1.
    typealias Run = @Sendable (ParsedArguments, CommandContext) throws -> Int32

    /// The word that selects the command ("issue-client").
    let name: String
    /// One line for command lists and the top of `--help`.
    let summary: String
    /// Further paragraphs for `--help`; empty for none.
    let discussion: String
    /// Positional arguments, in order. Only the last may be `.zeroOrMore`.
    let arguments: [CommandArgument]
    /// Options, in the order `--help` lists them (the declaration order of the command's `OptionGroup`).
    let options: [CommandOption]
    /// Subcommands; a command with subcommands and no `run` is a pure group.
    let subcommands: [Command]
    /// `nil` for a pure group.
    let run: Run?

    init(name: String, summary: String, discussion: String = "", arguments: [CommandArgument] = [],
         options: some OptionGroup = NoOptions(), subcommands: [Command] = [], run: Run? = nil) {
        precondition(arguments.dropLast().allSatisfy { $0.arity != .zeroOrMore },
                     "only the last positional argument of \(name) may repeat")
        precondition(subcommands.isEmpty || arguments.isEmpty,
                     "\(name) cannot take both subcommands and positional arguments")
        self.name = name
        self.summary = summary
        self.discussion = discussion
        self.arguments = arguments
        self.options = options.declarations
        var longNames: Set<String> = ["help"]
        var shortNames: Set<Character> = ["h"]
        for option in self.options {
            precondition(longNames.insert(option.long).inserted, "\(name) declares --\(option.long) twice")
            if let short = option.short {
                precondition(shortNames.insert(short).inserted, "\(name) declares -\(short) twice")
            }
        }
        self.subcommands = subcommands
        self.run = run
    }

    func subcommand(named word: String) -> Command? {
        subcommands.first { $0.name == word }
    }

    /// The option spelled `--long`.
    func option(long: String) -> CommandOption? {
        options.first { $0.long == long }
    }

    /// The option spelled `-s`.
    func option(short: Character) -> CommandOption? {
        options.first { $0.short == short }
    }
}

/// The chain of commands from `intact` to the one being parsed or run;
/// `description` is how the user typed it ("intact ca init").
struct CommandPath: Sendable, CustomStringConvertible {
    let commands: [Command]

    var command: Command { commands[commands.count - 1] }

    var description: String { commands.map(\.name).joined(separator: " ") }

    func appending(_ command: Command) -> CommandPath {
        CommandPath(commands: commands + [command])
    }
}
