/// The fields of a head that decide framing and connection handling, gathered
/// in one pass over the fields and validated strictly (RFC 9112 §6, §9).
///
/// Shared by the parser (to frame what it receives) and the serializer (to
/// check or derive the framing of what it writes), so both read
/// `Content-Length` and `Transfer-Encoding` the same way.
///
/// Decision on repeated `Content-Length`: RFC 9110 §8.6 lets a recipient
/// accept a list or repeated lines whose values are all identical
/// (`Content-Length: 5, 5`) as one length. We accept that, because every
/// recipient agrees on the length; any difference is `conflictingContentLengths`.
struct HTTP1HeadAnalysis {
    /// The body length announced, when `Content-Length` is present.
    private(set) var contentLength: Int?
    /// True when `Transfer-Encoding` is present; it is then exactly `chunked`.
    private(set) var isChunked = false
    /// The options of every `Connection` field this layer acts on: `close`,
    /// `keep-alive`, `upgrade` (any case). Flags, not a list of lowercased
    /// tokens: an origin's `Connection: keep-alive` then allocates nothing.
    private(set) var connectionOptions = ConnectionOptions()
    /// The first `Host` value, and how many `Host` lines there are (no
    /// array of them: nearly every request has one).
    private(set) var host: String?
    private(set) var hostCount = 0
    /// Whether an `Upgrade` field is present.
    private(set) var hasUpgrade = false
    /// Whether `Expect` lists `100-continue`.
    private(set) var expectsContinue = false

    /// Validates framing fields. `Transfer-Encoding` in HTTP/1.0, next to a
    /// `Content-Length`, malformed or with a coding other than one final
    /// `chunked` is an error, as is a malformed or ambiguous `Content-Length`.
    init(fields: HTTPFields, version: HTTPVersion) throws(HTTP1ParseError) {
        var lengths: ContentLengthList.Reader?
        var codingValues: [String] = []
        var connectionOptions = ConnectionOptions()
        var expectsContinue = false
        // Read in place through the buffer (iterating the array copies each
        // field); each name classified once (`HTTP1HeadFieldName`); the
        // usual fields (one `Host`, one `Content-Length`) build no array.
        fields.fields.withUnsafeBufferPointer { fields in
            for position in fields.indices {
                switch HTTP1HeadFieldName(fields[position].name) {
                case .contentLength?:
                    lengths = lengths ?? ContentLengthList.Reader()
                    lengths?.read(fields[position].value)
                case .transferEncoding?: codingValues.append(fields[position].value)
                case .connection?: connectionOptions.read(fields[position].value)
                case .host?:
                    if hostCount == 0 { host = fields[position].value }
                    hostCount += 1
                case .upgrade?: hasUpgrade = true
                case .expect?:
                    if !expectsContinue { expectsContinue = HTTP1Grammar.listHas(fields[position].value, "100-continue") }
                case nil: break
                }
            }
        }
        self.connectionOptions = connectionOptions
        self.expectsContinue = expectsContinue
        if !codingValues.isEmpty {
            guard version != .http1_0 else { throw .transferEncodingInHTTP10 }
            guard lengths == nil else { throw .contentLengthWithTransferEncoding }
            isChunked = try Self.chunkedCoding(codingValues)
        }
        switch lengths?.reading {
        case .length(let n)?: contentLength = n
        case .invalid(let value)?: throw .invalidContentLength(value)
        case .conflicting?: throw .conflictingContentLengths(fields.values(.contentLength))
        case nil: break
        }
    }

    /// Whether the connection stays open after this message, judged from the
    /// message alone (RFC 9112 §9.3): HTTP/1.1 unless `close`, HTTP/1.0 only
    /// with `keep-alive`.
    func keepAlive(version: HTTPVersion) -> Bool {
        if connectionOptions.close { return false }
        return version == .http1_0 ? connectionOptions.keepAlive : true
    }

    /// Whether a request asks to switch protocols: `Upgrade` named in
    /// `Connection`, in HTTP/1.1 (an HTTP/1.0 Upgrade is ignored, RFC 9110 §7.8).
    func upgradeRequested(version: HTTPVersion) -> Bool {
        version == .http1_1 && hasUpgrade && connectionOptions.upgrade
    }

    /// The `Connection` options a head's framing and persistence depend on.
    struct ConnectionOptions {
        var close = false
        var keepAlive = false
        var upgrade = false

        /// Notes the options one `Connection` value lists, read in place.
        mutating func read(_ value: String) {
            FieldNameIndex.withUTF8(value) { bytes in
                _ = HTTP1Grammar.forEachListElement(bytes) { token in
                    if HTTP1Grammar.equalsIgnoringASCIICase(token, "close") {
                        close = true
                    } else if HTTP1Grammar.equalsIgnoringASCIICase(token, "keep-alive") {
                        keepAlive = true
                    } else if HTTP1Grammar.equalsIgnoringASCIICase(token, "upgrade") {
                        upgrade = true
                    }
                    return false
                }
            }
        }
    }

    /// Checks `Transfer-Encoding` values and returns true (the only accepted
    /// outcome is one `chunked`, last). Lookalikes of `chunked` (`xchunked`,
    /// `chunked;x=1`, quoted, empty list elements) are obfuscation, 400; a
    /// well-formed coding we do not decode is 501.
    private static func chunkedCoding(_ values: [String]) throws(HTTP1ParseError) -> Bool {
        var codings: [String] = []
        for value in values {
            for element in HTTP1Grammar.listElements(value) {
                var name = element
                if let semicolon = element.firstIndex(of: HTTP1Grammar.semicolon) {
                    name = HTTP1Grammar.trimmingWhitespace(element[..<semicolon])
                }
                guard HTTP1Grammar.isToken(name) else { throw .obfuscatedTransferEncoding(value) }
                let lower = HTTP1Grammar.text(name.map(HTTP1Grammar.lowercaseASCII))
                let hasParameters = name.count != element.count
                if lower.contains("chunked") && (lower != "chunked" || hasParameters) {
                    throw .obfuscatedTransferEncoding(value)
                }
                codings.append(lower)
            }
        }
        let chunkedCount = codings.count(where: { $0 == "chunked" })
        if chunkedCount > 1 { throw .duplicateChunked }
        if chunkedCount == 1 && codings.last != "chunked" { throw .chunkedNotLast }
        if let other = codings.first(where: { $0 != "chunked" }) { throw .unsupportedTransferCoding(other) }
        return true
    }
}
