import TLS

/// `--ca-dir DIR`, taken by every command that uses the development CA.
/// Its default depends on the environment (one CA per user), so it is
/// resolved when the command runs, from the context's environment.
struct CADirectoryOptions: OptionGroup {
    let caDirectory = Option.optional(
        "ca-dir", .string("DIR"),
        help: "directory of the development CA (default: \(CertificateAuthority.defaultDirectoryDescription))")

    /// The directory `--ca-dir` names, else the per-user default.
    func directory(_ arguments: ParsedArguments, _ context: CommandContext) -> String {
        arguments[caDirectory] ?? CertificateAuthority.defaultDirectory(environment: context.environment)
    }
}

/// The `intact ca` subcommands' `--ca-dir`, with `--dir`, the spelling they
/// had before every command took `--ca-dir`.
struct CASubcommandDirectoryOptions: OptionGroup {
    let shared = CADirectoryOptions()
    let legacyDirectory = Option.optional("dir", .string("DIR"), help: "same as --ca-dir")

    /// `--ca-dir`, else `--dir`, else the per-user default; both given is a usage error.
    func directory(_ arguments: ParsedArguments, _ context: CommandContext) throws -> String {
        let legacy = arguments[legacyDirectory]
        if arguments[shared.caDirectory] != nil && legacy != nil {
            throw UsageError("give --ca-dir or --dir, not both", path: arguments.path)
        }
        return legacy ?? shared.directory(arguments, context)
    }
}
