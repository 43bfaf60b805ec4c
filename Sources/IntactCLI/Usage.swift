/// Renders the `--help` text of a command: usage line, summary and
/// discussion, subcommands, arguments, and every option with its default.
enum Usage {
    /// The implicit help option every command accepts.
    static let helpOption = Option.flag("help", short: "h", help: "show this help").declaration

    static func render(_ path: CommandPath) -> String {
        let command = path.command
        var text = "Usage: \(synopsis(path))\n\n\(command.summary)\n"
        if !command.discussion.isEmpty {
            text += "\n\(command.discussion)\n"
        }
        if !command.subcommands.isEmpty {
            text += "\nCommands:\n" + table(command.subcommands.map { ($0.name, $0.summary) })
        }
        if !command.arguments.isEmpty {
            text += "\nArguments:\n" + table(command.arguments.map { ($0.synopsis, $0.help) })
        }
        text += "\nOptions:\n" + table((command.options + [helpOption]).map { (left(of: $0), right(of: $0)) })
        if !command.subcommands.isEmpty {
            text += "\nRun '\(path) <command> --help' for a command's options.\n"
        }
        return text
    }

    /// "intact ca issue-client NAME --out FILE [options]".
    static func synopsis(_ path: CommandPath) -> String {
        let command = path.command
        var parts = [path.description]
        if !command.subcommands.isEmpty {
            parts.append(command.run == nil ? "<command>" : "[<command>]")
        }
        parts += command.arguments.map(\.synopsis)
        parts += command.options.filter(\.isRequired).map(\.synopsis)
        if command.options.contains(where: { !$0.isRequired }) {
            parts.append("[options]")
        }
        return parts.joined(separator: " ")
    }

    private static func left(of option: CommandOption) -> String {
        let short = option.short.map { "-\($0), " } ?? ""
        return short + option.synopsis
    }

    /// The help column of an option: its help, then what the parser adds
    /// (default, required, repeatable), each said once.
    static func right(of option: CommandOption) -> String {
        var text = option.help
        if let shown = option.shownDefault { text += " (default: \(shown))" }
        if option.isRequired { text += " (required)" }
        if option.isRepeatable { text += " (repeatable)" }
        return text
    }

    /// Two aligned columns, indented by two spaces.
    private static func table(_ rows: [(String, String)]) -> String {
        let width = min(28, rows.map(\.0.count).max() ?? 0) + 2
        return rows.map { left, right in
            let padding = left.count < width ? String(repeating: " ", count: width - left.count) : "\n" + String(repeating: " ", count: width + 2)
            return "  " + left + padding + right + "\n"
        }.joined()
    }
}
