/// Every `intact` subcommand. Adding one is a file defining its `Command`
/// plus one line in `commands`.
enum CommandRegistry {
    static let commands: [Command] = [
        CACommand.command,
        ProxyCommand.command,
        HARCommand.command,
        VerifyCommand.command,
        FaultsCommand.command,
        DemoCommand.command,
        ScenarioCommand.command,
        ServerCommand.command,
        ClientCommand.command,
    ]

    /// The options of `intact` itself.
    struct RootOptions: OptionGroup {
        let version = Option.flag("version", help: "print the version and exit")
    }

    static let rootOptions = RootOptions()

    /// `intact` itself: the subcommands above, and `--version`.
    static let root = Command(
        name: "intact",
        summary: "Intact: an intercepting verification proxy for mobile sign-in flows.",
        options: rootOptions,
        subcommands: commands,
        run: { arguments, context in
            guard arguments[rootOptions.version] else {
                throw UsageError("missing command", path: arguments.path)
            }
            context.standardOutput.line("intact \(IntactVersion.string)")
            return ExitStatus.success
        })
}
