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

    /// The names the `Connection` fields of `fields` list (RFC 9110 §7.6.1),
    /// as spelled, OWS trimmed, empty list members skipped, except the
    /// fixed names other than `te` (a field with one of those is
    /// connection-specific whatever `Connection` says; `te` stays, since a
    /// `TE: trailers` goes on unless `Connection` names it). Usual heads
    /// list only `keep-alive` or `close`, so this is empty or one name: no
    /// `Set` that would hash every field name checked against it, no array
    /// of the values or of their split members (Docs/performance.md).
    public static func namesInConnection(_ fields: HTTPFields) -> [HTTPField.Name] {
        var names: [HTTPField.Name] = []
        fields.fields.withUnsafeBufferPointer { fields in
            for position in fields.indices where fields[position].hasName(.connection) {
                // Elements cut at ASCII bytes, so each is whole scalars; a short one is an inline `String`.
                _ = FieldNameIndex.withUTF8(fields[position].value) { bytes in
                    HTTP1Grammar.forEachListElement(bytes) { element in
                        guard !element.isEmpty else { return false }
                        let member = String(decoding: element, as: UTF8.self)
                        if let fixed = fixedName(member), fixed != .te { return false }
                        names.append(HTTPField.Name(member))
                        return false
                    }
                }
            }
        }
        return names
    }

    /// True when `name` is one of `framingNames` in any ASCII case.
    public static func isFraming(_ name: HTTPField.Name) -> Bool {
        name == .contentLength || name == .transferEncoding
    }
}
