/// A request target as it appeared on an HTTP/1.1 request line, split into
/// the model's scheme, authority and path (RFC 9112 §3.2).
///
/// Strict: the target is visible ASCII without `#`; CONNECT takes only
/// `host:port`; `*` only with OPTIONS; absolute form only with `http` or
/// `https` and without userinfo (RFC 9110 §4.2.4 says to treat it as an
/// error). An absolute target with an empty path gets path `/` (so turning
/// it into origin form is always valid); serializing it again writes the `/`.
struct HTTP1RequestTarget: Hashable, Sendable {
    var form: RequestTargetForm
    /// Lowercase scheme, absolute form only.
    var scheme: String?
    /// The target's authority (absolute and authority forms only).
    var authority: String?
    var path: String

    init(parsing target: ArraySlice<UInt8>, method: HTTPMethod) throws(HTTP1ParseError) {
        guard target.allSatisfy({ HTTP1Grammar.isVisibleASCII($0) && $0 != UInt8(ascii: "#") }) else {
            throw .invalidRequestTarget(HTTP1Grammar.text(target))
        }
        // Visible ASCII: copied as it is, not scanned again.
        let text = target.withUnsafeBufferPointer(HTTP1Grammar.printableText)
        if method == .connect {
            guard Self.isAuthority(target, requirePort: true) else { throw .invalidRequestTarget(text) }
            self.init(form: .authority, scheme: nil, authority: text, path: "")
            return
        }
        if target.elementsEqual("*".utf8) {
            guard method == .options else { throw .invalidRequestTarget(text) }
            self.init(form: .asterisk, scheme: nil, authority: nil, path: "*")
            return
        }
        if target.first == UInt8(ascii: "/") {
            self.init(form: .origin, scheme: nil, authority: nil, path: text)
            return
        }
        guard let absolute = Self.absolute(target) else { throw .invalidRequestTarget(text) }
        self = absolute
    }

    private init(form: RequestTargetForm, scheme: String?, authority: String?, path: String) {
        self.form = form
        self.scheme = scheme
        self.authority = authority
        self.path = path
    }

    /// `scheme "://" authority path-abempty [ "?" query ]` with scheme http(s).
    private static func absolute(_ target: ArraySlice<UInt8>) -> HTTP1RequestTarget? {
        guard let colon = target.firstIndex(of: HTTP1Grammar.colon),
              target[colon...].starts(with: "://".utf8) else { return nil }
        let scheme = HTTP1Grammar.text(target[..<colon].map(HTTP1Grammar.lowercaseASCII))
        guard scheme == "http" || scheme == "https" else { return nil }
        let rest = target[(colon + 3)...]
        let authorityEnd = rest.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard isAuthority(authority, requirePort: false) else { return nil }
        var path = HTTP1Grammar.text(rest[authorityEnd...])
        if !path.hasPrefix("/") { path = "/" + path }
        return HTTP1RequestTarget(form: .absolute, scheme: scheme, authority: HTTP1Grammar.text(authority), path: path)
    }

    /// `uri-host [ ":" port ]` (RFC 3986 §3.2.2), no userinfo. The host is a
    /// non-empty reg-name or IPv4 address, or a bracketed IPv6 literal; the port
    /// is at most 65535 and required for CONNECT.
    /// Reads the bytes in place: a target's slice, or a `Host` value's UTF-8.
    static func isAuthority<Bytes>(_ bytes: Bytes, requirePort: Bool) -> Bool
        where Bytes: BidirectionalCollection<UInt8>, Bytes.Index == Int, Bytes.SubSequence == Bytes {
        let host: Bytes
        let afterHost: Bytes
        if bytes.first == UInt8(ascii: "[") {
            guard let close = bytes.firstIndex(of: UInt8(ascii: "]")) else { return false }
            host = bytes[bytes.startIndex...close]
            afterHost = bytes[(close + 1)...]
            let inner = host.dropFirst().dropLast()
            guard !inner.isEmpty, inner.allSatisfy({
                HTTP1Grammar.hexValue($0) != nil || $0 == HTTP1Grammar.colon || $0 == UInt8(ascii: ".")
            }) else { return false }
        } else {
            let colon = bytes.lastIndex(of: HTTP1Grammar.colon) ?? bytes.endIndex
            host = bytes[..<colon]
            afterHost = bytes[colon...]
            guard !host.isEmpty, isRegName(host) else { return false }
        }
        guard let separator = afterHost.first else { return !requirePort }
        let port = afterHost.dropFirst()
        guard separator == HTTP1Grammar.colon else { return false }
        if port.isEmpty { return !requirePort }
        guard port.count <= 5, let value = HTTP1Grammar.decimal(port) else { return false }
        return value <= 65535
    }

    /// `*( unreserved / pct-encoded / sub-delims )`, which covers IPv4 too.
    private static func isRegName<Bytes>(_ bytes: Bytes) -> Bool where Bytes: Collection<UInt8>, Bytes.Index == Int {
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let b = bytes[i]
            if b == UInt8(ascii: "%") {
                guard i + 2 < bytes.endIndex, HTTP1Grammar.hexValue(bytes[i + 1]) != nil,
                      HTTP1Grammar.hexValue(bytes[i + 2]) != nil else { return false }
                i += 3
                continue
            }
            let isAlphaNumeric = HTTP1Grammar.isDigit(b) || (HTTP1Grammar.lowercaseASCII(b) >= 0x61 && HTTP1Grammar.lowercaseASCII(b) <= 0x7A)
            guard isAlphaNumeric || "-._~!$&'()*+,;=".utf8.contains(b) else { return false }
            i += 1
        }
        return true
    }
}
