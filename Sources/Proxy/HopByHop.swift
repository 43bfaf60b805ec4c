import HTTP

/// What a proxy changes in a head by rule (RFC 9110 §7.6.1): the fields that
/// concern only one connection are not forwarded, and a request goes to the
/// origin in origin form. The verifier's semantic digest ignores exactly
/// these, so a clean hop stays "equivalent".
///
/// `Transfer-Encoding` and `Content-Length` are kept: they tell the codec of
/// the next hop how the body is framed (an HTTP/2 leg drops them itself).
enum HopByHop {
    /// True when `field` has a fixed connection-specific name
    /// (`HopByHopFieldNames.fixedName`: one length test and one comparison)
    /// other than the framing `Transfer-Encoding`. Runs for every field of
    /// every head both ways; most stop at their length.
    private static func hasFixedName(_ field: HTTPField) -> Bool {
        guard let name = HopByHopFieldNames.fixedName(field.name) else { return false }
        return !HopByHopFieldNames.isFraming(name)
    }

    /// False when no field of `fields` has one of the fixed names: then
    /// nothing is stripped (`Connection` and `TE`, which decide what else
    /// goes, are among them) and no upgrade is asked for. One cheap pass
    /// over a head before the ones that read values.
    private static func mayHaveFixedNames(_ fields: HTTPFields) -> Bool {
        containsField(fields, where: hasFixedName)
    }

    /// Whether a field of `fields` satisfies `predicate`, read in place
    /// through the array's buffer: `contains(where:)` over the array copies
    /// each field (a retain and a release of its name and of its value), and
    /// this runs on every head both ways (Docs/performance.md#field-names).
    private static func containsField(_ fields: HTTPFields, where predicate: (HTTPField) -> Bool) -> Bool {
        fields.fields.withUnsafeBufferPointer { fields in
            for position in fields.indices where predicate(fields[position]) { return true }
            return false
        }
    }

    /// The `Connection` token that asks to switch protocols, as the message
    /// spells it (`Upgrade`, `upgrade`), when the message is HTTP/1.1, carries
    /// `Upgrade` and names it in `Connection` (RFC 9110 §7.8; an HTTP/1.0
    /// `Upgrade` is ignored). Nil otherwise.
    static func upgradeToken(_ fields: HTTPFields, version: HTTPVersion) -> String? {
        guard version == .http1_1, fields.contains(.upgrade) else { return nil }
        for value in fields.values(.connection) {
            for token in value.split(separator: ",") {
                let trimmed = token.trimmingSpaces
                if HTTPField.Name(trimmed) == .upgrade { return trimmed }
            }
        }
        return nil
    }

    /// `strip`, except that a message switching protocols keeps its
    /// `Upgrade` field and a `Connection` field with only the upgrade token:
    /// the two say what the next hop switches to.
    static func strip(_ fields: HTTPFields, keepingUpgrade token: String?) -> HTTPFields {
        stripped(fields, keepingUpgrade: token) ?? fields
    }

    /// `strip(_:keepingUpgrade:)` when it changes the fields; nil when they
    /// stay as they are (so a head that shares them is not copied).
    static func stripped(_ fields: HTTPFields, keepingUpgrade token: String?) -> HTTPFields? {
        guard let token else { return stripped(fields) }
        var out = stripped(fields) ?? fields
        for field in fields where field.hasName(.upgrade) { out.append(field.name, field.value) }
        out.append("Connection", token)
        return out
    }

    /// The fields without the connection-specific ones and those `Connection` names.
    /// `TE: trailers` is kept: it is the one value that also means something end to end.
    ///
    /// Runs on every head both ways: a head with nothing to strip (the usual
    /// case) is returned as it is, and names are compared without building
    /// lowercased copies.
    static func strip(_ fields: HTTPFields) -> HTTPFields {
        stripped(fields) ?? fields
    }

    /// `strip(_:)` when it removes something; nil when nothing is to go.
    static func stripped(_ fields: HTTPFields) -> HTTPFields? {
        guard mayHaveFixedNames(fields) else { return nil }
        // The names `Connection` lists beyond the fixed ones (none in a usual head, whose
        // `Connection` says `keep-alive` or `close`), compared field by field without
        // hashing (Docs/performance.md#hop-by-hop-pre-check). Framing stays for the next codec.
        var named = HopByHopFieldNames.namesInConnection(fields)
        if !named.isEmpty { named.removeAll(where: HopByHopFieldNames.isFraming) }
        // A nested function over a constant copy, not a closure over the
        // variable: a captured variable is boxed (an allocation per head).
        let connectionNamed = named
        func isStripped(_ field: HTTPField) -> Bool {
            if field.hasName(.te) {
                return HTTPField.lowercaseASCII(field.value.trimmingSpaces) != "trailers"
            }
            if hasFixedName(field) { return true }
            return !connectionNamed.isEmpty && connectionNamed.contains(where: { field.hasName($0) })
        }
        guard containsField(fields, where: isStripped) else { return nil }
        var out = fields
        out.removeAll(where: isStripped)
        return out
    }

    /// The request as it goes to `target`: origin form (absolute form is for
    /// proxies), the target's scheme, connection-specific fields removed.
    /// A request that carried no authority (an HTTP/1.0 request without
    /// `Host`, as HAProxy's `option httpchk` sends) gets the target's
    /// (`hostField`) when `supplyingAuthority` (a reverse proxy knows its
    /// upstream's name, as nginx sends `Host: $proxy_host`): an HTTP/2
    /// upstream sees it as `:authority`, an HTTP/1.x one as `Host` (the
    /// client codec writes it from the authority). Otherwise none is made up.
    /// An HTTP/1.1 request asking to switch protocols keeps `Upgrade` and
    /// `Connection: upgrade` (an HTTP/2 upstream leg drops both itself).
    static func shapeRequest(_ head: HTTPRequestHead, for target: UpstreamTarget,
                             supplyingAuthority: Bool = false) -> HTTPRequestHead {
        // Only what differs is changed, so a head already in shape shares its storage.
        var shaped = head
        if shaped.targetForm == .absolute { shaped.targetForm = .origin }
        if shaped.scheme != target.scheme.rawValue { shaped.scheme = target.scheme.rawValue }
        if supplyingAuthority, shaped.authority == nil, !shaped.fields.contains(.host), head.method != .connect {
            shaped.authority = target.hostField
        }
        if let fields = stripped(head.fields, keepingUpgrade: upgradeToken(head.fields, version: head.version)) {
            shaped.fields = fields
        }
        return shaped
    }

    /// The response as it goes to the client: connection-specific fields
    /// removed, except `Upgrade` and `Connection: upgrade` on a 101.
    static func shapeResponse(_ head: HTTPResponseHead) -> HTTPResponseHead {
        var shaped = head
        let token = head.status == .switchingProtocols ? upgradeToken(head.fields, version: .http1_1) : nil
        shaped.fields = strip(head.fields, keepingUpgrade: token)
        return shaped
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        var scalars = Substring(self).unicodeScalars[...]
        while let first = scalars.first, first == " " || first == "\t" { scalars = scalars.dropFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars = scalars.dropLast() }
        return String(String.UnicodeScalarView(scalars))
    }
}
