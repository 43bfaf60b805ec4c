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
        let follow = Option.flag("follow", help: "read on as the taps write: print each exchange's verdict as it is judged, "
                                 + "the full report on Ctrl-C or at --until")
        let until = Option.optional("until", .duration(), help: "with --follow, end after this long (90s, 10m, 1h)")
        let window = Option.value("window", .duration("SECONDS"),
                                  help: "how far apart in time one exchange's records may be at the taps and still pair "
                                  + "(and how long a followed exchange waits for a tap)", default: 10)
        let quiet = Option.flag("quiet", help: "no progress line on standard error")
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

            Recordings are read once, together in time order. A run of up to 5,000
            records is verified whole; a larger one is streamed in bounded memory: each
            exchange is judged once every tap has seen it (or --window has passed) and
            printed as it is judged, the report keeping the failing exchanges (up to
            1,000) and the first 100. A corrupt line in the middle of a recording is
            skipped, named and fails the policy. A verify that runs over a second on a
            terminal shows its progress on standard error (not with --quiet).

            --follow tails the recordings while the taps write them (a file that grows,
            is truncated or replaced is followed and said), prints each verdict, keeps
            a live summary line on a terminal, and ends with the full report on Ctrl-C
            or at --until.

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
        let product = arguments[options.intermediary]
        if let product, IntermediaryKind.named(product) == nil {
            let known = IntermediaryKind.builtIn.map(\.name).joined(separator: ", ")
            throw UsageError("--intermediary expects one of \(known), got '\(product)'", path: arguments.path)
        }
        let follow = arguments[options.follow]
        if arguments[options.until] != nil && !follow {
            throw UsageError("--until needs --follow", path: arguments.path)
        }
        let json = arguments[options.json]
        var streaming = StreamingVerifier.Options()
        streaming.windowSeconds = arguments[options.window]
        streaming.follow = follow
        let progress = VerifyProgress(context.standardError, enabled: context.standardError.isTerminal && !arguments[options.quiet],
                                      follow: follow)
        let text = TextReportStream { progress.clear(); context.standardOutput.write($0) }
        let jsonStream = JSONReportStream { progress.clear(); context.standardOutput.write($0) }

        let stop = StopRequest()
        let signals = follow ? SignalWatch(signals: [SIGINT, SIGTERM]) { stop.request() } : nil
        defer { signals?.cancel() }
        let deadline = arguments[options.until].map { Date().addingTimeInterval($0) }

        let report: VerificationReport
        do {
            let policyName = arguments[options.policy]
            let policy = policyName == "strict" ? VerificationPolicy.strict : try VerificationPolicy.load(path: policyName)
            let verifier = StreamingVerifier(Verifier.Configuration(policy: policy, path: arguments[options.path],
                                                                    origin: arguments[options.origin]),
                                             options: streaming)
            report = try verifier.verify(paths: files, sink: json ? jsonStream : text, progress: progress.show,
                                         shouldStop: { stop.requested || deadline.map { Date() >= $0 } ?? false })
        } catch let error as RecordingReadError {
            progress.clear()
            return inputError(error, context)
        } catch let error as ConfigurationError {
            return inputError(error, context)
        } catch let error as VerificationInputError {
            progress.clear()
            return inputError(error, context)
        }
        progress.clear()

        if json {
            for warning in report.warnings { context.standardError.line("intact: warning: \(warning)") }
            if report.listing == nil {
                context.standardOutput.write(try report.jsonBytes())
            } else {
                try jsonStream.end(report)
            }
        } else if report.listing == nil {
            context.standardOutput.write(TextReport.render(report))
        } else {
            text.end(report)
        }
        if !json, let causes = IntermediaryDirective.section(for: report, product: product) {
            context.standardOutput.write("\n" + causes)
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
