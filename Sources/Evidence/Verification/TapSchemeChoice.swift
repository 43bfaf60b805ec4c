import HTTP

/// The scheme a tap speaks to its upstream by its own choice: a reverse
/// proxy in front of a plain-HTTP listener (`--mode reverse:http://…`)
/// sends the app's `https` requests as `http`. The scheme then changes on
/// the tap's inside hop and back on the next one (where the load balancer
/// re-encrypts) without anything modifying the app's message.
struct TapSchemeChoice: Hashable, Sendable {
    /// The tap's name.
    let tap: String
    /// The scheme it chose, lowercased (`http`).
    let scheme: String
    /// Its `--mode` option as recorded (`reverse:http://127.0.0.1:8080`).
    let mode: String

    /// The choice on one hop: which side is the tap's upstream leg.
    struct OnHop: Hashable, Sendable {
        let choice: TapSchemeChoice
        /// True when the hop's `after` side is the tap's upstream leg, false when `before` is.
        let isAfter: Bool

        /// `comparison` with the tap's own part of its target change taken
        /// out: when the path is equal and every difference in scheme and
        /// authority is the tap's own — a scheme change to or from the scheme
        /// it chose (`tap-scheme`), and, inside the tap (`isAfter`), the
        /// upstream's authority it supplied for a request that named none
        /// (`tap-authority`, `suppliedAuthority`) — the target change is
        /// dropped and those equivalences join the reasons, whatever else
        /// changed on the hop (an intermediary's added fields stay
        /// differences); with nothing else changed it is `equivalent`. Nil
        /// when the target did not change or a part of it is not the tap's
        /// (a path or authority change stays a modification).
        func explains(_ comparison: DigestComparison, _ before: RecordedMessage,
                      _ after: RecordedMessage) -> DigestComparison? {
            guard comparison.verdict == .modified, comparison.changes.contains(.targetChanged), before.path == after.path,
                  let from = before.scheme.map(HTTPField.lowercaseASCII),
                  let to = after.scheme.map(HTTPField.lowercaseASCII) else { return nil }
            var reasons: [Equivalence] = []
            if from != to {
                guard (isAfter ? to : from) == choice.scheme else { return nil }
                reasons.append(.tapScheme(from: from, to: to, choice: choice))
            }
            let (authorityBefore, authorityAfter) = (OnHop.authority(before), OnHop.authority(after))
            if authorityBefore != authorityAfter {
                guard let supplied = suppliedAuthority(before: authorityBefore, after: authorityAfter) else { return nil }
                reasons.append(supplied)
            }
            guard !reasons.isEmpty else { return nil }
            let changes = comparison.changes.filter { $0 != .targetChanged }
            return DigestComparison(verdict: changes.isEmpty ? .equivalent : .modified,
                                    reasons: comparison.reasons + reasons, changes: changes)
        }

        /// The recorded authority, else `Host`, lowercased.
        static func authority(_ message: RecordedMessage) -> String? {
            (message.authority ?? message.firstValue("host")).map(HTTPField.lowercaseASCII)
        }
    }
}

extension Equivalence {
    /// `scheme https → http: tap-a's own upstream (reverse:http://…), not the app's message`.
    static func tapScheme(from: String, to: String, choice: TapSchemeChoice) -> Equivalence {
        Equivalence(kind: .tapScheme,
                    text: "scheme \(from) → \(to): \(choice.tap)'s own upstream (\(choice.mode)), not the app's message")
    }
}
