import AuthFlow
import Foundation

/// How the client simulator shows a run: each step (what was sent, what came
/// back, how long it took, the checks and the verdict), then the result and,
/// on failure, the diagnosis naming the failure mode and quoting the
/// document's sentence. `json` gives the same as data.
public enum FlowReport {
    /// The run as text, one block per step, for a terminal.
    public static func text(_ outcome: FlowOutcome) -> String {
        outcome.steps.enumerated().map { step($1, number: $0 + 1) + "\n" }.joined() + conclusion(outcome)
    }

    /// The outcome as pretty-printed JSON (keys sorted; durations in seconds).
    public static func json(_ outcome: FlowOutcome) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // FlowOutcome holds only strings, numbers, booleans and arrays of them: encoding cannot fail.
        let data = (try? encoder.encode(outcome)) ?? Data()
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    /// One step: `1. protected-request (steps 1-5), app: pass, 12.3 ms` and
    /// the lines under it (sent, received, each check), each ending in a newline.
    /// The client prints steps with this as they complete.
    public static func step(_ step: StepResult, number: Int) -> String {
        var lines = ["\(number). \(step.step.rawValue) (\(stepsPhrase(step.step))), \(step.agent.rawValue): "
                     + "\(step.verdict.rawValue), \(milliseconds(step.elapsed))"]
        var sent = "   sent      \(step.request.method) \(step.request.url)"
        if step.request.bodyBytes > 0 { sent += ", \(bytes(step.request.bodyBytes))" }
        if !step.request.cookieNames.isEmpty { sent += ", cookies \(step.request.cookieNames.joined(separator: ", "))" }
        if let trace = step.traceID { sent += " [trace \(trace)]" }
        lines.append(sent)
        if let response = step.response {
            var received = "   received  \(response.status) \(response.contentType ?? "(no Content-Type)"), \(bytes(response.bodyBytes))"
            if let location = response.location { received += ", Location \(location)" }
            if !response.setCookieNames.isEmpty { received += ", sets \(response.setCookieNames.joined(separator: ", "))" }
            lines.append(received)
        } else if let failure = step.transportFailure {
            lines.append("   received  nothing: \(failure)")
        }
        for check in step.checks {
            lines.append("   \(marker(check.kind)) \(check.message)")
        }
        return lines.map { $0 + "\n" }.joined()
    }

    /// The result line and, when the run failed, the diagnosis: the failure
    /// mode, what happened, the document's sentence, what to check.
    public static func conclusion(_ outcome: FlowOutcome) -> String {
        if outcome.succeeded {
            let user = outcome.username.map { " as \($0)" } ?? ""
            return "Signed in\(user); the follow-up request succeeded with the session cookies.\n"
        }
        guard let diagnosis = outcome.diagnosis else {
            return "Sign-in did not complete.\n"
        }
        var lines = ["Sign-in FAILED at \(diagnosis.step.rawValue) (\(stepsPhrase(diagnosis.step))): "
                     + diagnosis.mode.rawValue]
        if outcome.signInCompleted {
            lines.append("  (the sign-in itself completed\(outcome.username.map { " as \($0)" } ?? ""))")
        }
        lines.append("  what happened: \(diagnosis.evidence)")
        lines.append("  the document:  \"\(diagnosis.quote)\"")
        lines.append("  check:         \(diagnosis.advice)")
        return lines.map { $0 + "\n" }.joined()
    }

    /// `steps 1-5`, `step 6`, `after sign-in`.
    static func stepsPhrase(_ step: FlowStep) -> String {
        let steps = step.documentSteps
        if step == .followUp { return "after sign-in" }
        return steps.contains("-") ? "steps \(steps)" : "step \(steps)"
    }

    private static func marker(_ kind: StepResult.Check.Kind) -> String {
        switch kind {
        case .passed: return "ok  "
        case .failed: return "FAIL"
        case .note: return "note"
        }
    }

    private static func milliseconds(_ seconds: TimeInterval) -> String {
        String(format: "%.1f ms", seconds * 1000)
    }

    private static func bytes(_ count: Int) -> String {
        count == 1 ? "1 byte" : "\(count) bytes"
    }
}
