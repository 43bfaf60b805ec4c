import Foundation
import Evidence

/// `intact verify`: reads the recordings of the taps on a path and proves,
/// exchange by exchange and hop by hop, that requests and responses crossed
/// unmodified — or names what changed. The work is `Verifier` in Evidence;
/// this command only reads files, picks the renderer and sets the exit status.
///
/// Exit status: 0 when the policy holds, 1 when it fails, 2 when the input
/// cannot be verified (usage, an unreadable or unsupported recording, a bad
/// policy file or `--path`, an unwritable HTML file). Blocks on disk I/O.
enum VerifyCommand {
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
        options: [
            .flag("json", help: "print the report as JSON (schema intact-verify/1, see Docs/verify-json.md)"),
            .value("html", valueName: "FILE", help: "also write the report as one self-contained HTML page"),
            .value("policy", valueName: "POLICY",
                   help: "strict, or a JSON policy file of tolerated fields (Examples/policies)", defaultValue: "strict"),
            .value("path", valueName: "TAP,...", help: "the taps in path order, client side first"),
        ],
        run: run)

    /// The status for input that cannot be verified; the same value as a usage error.
    static let cannotVerify = ExitStatus.usage

    private static func run(_ arguments: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        let files = arguments.arguments("RECORDING")
        guard !files.isEmpty else { throw UsageError("give at least one recording", path: arguments.path) }
        let order = try arguments.value("path").map { try tapNames($0, arguments) }
        let report: VerificationReport
        do {
            let policyName = arguments.value("policy") ?? "strict"
            let policy = policyName == "strict" ? VerificationPolicy.strict : try VerificationPolicy.load(path: policyName)
            let recordings = try files.map(RecordingReader.read(path:))
            report = try Verifier(Verifier.Configuration(policy: policy, path: order)).verify(recordings)
        } catch let error as RecordingReadError {
            return inputError(error, context)
        } catch let error as PolicyError {
            return inputError(error, context)
        } catch let error as VerificationInputError {
            return inputError(error, context)
        }

        if arguments.flag("json") {
            for warning in report.warnings { context.standardError.line("intact: warning: \(warning)") }
            context.standardOutput.write(String(decoding: try report.jsonBytes(), as: UTF8.self))
        } else {
            context.standardOutput.write(TextReport.render(report))
        }
        if let file = arguments.value("html") {
            do {
                try Data(HTMLReport.render(report).utf8).write(to: URL(fileURLWithPath: file), options: .atomic)
            } catch {
                return inputError("cannot write the HTML report to \(file): \((error as NSError).localizedDescription)", context)
            }
            context.standardError.line("intact: wrote the HTML report to \(file)")
        }
        return report.policyHolds ? ExitStatus.success : ExitStatus.failure
    }

    /// `a,b,c` → the names; an empty name is a usage error.
    private static func tapNames(_ text: String, _ arguments: ParsedArguments) throws -> [String] {
        let names = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard !names.contains(where: \.isEmpty) else {
            throw UsageError("option --path expects tap names separated by commas, got '\(text)'", path: arguments.path)
        }
        return names
    }

    private static func inputError(_ error: CustomStringConvertible, _ context: CommandContext) -> Int32 {
        context.standardError.line("intact: \(error)")
        return cannotVerify
    }
}
