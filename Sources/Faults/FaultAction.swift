/// What a rule does. Each case is one building block of `FAULTS.md`; presets
/// are made of the same blocks. `kind` gives the name used in rule files and
/// in `AppliedFault.action`.
public enum FaultAction: Sendable, Hashable {
    // Header fields.
    /// Removes every field of this name.
    case removeHeader(name: String)
    /// Appends a field.
    case addHeader(name: String, value: String)
    /// Replaces the first field of this name in place and removes the others; appends when absent.
    case setHeader(name: String, value: String)
    /// Renames every field of this name, keeping position and value (also changes case exactly).
    case renameHeader(name: String, to: String)
    /// Rewrites the case of a field's name, or of every name when `name` is nil.
    case headerCase(name: String?, style: HeaderCaseStyle)

    // Cookies.
    /// Removes the `Set-Cookie` field setting this cookie, or every `Set-Cookie` when nil.
    case removeSetCookie(cookie: String?)
    /// Edits the `Set-Cookie` field setting this cookie (every one when nil).
    case rewriteSetCookie(cookie: String?, edit: SetCookieEdit)
    /// Folds every `Set-Cookie` field into one, values joined with ", " (RFC 6265 §3 forbids it).
    case foldSetCookie
    /// Appends a `Set-Cookie` field with this value (e.g. a load balancer's affinity cookie).
    case addSetCookie(value: String)
    /// Removes one crumb (`name=value`) from the `Cookie` field(s); drops a field left empty.
    case removeCookie(cookie: String)
    /// Replaces the value of one crumb in the `Cookie` field(s).
    case rewriteCookie(cookie: String, value: String)

    // Body.
    /// Replaces the whole body; sets `Content-Type` when given.
    case replaceBody(body: [UInt8], contentType: String?)
    /// Regex replace over the whole body (buffered), `$1` in the template names a group.
    case regexBody(CompiledRegex, template: String)
    /// Cuts the body after this many bytes (streamed); the message still ends cleanly.
    case truncateBody(bytes: Int)
    /// Compresses the body with gzip and marks it `Content-Encoding: gzip` (buffered).
    case gzipBody
    /// Re-cuts the body into chunks of exactly this many bytes, the last one shorter (streamed).
    case rechunkBody(bytes: Int)

    // Status, answers, URLs, gates.
    /// Replaces the status (and the reason phrase), optionally setting `Location`.
    case setStatus(status: Int, reason: String?, location: String?)
    /// Answers with a canned response: the server is never asked (request leg)
    /// or its response is replaced (response leg).
    case answer(CannedResponse)
    /// Regex replace over the request target (path and query).
    case regexTarget(CompiledRegex, template: String)
    /// Rewrites scheme, host or path prefix of absolute URLs in the given places.
    case rewriteURLs(URLRewrite, places: Set<URLPlace>)
    /// Forwards only requests that carry a cookie or field; answers the others.
    case gate(Gate)

    // Network, carried out by the proxy.
    /// Holds the message back: `milliseconds` ± up to `jitter`, drawn from the seeded generator.
    case delay(milliseconds: Int, jitter: Int)
    /// Limits the rest of the message to this many bytes a second.
    case throttle(bytesPerSecond: Int)
    /// Resets the connection at this point of the message.
    case reset(ResetPoint)
    /// Closes the client's connection without answering.
    case closeSilently
    /// Never answers and never closes (the client times out).
    case stall

    // TLS, decided when a client connects.
    /// Demands a client certificate signed by the CA in this PEM file, or
    /// by the proxy's own CA (the one that mints its certificates) when nil.
    case requireClientCertificate(caFile: String?)
    /// Presents a server certificate from a CA the client does not trust.
    case presentUnknownCA

    public var kind: FaultActionKind {
        switch self {
        case .removeHeader: return .removeHeader
        case .addHeader: return .addHeader
        case .setHeader: return .setHeader
        case .renameHeader: return .renameHeader
        case .headerCase: return .headerCase
        case .removeSetCookie: return .removeSetCookie
        case .rewriteSetCookie: return .rewriteSetCookie
        case .foldSetCookie: return .foldSetCookie
        case .addSetCookie: return .addSetCookie
        case .removeCookie: return .removeCookie
        case .rewriteCookie: return .rewriteCookie
        case .replaceBody: return .replaceBody
        case .regexBody: return .regexBody
        case .truncateBody: return .truncateBody
        case .gzipBody: return .gzipBody
        case .rechunkBody: return .rechunkBody
        case .setStatus: return .setStatus
        case .answer: return .answer
        case .regexTarget: return .regexTarget
        case .rewriteURLs: return .rewriteURLs
        case .gate: return .gate
        case .delay: return .delay
        case .throttle: return .throttle
        case .reset: return .reset
        case .closeSilently: return .close
        case .stall: return .stall
        case .requireClientCertificate: return .requireClientCertificate
        case .presentUnknownCA: return .unknownCACertificate
        }
    }
}
