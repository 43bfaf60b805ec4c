/// The auth-flow step an exchange was labelled with (`challenge-401`,
/// `bootstrap`), as the tap nearest the client recorded it.
///
/// A wrapper, not the vocabulary: the labels come from whatever labelled
/// the exchange at record time (the proxy's step labeller, AuthFlow's
/// `AuthStep`), and a recording may hold labels a newer build added.
/// Evidence sits below AuthFlow and judges messages, not sign-in steps, so
/// it keeps the label as recorded and compares it by value; AuthFlow and
/// Scenarios turn it into their `AuthStep` where they need the meaning.
/// Encoded as the plain string.
public struct StepLabel: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public init(stringLiteral value: String) {
        self.init(rawValue: value)
    }

    public var description: String { rawValue }
}
