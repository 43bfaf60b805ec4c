/// The streams relayed after a 101, compared across a hop.
extension MessageJudge {
    /// `result` with the comparison of one direction's relayed stream added:
    /// equal counts and digests on both sides leave it as it is (identical);
    /// anything else, one side's stream missing included, is a
    /// `relayed-changed` difference naming the direction, and the message
    /// is modified. Nothing changes when neither side relayed anything.
    func judgeRelayed(_ result: MessageResult, before: RelayedStreams.Stream?, after: RelayedStreams.Stream?,
                      direction: String) -> MessageResult {
        guard before != nil || after != nil, before != after else { return result }
        var judged = result
        let describe = { (stream: RelayedStreams.Stream?) in
            stream.map { "\($0.bytes) bytes sha256:\($0.sha256.hex)" }
        }
        judged.differences.append(MessageDifference(
            kind: .relayedChanged, before: describe(before), after: describe(after),
            text: "relayed \(direction) stream changed (\(before.map { "\($0.bytes)" } ?? "none") → "
                + "\(after.map { "\($0.bytes)" } ?? "none") bytes)"))
        judged.outcome = max(judged.outcome, .modified)
        return judged
    }
}
