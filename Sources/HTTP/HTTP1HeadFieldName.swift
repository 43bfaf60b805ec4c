/// The field names whose lines `HTTP1HeadAnalysis` reads (framing, connection
/// handling, `Host`, `Expect`), told apart from every other name in one step
/// per field line.
///
/// Invariant: the six names have six different lengths, so a name's length
/// picks the one candidate it can be, and one ASCII case-insensitive
/// comparison decides. A head's field lines are read on every message, so
/// this replaces comparing each name with each of the six in turn.
enum HTTP1HeadFieldName: CaseIterable, Sendable {
    case host
    case expect
    case upgrade
    case connection
    case contentLength
    case transferEncoding

    /// The name, lowercase.
    var lowercased: String {
        switch self {
        case .host: "host"
        case .expect: "expect"
        case .upgrade: "upgrade"
        case .connection: "connection"
        case .contentLength: "content-length"
        case .transferEncoding: "transfer-encoding"
        }
    }

    /// The name `name` is in any ASCII case; nil for any other name (a
    /// lookalike such as `content-lengthx` or `Content_Length` included).
    /// Builds no `String`.
    init?(_ name: String) {
        let candidate: Self
        switch name.utf8.count {
        case 4: candidate = .host
        case 6: candidate = .expect
        case 7: candidate = .upgrade
        case 10: candidate = .connection
        case 14: candidate = .contentLength
        case 17: candidate = .transferEncoding
        default: return nil
        }
        guard HTTPField.utf8EqualIgnoringASCIICase(name, candidate.lowercased, secondIsLowercase: true) else { return nil }
        self = candidate
    }
}
