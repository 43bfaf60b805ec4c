/// The entry point of the `intact` command line, as a library call so tests
/// drive it exactly as the executable does.
public enum IntactCommandLine {
    /// Parses `arguments` (the words after `intact`), runs the command and
    /// returns the exit status: 0 success, 1 the command failed, 2 a usage
    /// error. Help goes to standard output; errors go to standard error as
    /// `intact: <message>`, followed by the command's usage for usage errors.
    public static func run(_ arguments: [String], context: CommandContext = .standard) -> Int32 {
        let parser = ArgumentParser(root: CommandRegistry.root)
        do {
            switch try parser.parse(arguments) {
            case let .help(path):
                context.standardOutput.write(Usage.render(path))
                return ExitStatus.success
            case let .run(parsed):
                guard let run = parsed.path.command.run else {
                    preconditionFailure("the parser returns only runnable commands")
                }
                return try run(parsed, context)
            }
        } catch let error as UsageError {
            context.standardError.line("intact: \(error.message)")
            context.standardError.line()
            context.standardError.write(Usage.render(error.path))
            return ExitStatus.usage
        } catch {
            context.standardError.line("intact: \(error)")
            return ExitStatus.failure
        }
    }
}
