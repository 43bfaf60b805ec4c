import HTTP

/// What a proxy changes in a head by rule (RFC 9110 §7.6.1): the fields that
/// concern only one connection are not forwarded, and a request goes to the
/// origin in origin form. The verifier's semantic digest ignores exactly
/// these, so a clean hop stays "equivalent".
///
/// `Transfer-Encoding` and `Content-Length` are kept: they tell the codec of
/// the next hop how the body is framed (an HTTP/2 leg drops them itself).
enum HopByHop {
    /// The fixed connection-specific names, lowercased, except the framing ones.
    static let names: Set<String> = HeadDigest.hopByHopFieldNames.subtracting(HeadDigest.framingFieldNames)

    /// The fields without the connection-specific ones and those `Connection` names.
    /// `TE: trailers` is kept: it is the one value that also means something end to end.
    static func strip(_ fields: HTTPFields) -> HTTPFields {
        var named = Set<String>()
        for value in fields.values("Connection") {
            for token in value.split(separator: ",") {
                named.insert(HTTPField.lowercaseASCII(token.trimmingSpaces))
            }
        }
        named.subtract(HeadDigest.framingFieldNames)
        var out = fields
        out.removeAll { field in
            let name = field.lowercasedName
            if name == "te" { return HTTPField.lowercaseASCII(field.value.trimmingSpaces) != "trailers" }
            return names.contains(name) || named.contains(name)
        }
        return out
    }

    /// The request as it goes to `target`: origin form (absolute form is for
    /// proxies), the target's scheme, connection-specific fields removed.
    /// No authority is made up: a request that carried none (an HTTP/1.0
    /// request without `Host`) goes on without one (RFC 9113 §8.3.1 allows
    /// an HTTP/2 request without `:authority`).
    static func shapeRequest(_ head: HTTPRequestHead, for target: UpstreamTarget) -> HTTPRequestHead {
        var shaped = head
        if shaped.targetForm == .absolute { shaped.targetForm = .origin }
        shaped.scheme = target.scheme.rawValue
        shaped.fields = strip(head.fields)
        return shaped
    }

    /// The response as it goes to the client: connection-specific fields removed.
    static func shapeResponse(_ head: HTTPResponseHead) -> HTTPResponseHead {
        var shaped = head
        shaped.fields = strip(head.fields)
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
