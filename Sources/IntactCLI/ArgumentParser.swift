/// Turns the words after `intact` into the command to run and its arguments.
///
/// Grammar: subcommand words come first (`intact ca issue-client`); then,
/// in any order, options and positional arguments of that command. Options:
/// `--name value`, `--name=value`, `-n value`, `-nvalue`, flags `--name`/`-n`.
/// A value that begins with `-` must be attached (`--password=-x`). `--` ends
/// options; everything after it is positional. `-h`/`--help` anywhere (before
/// `--`) asks for the help of the command named so far, whatever else is wrong.
struct ArgumentParser {
    /// What the command line asks for.
    enum Outcome {
        /// Print the usage of this command, exit 0.
        case help(CommandPath)
        /// Run the command's `run` with these arguments.
        case run(ParsedArguments)
    }

    let root: Command

    func parse(_ words: [String]) throws -> Outcome {
        if let helpPath = helpRequest(in: words) {
            return .help(helpPath)
        }
        var state = State(path: CommandPath(commands: [root]))
        var index = 0
        var optionsEnded = false
        while index < words.count {
            let word = words[index]
            index += 1
            if optionsEnded || !Self.looksLikeOption(word) {
                try state.acceptWord(word)
            } else if word == "--" {
                optionsEnded = true
            } else if word.hasPrefix("--") {
                try state.acceptLongOption(word, following: words, index: &index)
            } else {
                try state.acceptShortOption(word, following: words, index: &index)
            }
        }
        return .run(try state.finish())
    }

    /// The command path whose help was asked for, when `-h`/`--help` occurs before `--`.
    private func helpRequest(in words: [String]) -> CommandPath? {
        let options = words.prefix { $0 != "--" }
        guard options.contains("-h") || options.contains("--help") else { return nil }
        var path = CommandPath(commands: [root])
        for word in options where !Self.looksLikeOption(word) {
            guard let next = path.command.subcommand(named: word) else { break }
            path = path.appending(next)
        }
        return path
    }

    /// Whether `word` is an option rather than a value: it starts with `-`,
    /// is not `-` alone (often "standard input") and is not a negative number.
    private static func looksLikeOption(_ word: String) -> Bool {
        guard word.hasPrefix("-") && word != "-" else { return false }
        let digits = word.dropFirst()
        return !digits.allSatisfy { $0.isASCII && ($0.isNumber || $0 == ".") }
    }

    /// The command reached so far and what was collected for it.
    private struct State {
        var path: CommandPath
        var optionValues: [String: [String]] = [:]
        var positionals: [String] = []

        var command: Command { path.command }

        /// A subcommand name (while nothing was given to the current
        /// command yet) or a positional argument.
        mutating func acceptWord(_ word: String) throws {
            if !command.subcommands.isEmpty && optionValues.isEmpty && positionals.isEmpty {
                guard let next = command.subcommand(named: word) else {
                    throw UsageError("unknown command '\(word)' for '\(path)'", path: path)
                }
                path = path.appending(next)
                return
            }
            positionals.append(word)
        }

        mutating func acceptLongOption(_ word: String, following words: [String], index: inout Int) throws {
            let body = word.dropFirst(2)
            let name = String(body.prefix { $0 != "=" })
            let attached = body.firstIndex(of: "=").map { String(body[body.index(after: $0)...]) }
            guard let option = command.option(long: name) else {
                throw UsageError("unknown option '--\(name)' for '\(path)'", path: path)
            }
            try accept(option, spelled: "--" + name, attached: attached, following: words, index: &index)
        }

        mutating func acceptShortOption(_ word: String, following words: [String], index: inout Int) throws {
            let letter = word[word.index(after: word.startIndex)]
            guard let option = command.option(short: letter) else {
                throw UsageError("unknown option '-\(letter)' for '\(path)'", path: path)
            }
            let rest = String(word.dropFirst(2))
            let attached: String? = rest.isEmpty ? nil : (rest.hasPrefix("=") ? String(rest.dropFirst()) : rest)
            try accept(option, spelled: "-" + String(letter), attached: attached, following: words, index: &index)
        }

        private mutating func accept(_ option: CommandOption, spelled: String, attached: String?,
                                     following words: [String], index: inout Int) throws {
            if optionValues[option.long] != nil && !option.isRepeatable {
                throw UsageError("option \(spelled) given more than once", path: path)
            }
            switch option.kind {
            case .flag:
                guard attached == nil else {
                    throw UsageError("option \(spelled) is a flag and takes no value", path: path)
                }
                optionValues[option.long, default: []].append("")
            case .optionalValue:
                optionValues[option.long, default: []].append(attached ?? "")
            case let .value(valueName):
                let value: String
                if let attached {
                    value = attached
                } else if index < words.count && !ArgumentParser.looksLikeOption(words[index]) {
                    value = words[index]
                    index += 1
                } else {
                    throw UsageError("option \(spelled) needs a value (\(valueName))", path: path)
                }
                guard !value.isEmpty else {
                    throw UsageError("option \(spelled) needs a non-empty value (\(valueName))", path: path)
                }
                optionValues[option.long, default: []].append(value)
            }
        }

        /// Checks what is missing or left over and assigns positionals.
        func finish() throws -> ParsedArguments {
            if command.run == nil {
                throw UsageError("missing command for '\(path)'", path: path)
            }
            for option in command.options where option.isRequired && optionValues[option.long] == nil {
                throw UsageError("missing option \(option.synopsis)", path: path)
            }
            var remaining = positionals[...]
            var argumentValues: [String: [String]] = [:]
            for argument in command.arguments {
                switch argument.arity {
                case .required:
                    guard let value = remaining.popFirst() else {
                        throw UsageError("missing argument \(argument.name)", path: path)
                    }
                    argumentValues[argument.name] = [value]
                case .optional:
                    if let value = remaining.popFirst() { argumentValues[argument.name] = [value] }
                case .zeroOrMore:
                    argumentValues[argument.name] = Array(remaining)
                    remaining = []
                }
            }
            if let extra = remaining.first {
                throw UsageError("unexpected argument '\(extra)' for '\(path)'", path: path)
            }
            var resolved: [String: any Sendable] = [:]
            for option in command.options {
                do {
                    resolved[option.long] = try option.resolve(optionValues[option.long] ?? [])
                } catch {
                    throw UsageError("\(error)", path: path)
                }
            }
            return ParsedArguments(path: path, givenTexts: optionValues, optionValues: resolved,
                                   argumentValues: argumentValues)
        }
    }
}
