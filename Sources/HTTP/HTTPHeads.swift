/// The protocol version a message travelled in.
public enum HTTPVersion: String, Hashable, Sendable, Codable, CustomStringConvertible {
    case http1_0 = "HTTP/1.0"
    case http1_1 = "HTTP/1.1"
    case http2 = "HTTP/2"

    public var description: String { rawValue }
}

/// The form a request target took on the wire (RFC 9112 §3.2).
public enum RequestTargetForm: String, Hashable, Sendable, Codable {
    /// `/path?query`, the usual form to an origin server.
    case origin
    /// `https://host:port/path`, the usual form to a forward proxy.
    case absolute
    /// `host:port`, only with CONNECT.
    case authority
    /// `*`, only with OPTIONS.
    case asterisk
}

/// A request's head, independent of the version that carried it.
///
/// `scheme`, `authority` and `path` are first-class values: HTTP/1.1 fills
/// them from the target (and `authority` from Host for origin form); HTTP/2
/// from its pseudo-fields. `fields` holds the regular fields only, never
/// pseudo-fields; for HTTP/1.1 it includes `Host` as it appeared.
///
/// A value with copy-on-write storage: each copy of a head (the codec's, the
/// proxy's exchange, its record, its retry copy, the upstream codec's) is
/// one reference, not a copy of each string and of the fields
/// (Docs/performance.md#head-handling). A change to a copy that shares its
/// storage copies the storage first.
public struct HTTPRequestHead: Hashable, Sendable {
    /// What a head holds; copies of a head share one of these (`Storage`).
    private struct Values: Hashable {
        var method: HTTPMethod
        var scheme: Optional<String>
        var authority: Optional<String>
        var path: String
        var targetForm: RequestTargetForm
        var version: HTTPVersion
        var fields: HTTPFields
        var connectProtocol: Optional<String>
        var pseudoFieldOrder: Optional<HTTP2PseudoFieldOrder> = nil
    }

    /// The shared values. Invariant: never changed while more than one head
    /// refers to it (`makeUnique`), which is why it may cross threads.
    private final class Storage: @unchecked Sendable {
        var values: Values

        init(_ values: Values) {
            self.values = values
        }
    }

    private var storage: Storage

    /// Gives this head storage of its own before a change.
    private mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.values) }
    }

    public var method: HTTPMethod {
        get { storage.values.method }
        set { makeUnique(); storage.values.method = newValue }
        _modify { makeUnique(); yield &storage.values.method }
    }
    /// `https`, `http`, or nil when the wire did not say (origin form over HTTP/1.1).
    public var scheme: String? {
        get { storage.values.scheme }
        set { makeUnique(); storage.values.scheme = newValue }
        _modify { makeUnique(); yield &storage.values.scheme }
    }
    /// `host[:port]`, or nil when absent.
    public var authority: String? {
        get { storage.values.authority }
        set { makeUnique(); storage.values.authority = newValue }
        _modify { makeUnique(); yield &storage.values.authority }
    }
    /// Path and query (`/a/b?c=d`); `*` for asterisk form; empty for CONNECT.
    public var path: String {
        get { storage.values.path }
        set { makeUnique(); storage.values.path = newValue }
        _modify { makeUnique(); yield &storage.values.path }
    }
    public var targetForm: RequestTargetForm {
        get { storage.values.targetForm }
        set { makeUnique(); storage.values.targetForm = newValue }
        _modify { makeUnique(); yield &storage.values.targetForm }
    }
    public var version: HTTPVersion {
        get { storage.values.version }
        set { makeUnique(); storage.values.version = newValue }
        _modify { makeUnique(); yield &storage.values.version }
    }
    public var fields: HTTPFields {
        get { storage.values.fields }
        set { makeUnique(); storage.values.fields = newValue }
        _modify { makeUnique(); yield &storage.values.fields }
    }
    /// The protocol an HTTP/2 extended CONNECT asks to tunnel (RFC 8441
    /// `:protocol`, e.g. `websocket`); nil for every other request. Such a
    /// CONNECT has a scheme, an authority and a path like any request.
    public var connectProtocol: String? {
        get { storage.values.connectProtocol }
        set { makeUnique(); storage.values.connectProtocol = newValue }
        _modify { makeUnique(); yield &storage.values.connectProtocol }
    }

    /// The order an HTTP/2 head's pseudo-fields arrived in, when it was not
    /// the one `HTTP2FieldMapping` sends by default; an HTTP/2 sender keeps
    /// it (`HTTP2FieldMapping.requestList`). Nil for every other head.
    public var pseudoFieldOrder: HTTP2PseudoFieldOrder? {
        get { storage.values.pseudoFieldOrder }
        set { makeUnique(); storage.values.pseudoFieldOrder = newValue }
    }

    public init(method: HTTPMethod, scheme: String? = nil, authority: String? = nil, path: String,
                targetForm: RequestTargetForm = .origin, version: HTTPVersion = .http1_1,
                fields: HTTPFields = HTTPFields(), connectProtocol: String? = nil) {
        storage = Storage(Values(method: method, scheme: scheme, authority: authority, path: path,
                                 targetForm: targetForm, version: version, fields: fields,
                                 connectProtocol: connectProtocol))
    }

    public static func == (a: HTTPRequestHead, b: HTTPRequestHead) -> Bool {
        a.storage === b.storage || a.storage.values == b.storage.values
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(storage.values)
    }

    /// An RFC 8441 extended CONNECT: `CONNECT` with a `:protocol`.
    public var isExtendedConnect: Bool { method == .connect && connectProtocol != nil }

    /// The target as an HTTP/1.1 request line would carry it in `targetForm`.
    public var target: String {
        switch targetForm {
        case .origin: return path
        case .asterisk: return "*"
        case .authority: return authority ?? ""
        case .absolute: return "\(scheme ?? "http")://\(authority ?? "")\(path)"
        }
    }

    /// The path without its query. Looks for the `?` byte, not a
    /// `Character` (an ASCII byte is always a scalar boundary, so the index
    /// cuts the `String` cleanly).
    public var pathOnly: String {
        if let q = path.utf8.firstIndex(of: UInt8(ascii: "?")) { return String(path[..<q]) }
        return path
    }
}

/// A response's head, independent of the version that carried it.
public struct HTTPResponseHead: Hashable, Sendable {
    public var status: HTTPStatus
    /// The reason phrase as received (HTTP/1.1); empty for HTTP/2.
    public var reason: String
    public var version: HTTPVersion
    public var fields: HTTPFields

    public init(status: HTTPStatus, reason: String? = nil, version: HTTPVersion = .http1_1,
                fields: HTTPFields = HTTPFields()) {
        self.status = status
        self.reason = reason ?? HTTPResponseHead.standardReason(status)
        self.version = version
        self.fields = fields
    }

    /// 1xx (101 included; `status.isInterim` tells the interim ones).
    public var isInformational: Bool { status.isInformational }

    /// The reason phrase RFC 9110 §15 gives `status`, "Unknown" for a code it does not define.
    public static func standardReason(_ status: HTTPStatus) -> String {
        rfc9110Reason(status) ?? "Unknown"
    }

    /// The reason phrase RFC 9110 §15 defines for `status`, nil for a code it
    /// does not define (an HTTP/1.1 status line may then carry an empty reason).
    public static func rfc9110Reason(_ status: HTTPStatus) -> String? {
        switch status.code {
        case 100: return "Continue"
        case 101: return "Switching Protocols"
        case 200: return "OK"
        case 201: return "Created"
        case 202: return "Accepted"
        case 203: return "Non-Authoritative Information"
        case 204: return "No Content"
        case 205: return "Reset Content"
        case 206: return "Partial Content"
        case 300: return "Multiple Choices"
        case 301: return "Moved Permanently"
        case 302: return "Found"
        case 303: return "See Other"
        case 304: return "Not Modified"
        case 305: return "Use Proxy"
        case 307: return "Temporary Redirect"
        case 308: return "Permanent Redirect"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 402: return "Payment Required"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 406: return "Not Acceptable"
        case 407: return "Proxy Authentication Required"
        case 408: return "Request Timeout"
        case 409: return "Conflict"
        case 410: return "Gone"
        case 411: return "Length Required"
        case 412: return "Precondition Failed"
        case 413: return "Content Too Large"
        case 414: return "URI Too Long"
        case 415: return "Unsupported Media Type"
        case 416: return "Range Not Satisfiable"
        case 417: return "Expectation Failed"
        case 421: return "Misdirected Request"
        case 422: return "Unprocessable Content"
        case 426: return "Upgrade Required"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        case 505: return "HTTP Version Not Supported"
        // Not in RFC 9110 but registered and common: RFC 8297, RFC 6585.
        case 103: return "Early Hints"
        case 428: return "Precondition Required"
        case 429: return "Too Many Requests"
        case 431: return "Request Header Fields Too Large"
        case 511: return "Network Authentication Required"
        default: return nil
        }
    }

    /// The head as an HTTP/1.x status line carries it. A head from HTTP/2
    /// (which has no reason phrase) gets the standard phrase for its status
    /// (RFC 9110 §15; empty for a code without one) and `version`; an HTTP/1.x
    /// head keeps its version and its reason byte for byte: a proxy relaying
    /// HTTP/1.1 to HTTP/1.1 changes neither.
    public func carriedByHTTP1(as version: HTTPVersion = .http1_1) -> HTTPResponseHead {
        guard self.version == .http2 else { return self }
        var head = self
        head.version = version == .http2 ? .http1_1 : version
        head.reason = HTTPResponseHead.rfc9110Reason(status) ?? ""
        return head
    }
}

/// One piece of a message as it streams: the head, body chunks, then the end
/// with optional trailers. Exactly one `.head` comes first and exactly one
/// `.end` comes last; bodies are never buffered whole.
public enum HTTPPart<Head: Sendable & Hashable>: Sendable, Hashable {
    case head(Head)
    case body([UInt8])
    case end(trailers: HTTPFields?)
}

public typealias HTTPRequestPart = HTTPPart<HTTPRequestHead>
public typealias HTTPResponsePart = HTTPPart<HTTPResponseHead>
