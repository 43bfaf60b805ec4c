/// Writes HTTP/1.1 messages on one connection, one at a time: a head, body
/// pieces in its framing, then the end (with trailers when chunked).
///
/// Heads keep the fields exactly as given — name case, order, values — so a
/// parsed head written again with its parsed framing gives back the bytes it
/// was parsed from, provided the input was in the canonical shape
/// `Name: value` (one space after the colon, no trailing whitespace), the
/// status line had a reason separator, and an absolute target had a path.
///
/// Framing: pass the framing to use (a proxy passes the parsed one), or nil
/// to derive it from the fields as a recipient would, except that an HTTP/1.1
/// response without framing fields is sent chunked rather than
/// close-delimited. A response to an HTTP/1.0 request is never chunked
/// (an HTTP/1.0 recipient does not know chunked, RFC 9112 §6.1): without a
/// length it is close-delimited, and a chunked framing asked for becomes
/// close-delimited. When the chosen framing needs a field the head lacks,
/// `Content-Length` or `Transfer-Encoding: chunked` is appended; a framing
/// that contradicts the fields is refused, never silently rewritten.
///
/// Every field name, value, method, target and reason is checked, so nothing
/// the caller passes can inject a line into the head.
///
/// A value type; use it from one queue at a time.
public struct HTTP1Serializer: Sendable {
    /// Where the writer is between messages.
    enum State: Sendable {
        /// Ready for a head.
        case idle
        /// Body pieces of this framing may follow, then the end.
        case body(Body)
        /// After a tunnel head or a close-delimited end: nothing more.
        case ended
    }

    enum Body: Sendable {
        case none
        case fixed(remaining: Int, total: Int)
        case chunked
        case closeDelimited
    }

    private var state = State.idle

    public init() {}

    /// Writes a request head in its target form (`head.target`).
    public mutating func writeRequestHead(_ head: HTTPRequestHead,
                                          framing: HTTP1Framing? = nil) throws(HTTP1SerializerError) -> HTTP1SerializedHead {
        try checkIdle()
        guard HTTP1Grammar.isToken(head.method.rawValue.utf8) else { throw .invalidMethod(head.method.rawValue) }
        let target = head.target
        guard !target.isEmpty, target.utf8.allSatisfy(HTTP1Grammar.isVisibleASCII) else { throw .invalidTarget(target) }
        let version = try Self.versionText(head.version)
        var fields = head.fields
        let analysis = try Self.analyse(fields, head.version)
        let declared = HTTP1Parser.declaredFraming(analysis)
        let chosen = try Self.resolve(requested: framing, receiverView: declared ?? .none, unframed: declared == nil,
                                      isResponse: false, chunkedAllowed: head.version == .http1_1, fields: &fields)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.headCapacity(fields) + target.utf8.count + head.method.rawValue.utf8.count)
        bytes.append(contentsOf: head.method.rawValue.utf8)
        bytes.append(HTTP1Grammar.space)
        bytes.append(contentsOf: target.utf8)
        bytes.append(HTTP1Grammar.space)
        bytes.append(contentsOf: version.utf8)
        return try finishHead(&bytes, fields: fields, framing: chosen, isInterim: false)
    }

    /// Writes a response head answering a request with `requestMethod`, which
    /// decides the no-body and tunnel rules (HEAD, CONNECT), in
    /// `requestVersion` (HTTP/1.0 rules out chunked). A 1xx other than
    /// 101 is interim: the final head for the same request follows, with no
    /// body or end in between.
    public mutating func writeResponseHead(_ head: HTTPResponseHead, framing: HTTP1Framing? = nil,
                                           requestMethod: HTTPMethod = .get,
                                           requestVersion: HTTPVersion = .http1_1) throws(HTTP1SerializerError) -> HTTP1SerializedHead {
        try checkIdle()
        guard (100...999).contains(head.status.code) else { throw .invalidStatus(head.status.code) }
        guard HTTP1Grammar.isFieldValue(head.reason) else { throw .invalidReason(head.reason) }
        let version = try Self.versionText(head.version)
        var fields = head.fields
        let analysis = try Self.analyse(fields, head.version)
        let view = HTTP1Parser.responseFraming(status: head.status, requestMethod: requestMethod, analysis: analysis)
        let chunkedAllowed = head.version == .http1_1 && requestVersion != .http1_0
        let requested = framing == .chunked && !chunkedAllowed && view == .closeDelimited ? .closeDelimited : framing
        let chosen = try Self.resolve(requested: requested, receiverView: view, unframed: view == .closeDelimited,
                                      isResponse: true, chunkedAllowed: chunkedAllowed, fields: &fields)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.headCapacity(fields))
        bytes.append(contentsOf: version.utf8)
        bytes.append(HTTP1Grammar.space)
        Self.appendStatus(head.status, to: &bytes)
        bytes.append(HTTP1Grammar.space)
        HTTP1Grammar.appendLatin1(head.reason, to: &bytes)
        let isInterim = head.status.isInterim
        return try finishHead(&bytes, fields: fields, framing: chosen, isInterim: isInterim)
    }

    /// Frames body bytes for the current message (empty input gives empty output).
    public mutating func writeBody(_ body: [UInt8]) throws(HTTP1SerializerError) -> [UInt8] {
        guard case .body(let framing) = state else { throw stateError() }
        if body.isEmpty { return [] }
        switch framing {
        case .none:
            throw .bodyNotAllowed
        case let .fixed(remaining, total):
            guard body.count <= remaining else { throw .bodyExceedsContentLength(total) }
            state = .body(.fixed(remaining: remaining - body.count, total: total))
            return body
        case .chunked:
            var out: [UInt8] = []
            out.reserveCapacity(body.count + 20)
            out.append(contentsOf: String(body.count, radix: 16).utf8)
            out.append(contentsOf: HTTP1Grammar.crlf)
            out.append(contentsOf: body)
            out.append(contentsOf: HTTP1Grammar.crlf)
            return out
        case .closeDelimited:
            return body
        }
    }

    /// Whether the message in progress can carry trailers (it is chunked).
    public var carriesTrailers: Bool {
        if case .body(.chunked) = state { return true }
        return false
    }

    /// Ends the current message. Chunked framing writes the last chunk and the
    /// trailers; other framings write nothing, and refuse trailers. After a
    /// close-delimited body the caller must close the connection.
    public mutating func writeEnd(trailers: HTTPFields? = nil) throws(HTTP1SerializerError) -> [UInt8] {
        guard case .body(let framing) = state else { throw stateError() }
        let hasTrailers = !(trailers ?? HTTPFields()).isEmpty
        switch framing {
        case .chunked:
            var out: [UInt8] = Array("0\r\n".utf8)
            try Self.appendFieldLines(trailers ?? HTTPFields(), to: &out)
            out.append(contentsOf: HTTP1Grammar.crlf)
            state = .idle
            return out
        case .fixed(let remaining, _) where remaining > 0:
            throw .bodyShorterThanContentLength(missing: remaining)
        case .none, .fixed, .closeDelimited:
            guard !hasTrailers else { throw .trailersRequireChunked }
            if case .closeDelimited = framing { state = .ended } else { state = .idle }
            return []
        }
    }

    /// Ends the current message with the trailers it can carry: all of them
    /// when it is chunked; none otherwise (a message that is not chunked
    /// cannot carry trailers, so they are dropped). Returns the bytes to send
    /// (possibly none) and the trailers they carry (nil when none).
    public mutating func writeEnd(offering trailers: HTTPFields?) throws(HTTP1SerializerError) -> (bytes: [UInt8], trailers: HTTPFields?) {
        let carried = carriesTrailers && trailers?.isEmpty == false ? trailers : nil
        return (try writeEnd(trailers: carried), carried)
    }

    private func checkIdle() throws(HTTP1SerializerError) {
        switch state {
        case .idle: return
        case .body: throw .messageInProgress
        case .ended: throw .connectionEnded
        }
    }

    private func stateError() -> HTTP1SerializerError {
        if case .ended = state { return .connectionEnded }
        return .noMessageInProgress
    }

    /// Appends the field lines and the blank line, and moves to the body state.
    /// `bytes` holds the start line; taken in place, so the field lines go
    /// into the room reserved for them (a copy would not be unique).
    private mutating func finishHead(_ bytes: inout [UInt8], fields: HTTPFields, framing: HTTP1Framing,
                                     isInterim: Bool) throws(HTTP1SerializerError) -> HTTP1SerializedHead {
        bytes.append(contentsOf: HTTP1Grammar.crlf)
        try Self.appendFieldLines(fields, to: &bytes)
        bytes.append(contentsOf: HTTP1Grammar.crlf)
        switch framing {
        case _ where isInterim: state = .idle
        case .none: state = .body(.none)
        case .contentLength(let n): state = .body(.fixed(remaining: n, total: n))
        case .chunked: state = .body(.chunked)
        case .closeDelimited: state = .body(.closeDelimited)
        case .tunnel: state = .ended
        }
        return HTTP1SerializedHead(bytes: bytes, framing: framing, fields: fields)
    }

    /// Appends the three digits of a status code in 100…999.
    private static func appendStatus(_ status: HTTPStatus, to bytes: inout [UInt8]) {
        let status = status.code
        bytes.append(0x30 + UInt8(truncatingIfNeeded: status / 100))
        bytes.append(0x30 + UInt8(truncatingIfNeeded: status / 10 % 10))
        bytes.append(0x30 + UInt8(truncatingIfNeeded: status % 10))
    }

    /// Room for a whole head in one allocation: start line, every field line
    /// (UTF-8 counts bound the ISO-8859-1 bytes written), a framing field the
    /// serializer may add, the blank line.
    private static func headCapacity(_ fields: HTTPFields) -> Int {
        fields.reduce(96) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 } + 32
    }

    /// `name: value CRLF` per field, each name and value checked as it is
    /// copied, in one pass (read in place through the array's buffer:
    /// iterating the array copies each field). On a throw the bytes appended
    /// are left to the caller, which drops them.
    private static func appendFieldLines(_ fields: HTTPFields, to bytes: inout [UInt8]) throws(HTTP1SerializerError) {
        try fields.fields.withUnsafeBufferPointer { (fields) throws(HTTP1SerializerError) in
            for position in fields.indices {
                guard HTTP1Grammar.appendToken(fields[position].name, to: &bytes) else { throw .invalidField(fields[position]) }
                bytes.append(HTTP1Grammar.colon)
                bytes.append(HTTP1Grammar.space)
                guard HTTP1Grammar.appendFieldValue(fields[position].value, to: &bytes) else { throw .invalidField(fields[position]) }
                bytes.append(HTTP1Grammar.cr)
                bytes.append(HTTP1Grammar.lf)
            }
        }
    }

    private static func versionText(_ version: HTTPVersion) throws(HTTP1SerializerError) -> String {
        guard version != .http2 else { throw .unsupportedVersion(version) }
        return version.rawValue
    }

    private static func analyse(_ fields: HTTPFields, _ version: HTTPVersion) throws(HTTP1SerializerError) -> HTTP1HeadAnalysis {
        do {
            return try HTTP1HeadAnalysis(fields: fields, version: version)
        } catch {
            throw .invalidFramingFields(error)
        }
    }

    /// Chooses the framing. `receiverView` is what a recipient would conclude
    /// from the fields; `unframed` says the fields declare no body length
    /// (so one may be added). A requested framing equal to the view is kept;
    /// a different one is allowed only when unframed, by appending the field
    /// that declares it. `chunkedAllowed`: both ends speak HTTP/1.1.
    private static func resolve(requested: HTTP1Framing?, receiverView: HTTP1Framing, unframed: Bool, isResponse: Bool,
                                chunkedAllowed: Bool, fields: inout HTTPFields) throws(HTTP1SerializerError) -> HTTP1Framing {
        let preferred = isResponse && chunkedAllowed ? HTTP1Framing.chunked : receiverView
        let wanted = requested ?? (unframed ? preferred : receiverView)
        if wanted == receiverView { return wanted }
        guard unframed else { throw .framingConflict(requested: wanted, declared: receiverView) }
        switch wanted {
        case .contentLength(let n):
            fields.append("Content-Length", String(n))
            return wanted
        case .none where isResponse:
            fields.append("Content-Length", "0")
            return .contentLength(0)
        case .chunked where chunkedAllowed:
            fields.append("Transfer-Encoding", "chunked")
            return wanted
        case .none, .chunked, .closeDelimited, .tunnel:
            throw .framingNotAllowed(wanted)
        }
    }
}
