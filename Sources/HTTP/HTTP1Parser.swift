/// A strict, sans-io HTTP/1.1 parser (RFC 9112) for requests or responses.
///
/// Feed it bytes as they arrive with `feed(_:)`, pull events with `next()`
/// until it returns nil (it needs more bytes), and call `finish()` when the
/// peer closed: the next `next()` then ends a close-delimited body or throws
/// `.truncated` if a message was cut short. Bodies stream as `.body` events of
/// whatever arrived; nothing is buffered beyond one head.
///
/// A response parser must be told, in order, the method of each request it
/// will see a response to (`expectResponse(to:)`): HEAD and CONNECT change
/// the framing. A request parser pauses after a CONNECT or Upgrade request
/// until `acceptTunnel()` or `refuseTunnel()` says what the response did.
///
/// After the first error the parser is failed: `next()` throws that error
/// again and fed bytes are ignored. After a message that closes the
/// connection, later bytes are discarded and counted (`discardedByteCount`):
/// a server must not act on requests pipelined after `Connection: close`.
///
/// A value type with no shared state; use it from one queue at a time.
public struct HTTP1Parser: Sendable {
    /// What the parser reads.
    public enum Kind: Hashable, Sendable {
        /// Requests, as a server or the client-facing leg of a proxy reads them.
        case request
        /// Responses, as a client or the server-facing leg of a proxy reads them.
        case response
    }

    /// Where the parser is in the byte stream. Each payload holds the
    /// progress of that phase only.
    enum State: Sendable {
        /// Reading a head: the start line (nil until complete), then field lines.
        case head(StartLine?, HTTP1FieldSection)
        case fixedBody(remaining: Int)
        case chunkSizeLine
        case chunkData(remaining: Int)
        /// Expecting the CRLF that follows chunk data.
        case chunkDataEnd
        case trailers(HTTP1FieldSection)
        case closeDelimitedBody
        /// The message is complete; `.end` is the next event.
        case messageEnd(trailers: HTTPFields?)
        /// After a CONNECT or Upgrade request, until the caller decides.
        case awaitingTunnelDecision
        /// The next event is the first `.tunnel`.
        case tunnelStart
        case tunnel
        /// After a message that ends the connection.
        case closed
        case failed(HTTP1ParseError)
        /// Held only while a payload is being mutated in place (so its arrays
        /// are uniquely referenced and not copied); never seen between calls.
        case modifying
    }

    /// A parsed start line, waiting for its fields.
    enum StartLine: Sendable {
        case request(method: HTTPMethod, target: HTTP1RequestTarget, version: HTTPVersion)
        case response(version: HTTPVersion, status: HTTPStatus, reason: String)
    }

    /// What follows the end of the current message.
    enum AfterMessage: Sendable {
        case nextMessage
        case awaitTunnelDecision
        case close
    }

    public let kind: Kind
    public let limits: HTTP1ParserLimits
    var state: State = .head(nil, HTTP1FieldSection())
    var buffer = HTTP1InputBuffer()
    /// Set by `finish()`: no byte will follow those already fed.
    var inputEnded = false
    /// Decided when a head completes, applied when its message ends.
    var afterMessage = AfterMessage.nextMessage
    /// Methods of the requests whose responses are still to come (response parser).
    var pendingMethods: [HTTPMethod] = []

    /// Bytes dropped because they followed a message that closed the connection.
    public private(set) var discardedByteCount = 0

    public init(parsing kind: Kind, limits: HTTP1ParserLimits = .standard) {
        self.kind = kind
        self.limits = limits
    }

    /// Appends received bytes. Cheap: parsing happens in `next()`.
    public mutating func feed(_ bytes: [UInt8]) {
        if case .failed = state { return }
        buffer.append(bytes)
    }

    /// Records that the peer closed its side: no more bytes will come.
    public mutating func finish() { inputEnded = true }

    /// Response parser: the next response (after any interim ones) answers a
    /// request with this method. Call once per request sent, in order.
    public mutating func expectResponse(to method: HTTPMethod) { pendingMethods.append(method) }

    /// Whether the next event is the current message's `.end` (its body, if
    /// any, was all returned, with nothing left to read for the end itself:
    /// a fixed length reached, or a chunked body's last chunk and trailers
    /// already parsed).
    public var endsMessageNext: Bool {
        if case .messageEnd = state { return true }
        return false
    }

    /// Whether no message has begun and nothing fed is left unparsed, with
    /// more input possible: `next()` can only return nil until bytes are fed.
    public var awaitsMessage: Bool {
        guard !inputEnded, buffer.readableCount == 0, case .head(nil, _) = state else { return false }
        return true
    }

    /// Whether a request parser is paused after a CONNECT or Upgrade request.
    public var isAwaitingTunnelDecision: Bool {
        if case .awaitingTunnelDecision = state { return true }
        return false
    }

    /// The response accepted the CONNECT or Upgrade (2xx or 101): the next
    /// event is `.tunnel` with the bytes already received. Returns false (and
    /// does nothing) unless the parser was awaiting that decision.
    @discardableResult
    public mutating func acceptTunnel() -> Bool {
        guard isAwaitingTunnelDecision else { return false }
        state = .tunnelStart
        return true
    }

    /// The response refused the CONNECT or Upgrade: parsing resumes with the
    /// next request (or stops, if the refused request closed the connection).
    /// Returns false (and does nothing) unless the parser was awaiting that decision.
    @discardableResult
    public mutating func refuseTunnel() -> Bool {
        guard isAwaitingTunnelDecision else { return false }
        state = .head(nil, HTTP1FieldSection())
        return true
    }

    /// The next event, or nil when more bytes (or `finish()`) are needed.
    public mutating func next() throws(HTTP1ParseError) -> HTTP1Event? {
        do {
            return try step()
        } catch {
            state = .failed(error)
            throw error
        }
    }

    /// Every event the bytes fed so far complete, in order.
    public mutating func parseAvailable() throws(HTTP1ParseError) -> [HTTP1Event] {
        var events: [HTTP1Event] = []
        while let event = try next() { events.append(event) }
        return events
    }

    private mutating func step() throws(HTTP1ParseError) -> HTTP1Event? {
        while true {
            switch state {
            case .head(let startLine, let section):
                state = .modifying
                return try readHead(startLine, section)
            case .fixedBody(let remaining):
                guard let chunk = try readBody(remaining, section: .body) else { return nil }
                state = chunk.count == remaining ? .messageEnd(trailers: nil) : .fixedBody(remaining: remaining - chunk.count)
                return .body(chunk)
            case .chunkSizeLine:
                guard try readChunkSizeLine() else { return nil }
            case .chunkData(let remaining):
                guard let chunk = try readBody(remaining, section: .chunkedBody) else { return nil }
                state = chunk.count == remaining ? .chunkDataEnd : .chunkData(remaining: remaining - chunk.count)
                return .body(chunk)
            case .chunkDataEnd:
                guard try readChunkDataEnd() else { return nil }
            case .trailers(let section):
                state = .modifying
                guard try readTrailers(section) else { return nil }
            case .closeDelimitedBody:
                if buffer.readableCount > 0 { return .body(buffer.take(upTo: buffer.readableCount)) }
                guard inputEnded else { return nil }
                state = .messageEnd(trailers: nil)
            case .messageEnd(let trailers):
                switch afterMessage {
                case .nextMessage: state = .head(nil, HTTP1FieldSection())
                case .awaitTunnelDecision: state = .awaitingTunnelDecision
                case .close: state = .closed
                }
                return .end(trailers: trailers)
            case .awaitingTunnelDecision:
                return nil
            case .tunnelStart:
                state = .tunnel
                return .tunnel(leftover: buffer.take(upTo: buffer.readableCount))
            case .tunnel:
                return buffer.readableCount > 0 ? .tunnel(leftover: buffer.take(upTo: buffer.readableCount)) : nil
            case .closed:
                discardedByteCount += buffer.readableCount
                buffer.skip(buffer.readableCount)
                return nil
            case .failed(let error):
                throw error
            case .modifying:
                preconditionFailure("HTTP1Parser re-entered while mutating its state")
            }
        }
    }

    /// Takes up to `remaining` body bytes, or nil when none have arrived.
    private mutating func readBody(_ remaining: Int, section: HTTP1ParseError.Section) throws(HTTP1ParseError) -> [UInt8]? {
        guard buffer.readableCount > 0 else {
            if inputEnded { throw .truncated(section) }
            return nil
        }
        return buffer.take(upTo: remaining)
    }

    /// The next complete line at the cursor, or nil when more bytes are
    /// needed. Throws for a bare LF, for a partial line already longer than
    /// `maxPending` (`tooLong`), and for input that ended mid-line.
    mutating func nextLine(maxPending: Int, tooLong: HTTP1ParseError,
                           section: HTTP1ParseError.Section) throws(HTTP1ParseError) -> Range<Int>? {
        switch buffer.readLine() {
        case .line(let range):
            return range
        case .bareLineFeed:
            throw .bareLineFeed
        case .incomplete(let pending):
            if pending > maxPending { throw tooLong }
            if inputEnded { throw .truncated(section) }
            return nil
        }
    }
}
