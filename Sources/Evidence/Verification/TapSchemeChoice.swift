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

        /// The equivalence that accounts for `comparison`, when its only
        /// change is the target, the recorded targets differ in the scheme
        /// alone (authority and path equal), and the scheme on the tap's side
        /// is the one it chose; nil otherwise (the change stays a modification).
        func explains(_ comparison: DigestComparison, _ before: RecordedMessage,
                      _ after: RecordedMessage) -> Equivalence? {
            guard comparison.verdict == .modified, comparison.changes == [.targetChanged],
                  let from = before.scheme.map(HTTPField.lowercaseASCII),
                  let to = after.scheme.map(HTTPField.lowercaseASCII), from != to,
                  (isAfter ? to : from) == choice.scheme,
                  OnHop.authority(before) == OnHop.authority(after), before.path == after.path else { return nil }
            return .tapScheme(from: from, to: to, choice: choice)
        }

        /// The recorded authority, else `Host`, lowercased.
        private static func authority(_ message: RecordedMessage) -> String? {
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
