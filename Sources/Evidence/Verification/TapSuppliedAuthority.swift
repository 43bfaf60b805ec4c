import HTTP

/// A reverse-proxy tap knows its upstream's name: a request that names no
/// authority (HTTP/1.0 without `Host`, as HAProxy's `option httpchk` sends
/// its health checks) goes upstream with the upstream's authority, as nginx
/// sends `Host: $proxy_host` (an HTTP/2 upstream refuses a request without
/// `:authority`, and the load balancer would take the server out of its
/// rotation). Inside that tap the added authority is the tap's doing, not a
/// change of the message.
extension TapSchemeChoice {
    /// The upstream's authority as the `--mode` option names it, lowercased,
    /// without the scheme's default port (`reverse:https://Origin:443` → `origin`).
    var upstreamAuthority: String? {
        guard let start = mode.range(of: "://") else { return nil }
        var authority = HTTPField.lowercaseASCII(String(mode[start.upperBound...]))
        if authority.hasSuffix("/") { authority.removeLast() }
        return TapSchemeChoice.withoutDefaultPort(authority, scheme: scheme)
    }

    /// `authority` without `:443` (https) or `:80` (http).
    static func withoutDefaultPort(_ authority: String, scheme: String) -> String {
        let port = scheme == "https" ? ":443" : scheme == "http" ? ":80" : nil
        guard let port, authority.hasSuffix(port) else { return authority }
        return String(authority.dropLast(port.count))
    }
}

extension TapSchemeChoice.OnHop {
    /// The `tap-authority` equivalence when `before` (the tap's downstream
    /// leg) named no authority and `after` (its upstream leg) carries the
    /// tap's upstream's; nil for any other authority change.
    func suppliedAuthority(before: String?, after: String?) -> Equivalence? {
        guard isAfter, before == nil, let after, let upstream = choice.upstreamAuthority,
              TapSchemeChoice.withoutDefaultPort(after, scheme: choice.scheme) == upstream else { return nil }
        return .tapAuthority(after, choice: choice)
    }
}

extension Equivalence {
    /// `authority 127.0.0.1:8443 supplied by tap-b for a request that named none: its upstream (reverse:https://…), as a reverse proxy sends Host`.
    static func tapAuthority(_ authority: String, choice: TapSchemeChoice) -> Equivalence {
        Equivalence(kind: .tapAuthority,
                    text: "authority \(authority) supplied by \(choice.tap) for a request that named none: "
                        + "its own upstream (\(choice.mode)), as a reverse proxy sends Host")
    }
}
