import AuthFlow
import Evidence

/// What `intact demo` says about the faults it injected: which were
/// applied, from the proxy's recording, and whether the outcome is what they cause.
extension DemoCommand {
    static func describeFaults(_ faults: FaultOptions, outcome: FlowOutcome, proxyRecording: String,
                               to out: OutputWriter) throws {
        let records: [ExchangeRecord]
        do {
            records = try RecordingReader.read(path: proxyRecording).records
        } catch {
            throw CommandFailure("cannot read the proxy's recording \(proxyRecording): \(error)")
        }
        let applied = records.filter { !$0.faults.isEmpty }
        var names: [String] = []
        if applied.isEmpty {
            out.line("Faults applied (from the proxy's recording): none.")
        } else {
            out.line("Faults applied (from the proxy's recording):")
            for record in applied {
                let place = record.authFlowStep ?? (record.leg(.downstream)?.request == nil ? "connection" : "exchange")
                for fault in record.faults {
                    out.line("  \(record.exchangeID) \(place): \(fault.name)" + (fault.detail.map { ": \($0)" } ?? ""))
                    if !names.contains(fault.name) { names.append(fault.name) }
                }
            }
        }
        out.line(expectation(presets: faults.presets, applied: names, outcome: outcome))
        out.line()
    }

    /// Whether the outcome is what the faults cause.
    static func expectation(presets: [String], applied: [String], outcome: FlowOutcome) -> String {
        if outcome.succeeded {
            return applied.isEmpty
                ? "The flow still succeeded: the faults were not triggered."
                : "The flow still succeeded: the faults applied (\(applied.joined(separator: ", "))) are tolerated."
        }
        guard let diagnosis = outcome.diagnosis else {
            return "The sign-in did not complete, with faults applied: \(applied.joined(separator: ", "))."
        }
        if presets.contains(diagnosis.mode.rawValue) {
            return "EXPECTED: the failure above is what the fault \(diagnosis.mode.rawValue) causes "
                + "(it breaks “\(diagnosis.quote)”)."
        }
        if applied.isEmpty {
            return "UNEXPECTED: the flow failed (\(diagnosis.mode.rawValue)) but no fault was applied."
        }
        return "EXPECTED: the failure above (\(diagnosis.mode.rawValue)) is what the faults applied cause: "
            + applied.joined(separator: ", ") + "."
    }
}
