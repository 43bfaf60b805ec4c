import HTTP

/// A redirect to the request's own resource: an intermediary answering
/// itself (HAProxy's `http-request redirect scheme https`, a load
/// balancer's "always https" or canonical-host rule), never the server's
/// sign-in. The server never redirects the app's resource to itself, and a
/// gateway's login page lives elsewhere; so such a redirect is a foreign
/// response, said with what differs.
extension SignInFlow {
    /// The failure for a redirect whose Location is the requested resource
    /// (same path and query) at another scheme, host or port, or at the same
    /// URL (a loop); nil for a redirect elsewhere.
    func sameResourceRedirect(_ r: Received) -> FlowFailure? {
        guard r.isRedirect, let location = r.location, let target = r.request.url.resolving(location),
              target.pathAndQuery == r.request.url.pathAndQuery else { return nil }
        let from = r.request.url.origin
        let to = target.origin
        var changes: [String] = []
        if to.scheme != from.scheme { changes.append("over \(to.scheme)") }
        if to.host != from.host { changes.append("at host \(to.host)") }
        if to.port != from.port { changes.append("on port \(to.port.map(String.init) ?? "the default")") }
        let what = changes.isEmpty ? "a redirect to the very URL requested (a loop: the intermediary sees plain HTTP "
            + "where the app speaks https, e.g. behind a TLS terminator)"
            : "a redirect to the same resource " + changes.joined(separator: ", ")
        let who = serverEvidence.answerer(of: r).map { ", from \($0)" } ?? ", from an intermediary"
        return FlowFailure(mode: .foreignResponse,
                           evidence: "\(r.status) to \(location): \(what)\(who), not the "
                               + "server's answer",
                           advice: "Find the intermediary's redirect rule (HAProxy: http-request redirect scheme https; nginx: "
                               + "return 301 https://…) and keep it from applying to the app's requests (it already speaks "
                               + "https to the address it was given).")
    }
}
