import Faults

/// `intact faults`: the catalogue of fault presets, each with what it does,
/// the document sentences it breaks and what the client sees — the table of
/// FAULTS.md, from the one catalogue the proxy applies (`FaultPreset.catalog`).
enum FaultsCommand {
    static let command = Command(
        name: "faults",
        summary: "List the fault presets: what each does, the sentence it breaks, what the client sees.",
        discussion: """
            A preset is applied with --fault NAME[:key=value,...] (intact proxy, intact demo);
            a rule file with --faults FILE (format: Examples/faults/README.md).
            Give a preset's name to see it in full, with its parameters.
            """,
        arguments: [CommandArgument("NAME", help: "show one preset in full", arity: .optional)],
        run: run)

    private static func run(_ arguments: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        let out = context.standardOutput
        if let name = arguments.argument("NAME") {
            let preset: FaultPreset
            do {
                preset = try FaultPreset.named(name)
            } catch {
                throw CommandFailure("\(error)")
            }
            describe(preset, to: out)
            return ExitStatus.success
        }
        let width = FaultPreset.catalog.map(\.name.count).max() ?? 0
        for preset in FaultPreset.catalog {
            out.line(pad(preset.name, width) + "  " + preset.summary)
            out.line(String(repeating: " ", count: width + 2) + "client sees: " + preset.clientSees)
            for sentence in preset.breaks {
                out.line(String(repeating: " ", count: width + 2) + "breaks (\(preset.reference)): “\(sentence.text)”")
            }
            if preset.breaks.isEmpty {
                out.line(String(repeating: " ", count: width + 2) + "breaks: nothing (resilience: the flow must still succeed)")
            }
            out.line()
        }
        out.line("Apply one with --fault NAME[:key=value,...]; `intact faults NAME` shows its parameters.")
        return ExitStatus.success
    }

    private static func describe(_ preset: FaultPreset, to out: OutputWriter) {
        out.line("\(preset.name): \(preset.summary)")
        out.line("where in the document: \(preset.reference)")
        for sentence in preset.breaks { out.line("breaks: “\(sentence.text)”") }
        out.line("client sees: \(preset.clientSees)")
        if preset.parameters.isEmpty {
            out.line("parameters: none")
        } else {
            out.line("parameters (--fault \(preset.name):key=value,...):")
            for parameter in preset.parameters {
                let fallback = parameter.defaultValue.map { " (default \($0))" } ?? ""
                out.line("  \(parameter.name)  \(parameter.meaning)\(fallback)")
            }
        }
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }
}
