import TLS

/// `--ca-dir DIR`, taken by every command that uses the development CA,
/// and the per-user default it falls back to.
enum CADirectoryOption {
    /// The option; its default depends on the environment, so it is
    /// resolved when the command runs (`directory(_:_:)`), not declared.
    static let option = CommandOption.value(
        "ca-dir", valueName: "DIR",
        help: "directory of the development CA (default: \(CertificateAuthority.defaultDirectoryDescription))")

    /// `--dir DIR`: the older spelling `intact ca` subcommands keep accepting.
    static let legacyOption = CommandOption.value("dir", valueName: "DIR", help: "same as --ca-dir")

    /// The directory `--ca-dir` (or `--dir`) names, else the per-user default.
    static func directory(_ arguments: ParsedArguments, _ context: CommandContext) throws -> String {
        let legacy = arguments.path.command.option(long: legacyOption.long) != nil ? arguments.value("dir") : nil
        if arguments.isGiven("ca-dir") && legacy != nil {
            throw UsageError("give --ca-dir or --dir, not both", path: arguments.path)
        }
        return arguments.value("ca-dir") ?? legacy
            ?? CertificateAuthority.defaultDirectory(environment: context.environment)
    }
}
