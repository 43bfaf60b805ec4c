import HTTP

extension SignInFlow {
    /// Steps 2–3 answered with a redirect instead of the server's 401: either
    /// the server's 401 made into a redirect on the way (auth-redirect), or a
    /// gateway in front of the server demanding its own sign-in
    /// (gateway-cookie). The gateway shows itself by setting a cookie of its
    /// own or, against the mock server (which echoes the trace field), by an
    /// answer without the echo: the server never saw the request.
    func redirectInsteadOfChallenge(_ r: Received) -> FlowFailure {
        if let same = sameResourceRedirect(r) { return same }
        if !r.head.fields.values("Set-Cookie").isEmpty {
            return FlowFailure(mode: .gatewayCookie, evidence: "\(r.brief), setting a cookie of its own, instead of the server's 401")
        }
        if configuration.expectsTraceEcho || serverEvidence.echoes, let trace = r.request.traceID,
           r.head.fields[SignInFlow.traceFieldName] != trace {
            return FlowFailure(mode: .gatewayCookie,
                               evidence: "\(r.brief) without the echo of \(SignInFlow.traceFieldName): \(trace): the server never saw the request; something in front of it demands its own sign-in")
        }
        return FlowFailure(mode: .authRedirect, evidence: "\(r.brief) instead of 401 with contextUrl and tokenUrl")
    }
}
