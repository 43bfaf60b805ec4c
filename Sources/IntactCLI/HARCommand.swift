import Evidence
import Foundation

/// `intact har`: export a recording as HAR 1.2, so it opens in browser
/// devtools and other HTTP tools. Reads and writes files on the main thread
/// of a short-lived process.
enum HARCommand {
    /// The options of `intact har`.
    struct Options: OptionGroup {
        let output = Option.optional("output", short: "o", .string("FILE.har"),
                                     help: "where to write the HAR (standard output when absent; an existing file is replaced)")
    }

    static let options = Options()

    static let command = Command(
        name: "har",
        summary: "Export a JSON Lines recording as a HAR 1.2 file.",
        discussion: """
            Each exchange becomes one entry, ordered by start time: the client's view (a
            proxy's downstream leg); the other legs (a proxy's upstream leg) are in the
            entry's _intact object. Intact's own data (digests, tap, leg, TLS details,
            auth-flow step, faults, errors) is in `_`-prefixed fields. Bodies are included
            when the recording stored them (intact proxy --record-bodies), gzip and
            deflate bodies decoded. Secrets stay keyed digests as recorded.
            A torn last line (a writer killed mid-line) is skipped with a warning.
            """,
        arguments: [CommandArgument("FILE.jsonl", help: "the recording to export")],
        options: options,
        run: run)

    private static func run(_ arguments: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        let path = arguments.requiredArgument("FILE.jsonl")
        let recording = try RecordingReader.read(path: path)
        for warning in recording.warnings {
            context.standardError.line("intact: warning: \(warning)")
        }
        let document = try HARExporter.export([recording], creatorVersion: IntactVersion.string)
        guard let output = arguments[options.output] else {
            context.standardOutput.line(String(decoding: document, as: UTF8.self))
            return ExitStatus.success
        }
        do {
            try Data(document + [UInt8(ascii: "\n")]).write(to: URL(fileURLWithPath: output), options: .atomic)
        } catch {
            throw CommandFailure("cannot write \(output): \((error as NSError).localizedDescription)")
        }
        context.standardError.line("Wrote \(output): \(recording.records.count) exchange"
                                   + "\(recording.records.count == 1 ? "" : "s") from \(path).")
        return ExitStatus.success
    }
}
