import Foundation
import HTTP

/// Steps 6–8 answered by a real browser (Chromium over DevTools) instead of
/// the flow's own HTTP requests: the driver lets the browser load the login
/// page, fill and submit the form and follow the redirect, then hands the
/// flow what the browser sent and received, step by step, so the same
/// checks and diagnoses apply — or a failure only a browser shows (a
/// refused cookie, a CSP block, a net error).
extension SignInFlow {
    /// Whether the request in flight is the browser's login page (step 6):
    /// where a real browser takes over.
    public var awaitsBrowserLoginPage: Bool {
        if case .loginPage = state { return true }
        return false
    }

    /// Whether the request in flight is the browser's credentials POST.
    public var awaitsBrowserCredentials: Bool {
        if case .credentials = state { return true }
        return false
    }

    /// The trace ids of the browser's two page requests, in order: the
    /// login page's (the request in flight) and the credentials POST's (the
    /// next sequence number). Empty when tracing is off or no browser step is in flight.
    public var browserTraceIDs: [String] {
        guard case .loginPage(let request, _, _) = state, let login = request.traceID,
              let next = configuration.traceID(sequence: sequence + 1) else { return [] }
        return [login, next]
    }

    /// The login URL the browser is to open (the request in flight), nil outside step 6.
    public var browserLoginURL: AbsoluteURL? {
        if case .loginPage(let request, _, _) = state { return request.url }
        return nil
    }

    /// Answers the browser request in flight with what the real browser
    /// sent (`sentFields`, as its DevTools reported them; `traced` when it
    /// carried the trace field) and received. `body` is the body the browser
    /// decoded: a `Content-Encoding` is taken off the head, as the browser did.
    /// `notes` go under the step's checks (what the browser did besides: its trace, its other requests).
    public mutating func receiveFromBrowser(sentFields: [HTTPField], traced: Bool, head: HTTPResponseHead,
                                            body: [UInt8], elapsed: TimeInterval, now: Date = Date(), notes: [String] = []) {
        guard state.pendingRequest?.agent == .browser else { return }
        replacePendingFields(sentFields, traced: traced)
        var decoded = head
        if decoded.fields["Content-Encoding"] != nil {
            _ = decoded.fields.remove("Content-Encoding")
            _ = decoded.fields.remove("Content-Length")
        }
        let before = results.count
        receive(decoded, body: body, elapsed: elapsed, now: now)
        if results.count > before, !notes.isEmpty {
            results[results.count - 1].checks += notes.map { StepResult.Check(kind: .note, message: $0) }
        }
    }

    /// Ends the run at the browser request in flight with a failure only the
    /// browser showed; `sentFields` what the browser sent, when it sent the
    /// request, `head` the response it got, when it got one.
    public mutating func failInBrowser(_ mode: FailureMode, evidence: String, sentence: DocumentSentence? = nil,
                                       sentFields: [HTTPField]? = nil, traced: Bool = true,
                                       head: HTTPResponseHead? = nil, elapsed: TimeInterval, now: Date = Date()) {
        if let sentFields { replacePendingFields(sentFields, traced: traced) }
        guard let request = state.pendingRequest else { return }
        let response = head.map { Received(request: request, head: $0, wireBody: [], cookieDecisions: []).summary }
        results.append(StepResult(step: request.step, label: classifier.classify(request.head, response: head),
                                  agent: request.agent, traceID: request.traceID, request: summary(of: request),
                                  response: response, transportFailure: nil, elapsed: elapsed, verdict: .fail,
                                  checks: [StepResult.Check(kind: .failed, message: evidence)]))
        let signedIn = results.contains { $0.step == .tokenExchange && $0.verdict == .pass }
        state = .finished(FlowOutcome(succeeded: false, signInCompleted: signedIn, username: username, steps: results,
                                      diagnosis: Diagnosis(mode: mode, step: request.step, evidence: evidence, sentence: sentence)))
    }

    /// The request in flight, its fields replaced by what the browser sent
    /// (its trace id dropped when the browser could not send it).
    private mutating func replacePendingFields(_ sentFields: [HTTPField], traced: Bool) {
        guard var request = state.pendingRequest else { return }
        request.head.fields = HTTPFields(sentFields)
        if !traced { request.traceID = nil }
        switch state {
        case .loginPage(_, let challenge, let proof): state = .loginPage(request, challenge, proof)
        case .credentials(_, let challenge, let proof, let confirmed):
            state = .credentials(request, challenge, proof, challengeConfirmed: confirmed)
        default: break
        }
    }
}
