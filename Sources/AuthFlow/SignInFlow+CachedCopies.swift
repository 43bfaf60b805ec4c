import Foundation
import HTTP

/// A cache in front of the server serving one request's answer to another:
/// the mock server echoes each request's `Intact-Trace`, so an answer whose
/// echo names another request is that request's answer, copied. Said as
/// such (never as an answer "the server did not send"), with its age, and
/// loudly when the copy carries a session.
extension SignInFlow {
    /// What the run remembers of an answer: when it came, to which exchange, and whether it was a session's.
    struct AnsweredRequest: Hashable, Sendable {
        /// The exchange's number in the run (1-based, as the report numbers them).
        let number: Int
        let at: Date
        let method: HTTPMethod
        let path: String
        /// The request carried cookies.
        let hadCookies: Bool
    }

    /// Remembers `r`'s request before its answer is checked.
    mutating func remember(_ r: Received) {
        guard let trace = r.request.traceID, answered[trace] == nil else { return }
        answered[trace] = AnsweredRequest(number: results.count + 1, at: receivedAt, method: r.request.head.method,
                                          path: r.request.url.pathAndQuery, hadCookies: r.request.head.fields["Cookie"] != nil)
    }

    /// The failure for an answer echoing another request's trace, or nil when it echoes none.
    func cachedCopy(_ r: Received) -> FlowFailure? {
        guard let echo = r.head.fields[SignInFlow.traceFieldName], echo != r.request.traceID else { return nil }
        let carriesCookies = !r.head.fields.values("Set-Cookie").isEmpty
        var evidence: String
        var session = carriesCookies
        if let original = answered[echo], original.number <= results.count {
            let seconds = max(0, receivedAt.timeIntervalSince(original.at))
            var request = "another request"
            if original.method != r.request.head.method || original.path != r.request.url.pathAndQuery {
                request += ", \(original.method) \(original.path)"
            }
            evidence = "\(r.brief): a copy of the server's answer to exchange \(original.number) (\(request), "
                + "\(SignInFlow.secondsText(seconds)) earlier), served by the intermediary: a cached response"
            session = session || original.hadCookies
        } else {
            evidence = "\(r.brief): a copy of the server's answer to a request this client never sent (\(SignInFlow.traceFieldName): "
                + "\(echo), another client's), served by the intermediary: a cached response"
            if let age = r.head.fields["Age"] { evidence += " (\(age) s in the cache, its Age field)" }
        }
        if let via = r.head.fields["Via"] { evidence += " (Via: \(via))" }
        if session {
            evidence += ". WARNING: the copy carries a session (" + (carriesCookies ? "Set-Cookie" : "the answer to a request with cookies")
                + "): one user's session handed to another"
        }
        return FlowFailure(mode: .cachedResponse, evidence: evidence)
    }

    /// `31 s`, `0.4 s`.
    static func secondsText(_ seconds: TimeInterval) -> String {
        seconds >= 10 ? "\(Int(seconds.rounded())) s" : "\((seconds * 10).rounded() / 10) s"
    }
}
