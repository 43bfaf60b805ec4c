import HTTP

/// An intermediary advertising HTTP/3 (`Alt-Svc: h3=":443"`, Caddy's
/// default): a client that honours it moves to QUIC over UDP, past every TCP
/// tap and every TCP intermediary policy, so what was verified is no longer
/// the path the app takes. Its own warning, beside the difference.
extension Verifier {
    /// One warning per hop on which responses gained an `Alt-Svc` naming `h3`.
    static func http3Warnings(_ exchanges: [VerifiedExchange], path: TapPath) -> [String] {
        var counts: [Int: (count: Int, value: String)] = [:]
        for exchange in exchanges {
            for (index, hop) in exchange.hops.enumerated() {
                for difference in hop.response.differences where difference.field == "alt-svc"
                    && [.fieldAdded, .fieldChanged].contains(difference.kind) {
                    guard let value = difference.after, AltSvc.advertisesHTTP3(value),
                          !(difference.before.map(AltSvc.advertisesHTTP3) ?? false) else { continue }
                    counts[index, default: (0, value)].count += 1
                }
            }
        }
        return counts.keys.sorted().map { index in
            let (count, value) = counts[index]!
            let hop = path.hops[index]
            let who = hop.kind == .inside ? "\(hop.from.tap) itself" : "the intermediary on \(hop.label)"
            return "\(who) advertises HTTP/3 (Alt-Svc: \(value) added on \(count) "
                + "response\(count == 1 ? "" : "s")): clients may leave this path (QUIC over UDP, past every TCP tap and "
                + "TCP policy); turn the advertisement off (Caddy: servers { protocols h1 h2 })"
        }
    }
}
