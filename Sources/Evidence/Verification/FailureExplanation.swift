/// What a recorded connection failure means for the path, in the words an
/// engineer needs next to the exchange it explains: a tap (or the mock
/// server) refusing plain HTTP on its TLS port means the intermediary in
/// front of it speaks `http://` to it; one refusing a handshake without a
/// client certificate means the certificate never reached it.
///
/// Read from the failure's recorded message alone (the TLS layer's wording,
/// `TLSEngine+Failure.swift` and `ClientHelloPeek`), so recordings of older
/// builds are explained too. Nil for a failure no rule knows: the recorded
/// message is then all there is to say.
public enum FailureExplanation {
    /// The explanation of a failure the tap's client side recorded, as a
    /// clause after the tap's name (`refused plain HTTP on its TLS port`)
    /// and the cause (`the intermediary in front of it speaks http:// to it`).
    public struct Clause: Hashable, Sendable {
        public var what: String
        public var cause: String
    }

    /// The rules, first match wins: fragments of the recorded message, lowercased.
    private static let rules: [(fragments: [String], clause: Clause)] = [
        (["plain text where a tls clienthello was expected", "plain http request where a tls clienthello was expected"],
         Clause(what: "refused plain HTTP on its TLS port", cause: "the intermediary in front of it speaks http:// to it")),
        (["http connect request where a tls clienthello was expected"],
         Clause(what: "refused an HTTP CONNECT on its TLS port",
                cause: "the intermediary in front of it treats it as a forward proxy over plain HTTP")),
        (["no client certificate", "requires a client certificate and none was presented"],
         Clause(what: "refused a TLS handshake without a client certificate",
                cause: "the client certificate never reached it: the client presented none, or an intermediary in front "
                    + "terminates TLS and cannot present the app's certificate")),
        (["client rejected our server certificate"],
         Clause(what: "had its certificate rejected by the intermediary in front of it",
                cause: "that intermediary does not trust the CA that signed it")),
        (["bytes are not tls records"],
         Clause(what: "received bytes that are not TLS on its TLS port",
                cause: "the intermediary in front of it does not speak TLS to it")),
    ]

    /// The clause for `message` recorded on a tap's client side; nil when no rule applies.
    public static func clause(forMessage message: String) -> Clause? {
        let lowered = message.lowercased()
        return rules.first { rule in rule.fragments.contains { lowered.contains($0) } }?.clause
    }

    /// `tap-b refused plain HTTP on its TLS port at 10:02:03.120: the intermediary in front of it speaks http:// to it`;
    /// nil when the failure is not one a rule explains, or not on the tap's client side.
    public static func sentence(_ failure: RecordedFailure) -> String? {
        guard failure.side != .upstream, let clause = clause(forMessage: failure.message) else { return nil }
        return "\(failure.tap) \(clause.what)" + (failure.at.map { " at " + $0.clockText } ?? "") + ": " + clause.cause
    }
}
