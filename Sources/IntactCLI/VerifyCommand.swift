import ConfigurationFile
import Evidence
import Foundation
import Scenarios

/// `intact verify`: reads the recordings of the taps on a path and proves,
/// exchange by exchange and hop by hop, that requests and responses crossed
/// unmodified — or names what changed. The work is `Verifier` in Evidence;
/// this command only reads files, picks the renderer and sets the exit status.
///
/// Exit status: 0 when the policy holds, 1 when it fails, 2 when the input
/// cannot be verified (usage, an unreadable or unsupported recording, a bad
/// policy file or `--path`, an unwritable HTML file). Blocks on disk I/O.
enum VerifyCommand {
    /// The options of `intact verify`, in `--help` order.
    struct Options: OptionGroup {
        let json = Option.flag("json", help: "print the report as JSON (schema \(VerificationReport.schemaName), see Docs/verify-json.md)")
        let html = Option.optional("html", .string("FILE"), help: "also write the report as one self-contained HTML page")
        let policy = Option.value("policy", .string("POLICY"),
                                  help: "strict, or a JSON policy file of tolerated fields (Examples/policies)",
                                  default: "strict")
        let path = Option.optional("path", .list("TAP,...", expected: "tap names separated by commas"),
                                   help: "the taps in path order, client side first")
        let origin = Option.optional(
            "origin", .string("URL"),
            help: "the origin the path verifies (https://HOST[:PORT]); exchanges to others are counted as "
                + "\"other origins, not on this path\", never judged (default: the last recording's origin, "
                + "when a forward tap is on the path)")
        let intermediary = Option.optional(
            "intermediary", .string("KIND"),
            help: "the product between the taps (\(IntermediaryKind.names.filter { $0 != IntermediaryKind.commandKindName }.joined(separator: ", "))): "
                + "name the likely cause and fix of each change on its hop (default: the product seen in Server or Via)")
    }

    static let options = Options()

    static let command = Command(
        name: "verify",
        summary: "Verify that exchanges crossed every hop unmodified, from the taps' recordings.",
        discussion: """
            Give the recordings of one run, one per tap: the client's, each proxy's (its
            downstream and upstream legs), the server's. A single proxy recording verifies
            what the proxy itself changed. Hops are ordered client first, server last and
            proxies by when they first saw a request, unless --path names the order.
            Exchanges pair by their Intact-Trace field, else by sequence alignment on
            method, target and body digest (marked ~ in the table).

            Verdicts per hop: identical, equivalent (same meaning, different wire form),
            tolerated (by the policy, still listed), modified, missing, foreign (an
            intermediary answered), broken (a tap recorded a failure), - (not reached).

            Exit status: 0 when the policy holds, 1 when it fails, 2 when the input
            cannot be verified.
            """,
        arguments: [CommandArgument("RECORDING", help: "a JSON Lines recording of one tap", arity: .zeroOrMore)],
        options: options,
        run: run)

    /// The status for input that cannot be verified; the same value as a usage error.
    static let cannotVerify = ExitStatus.usage

    private static func run(_ arguments: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        let files = arguments.arguments("RECORDING")
        guard !files.isEmpty else { throw UsageError("give at least one recording", path: arguments.path) }
        let order = arguments[options.path]
        let product = arguments[options.intermediary]
        if let product, IntermediaryKind.named(product) == nil {
            let known = IntermediaryKind.builtIn.map(\.name).joined(separator: ", ")
            throw UsageError("--intermediary expects one of \(known), got '\(product)'", path: arguments.path)
        }
        let report: VerificationReport
        do {
            let policyName = arguments[options.policy]
            let policy = policyName == "strict" ? VerificationPolicy.strict : try VerificationPolicy.load(path: policyName)
            let recordings = try files.map(RecordingReader.read(path:))
            report = try Verifier(Verifier.Configuration(policy: policy, path: order, origin: arguments[options.origin]))
                .verify(recordings)
        } catch let error as RecordingReadError {
            return inputError(error, context)
        } catch let error as ConfigurationError {
            return inputError(error, context)
        } catch let error as VerificationInputError {
            return inputError(error, context)
        }

        if arguments[options.json] {
            for warning in report.warnings { context.standardError.line("intact: warning: \(warning)") }
            context.standardOutput.write(try report.jsonBytes())
        } else {
            context.standardOutput.write(TextReport.render(report))
            if let causes = IntermediaryDirective.section(for: report, product: product) {
                context.standardOutput.write("\n" + causes)
            }
        }
        if let file = arguments[options.html] {
            do {
                try Data(HTMLReport.render(report).utf8).write(to: URL(fileURLWithPath: file), options: .atomic)
            } catch {
                return inputError("cannot write the HTML report to \(file): \((error as NSError).localizedDescription)", context)
            }
            context.standardError.line("intact: wrote the HTML report to \(file)")
        }
        return report.policyHolds ? ExitStatus.success : ExitStatus.failure
    }

    private static func inputError(_ error: CustomStringConvertible, _ context: CommandContext) -> Int32 {
        context.standardError.line("intact: \(error)")
        return cannotVerify
    }
}
