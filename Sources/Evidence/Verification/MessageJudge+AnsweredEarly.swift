/// A request cut short on a hop because the server had already answered it
/// (nginx's `return 200` on a POST, a 413): the tap stopped forwarding the
/// body once the response on that leg was complete, which is not a modification.
extension MessageJudge {
    /// The `answered-early` reason when `comparison` of a request across a hop
    /// is explained by an early answer, else nil. All of these must hold:
    /// - the request that reached the hop's far side (`after`) is incomplete;
    /// - `response`, the response on that same leg, is complete and ended
    ///   before the request that left the near side (`before`) ended (or that
    ///   request never ended);
    /// - the only changes are the body (and trailers that never arrived):
    ///   the head is the same, or the verdict stays `modified`;
    /// - what was forwarded can be a prefix of what was sent: no longer, and
    ///   when both sides stored body bytes, the kept bytes agree.
    static func answeredEarly(_ comparison: DigestComparison, before: RecordedMessage, after: RecordedMessage,
                              response: RecordedMessage?) -> Equivalence? {
        guard comparison.verdict == .modified, !after.complete,
              let response, response.complete, let answered = response.timings.end,
              before.timings.end.map({ answered < $0 }) ?? true else { return nil }
        let bodyOnly = comparison.changes.allSatisfy { change in
            switch change {
            case .bodyChanged: return true
            case .trailersChanged: return after.digest.body.trailers == nil
            default: return false
            }
        }
        let (sent, forwarded) = (before.digest.body.length, after.digest.body.length)
        guard bodyOnly, forwarded <= sent, keptBytesAgree(before, after) else { return nil }
        return .answeredEarly(forwarded: forwarded, of: sent)
    }

    /// True unless both sides stored body bytes and the shorter copy is not a prefix of the longer.
    private static func keptBytesAgree(_ before: RecordedMessage, _ after: RecordedMessage) -> Bool {
        guard let sent = before.body?.bytes, let forwarded = after.body?.bytes else { return true }
        let common = min(sent.count, forwarded.count)
        return sent.prefix(common) == forwarded.prefix(common)
    }
}

extension Equivalence {
    /// The server answered before the request ended, so the rest of its body was not forwarded.
    public static func answeredEarly(forwarded: Int, of sent: Int) -> Equivalence {
        Equivalence(kind: .answeredEarly, text: "answered early: the server answered before the request ended; "
                    + "\(forwarded) of \(sent) body bytes forwarded")
    }
}
