/// The one table of the fields that concern a single connection (RFC 9110
/// §7.6.1, RFC 9113 §8.2.2). Every part of Intact that treats them apart
/// reads it: the semantic head digest leaves them out (`HeadDigest`), HTTP/2
/// never sends them (`HTTP2FieldMapping`, which also drops `host` and keeps
/// `te: trailers`), a proxy does not forward them (`Proxy`'s `HopByHop`,
/// which keeps the framing ones for the next codec). A `Connection` field
/// can name more; those are per message, not here.
public enum HopByHopFieldNames {
    /// The names that are hop-by-hop in every message, lowercase.
    public static let fixedNames: [HTTPField.Name] = [
        .connection, .keepAlive, .proxyConnection, .te, .transferEncoding, .upgrade, .http2Settings,
    ]

    /// The fields about framing: the semantic form leaves them to the body
    /// digest, and a proxy keeps them for the next hop's codec.
    public static let framingNames: [HTTPField.Name] = [.contentLength, .transferEncoding]

    /// `fixedNames` as lowercase text (for recorded names, which are text).
    public static let fixed: Set<String> = Set(fixedNames.map(\.rawName))
    /// `framingNames` as lowercase text.
    public static let framing: Set<String> = Set(framingNames.map(\.rawName))

    /// The name of `fixedNames` that `name` is in any ASCII case, or nil.
    /// Runs for every field of every head a proxy forwards: the length picks
    /// the one candidate (two at length 10, told apart by the first letter)
    /// and one comparison decides; builds no `String`. Invariant, checked by
    /// `HopByHopFieldNamesTests`: this agrees with `fixedNames`.
    public static func fixedName(_ name: String) -> HTTPField.Name? {
        let utf8 = name.utf8
        let candidate: HTTPField.Name
        switch utf8.count {
        case 2: candidate = .te
        case 7: candidate = .upgrade
        case 10: candidate = utf8.first.map { $0 | 0x20 } == UInt8(ascii: "c") ? .connection : .keepAlive
        case 14: candidate = .http2Settings
        case 16: candidate = .proxyConnection
        case 17: candidate = .transferEncoding
        default: return nil
        }
        return candidate.matches(name) ? candidate : nil
    }

    /// True when `name` is one of `framingNames` in any ASCII case.
    public static func isFraming(_ name: HTTPField.Name) -> Bool {
        name == .contentLength || name == .transferEncoding
    }
}
