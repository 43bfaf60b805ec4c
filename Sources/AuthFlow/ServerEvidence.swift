import HTTP

/// How the client tells the server's own answers from an intermediary's:
/// by evidence the answer carries, never by its status.
///
/// - The trace echo: the mock server repeats the request's `Intact-Trace`.
///   Once one answer of the run carried it, the server is known to echo,
///   and a later answer without it did not come from the server, at
///   whatever step (`learn(from:)`), even when the client was not told to expect it.
/// - The identity: the `Server` field of the answers that carried the echo.
///   An answer with another `Server`, or with an intermediary's own error
///   page, names what answered (`answerer(of:)`).
struct ServerEvidence: Hashable, Sendable {
    /// An earlier answer carried the echo of its request's trace.
    private(set) var echoes = false
    /// The `Server` field of the first echoed answer.
    private(set) var identity: String?

    /// Takes what an answer the run accepted shows of the server.
    mutating func learn(from r: SignInFlow.Received) {
        guard ServerEvidence.echoed(r) else { return }
        echoes = true
        if identity == nil { identity = r.head.fields["Server"] }
    }

    /// True when the answer repeats its request's trace id.
    static func echoed(_ r: SignInFlow.Received) -> Bool {
        guard let trace = r.request.traceID else { return false }
        return r.head.fields[SignInFlow.traceFieldName] == trace
    }

    /// What answered, when the answer says: `nginx/1.22.1 (its Server field)`,
    /// `nginx (its error page)`, `HAProxy (its built-in error page)`; nil when it cannot be told.
    func answerer(of r: SignInFlow.Received) -> String? {
        if let server = r.head.fields["Server"], server != identity {
            return "\(server) (its Server field)"
        }
        let text = r.bodyText
        if text.contains("<center>nginx") { return "nginx (its error page)" }
        if text.hasPrefix("<html><body><h1>") && text.contains("</h1>\n") { return "HAProxy (its built-in error page)" }
        return nil
    }
}
