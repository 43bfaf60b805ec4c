import HTTP

/// RFC 8441 §5 on a hop: an HTTP/2 extended CONNECT (`:protocol websocket`)
/// on one side and the HTTP/1.1 `Upgrade` handshake a proxy sent for it on
/// the other, and the origin's `101` against the `200` the HTTP/2 client got.
/// The method, the status and the WebSocket key and accept differ by the
/// RFC's own mapping (HTTP/2 has no key or accept: each HTTP/1.1 hop makes
/// and checks its own), so that much is not a modification.
extension MessageJudge {
    /// `comparison` with the changes that translation accounts for taken out
    /// and its reason added, when the two sides are such a pair; `comparison`
    /// itself otherwise. A request: one side is an extended CONNECT for `P`,
    /// the other an HTTP/1.x `GET` with `Upgrade: P`; the method and
    /// `Sec-WebSocket-Key` are accounted for. A response: one side is an
    /// HTTP/1.x `101`, the other an HTTP/2 `200`; the status and
    /// `Sec-WebSocket-Accept` are. Every other change stays (the target, other
    /// fields, the body), and the relayed streams are compared as ever.
    static func extendedConnect(_ comparison: DigestComparison, before: RecordedMessage, after: RecordedMessage,
                                kind: Toleration.Message) -> DigestComparison {
        guard comparison.verdict == .modified else { return comparison }
        let sides = [before, after]
        let reason: Equivalence
        let handshakeField: String
        switch kind {
        case .request:
            guard let token = sides.first(where: { $0.method == "CONNECT" })?.connectProtocol,
                  sides.contains(where: { side in
                      side.method == "GET" && side.version != .http2 && side.fields.contains {
                          HTTPField.Name.upgrade.matches($0.name)
                              && HTTPField.lowercaseASCII($0.value) == HTTPField.lowercaseASCII(token)
                      }
                  }) else { return comparison }
            reason = .extendedConnect("HTTP/2 extended CONNECT (:protocol \(token)) ↔ HTTP/1.1 GET with Upgrade: \(token)")
            handshakeField = "sec-websocket-key"
        case .response:
            guard sides.contains(where: { $0.status == 101 && $0.version != .http2 }),
                  sides.contains(where: { $0.status == 200 && $0.version == .http2 }) else { return comparison }
            reason = .extendedConnect("HTTP/1.1 101 Switching Protocols ↔ HTTP/2 200")
            handshakeField = "sec-websocket-accept"
        }
        let remaining = comparison.changes.filter { change in
            switch change {
            case .methodChanged, .statusChanged: return false
            case .fieldAdded(handshakeField), .fieldRemoved(handshakeField): return false
            default: return true
            }
        }
        let reasons = comparison.reasons + [reason]
        return remaining.isEmpty ? DigestComparison(verdict: .equivalent, reasons: reasons, changes: [])
                                 : DigestComparison(verdict: .modified, reasons: reasons, changes: remaining)
    }
}

extension Equivalence {
    /// RFC 8441 §5's mapping between an HTTP/2 extended CONNECT and the HTTP/1.1 WebSocket handshake.
    public static func extendedConnect(_ what: String) -> Equivalence {
        Equivalence(kind: .extendedConnect, text: "RFC 8441 translation: \(what); the WebSocket key and accept are each "
                    + "HTTP/1.1 hop's own")
    }
}
