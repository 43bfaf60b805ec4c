/// What an `HTTP1Parser` produces, in wire order.
///
/// A message is one head event, zero or more `.body` events, then `.end`. Two
/// exceptions: an interim (1xx other than 101) response head stands alone,
/// the next event is the next head; and a head whose framing is `.tunnel` is
/// followed by `.tunnel` instead of a body and end. A request parser also
/// emits `.tunnel`, after a CONNECT or Upgrade request, once told the
/// response accepted it (`HTTP1Parser.acceptTunnel()`).
public enum HTTP1Event: Hashable, Sendable {
    case requestHead(HTTP1ParsedRequestHead)
    case responseHead(HTTP1ParsedResponseHead)
    /// Body bytes after transfer decoding (chunk framing removed). Never empty.
    case body([UInt8])
    /// The message is complete. Trailers are nil unless a chunked body carried
    /// a non-empty trailer section.
    case end(trailers: HTTPFields?)
    /// The connection now carries another protocol. The first `.tunnel` marks
    /// the switch; its `leftover` holds the bytes already received after the
    /// message (possibly none). Parsing has stopped: bytes fed later come back
    /// unchanged as further `.tunnel` events, so nothing is lost.
    case tunnel(leftover: [UInt8])
}

/// A request head as parsed, with what the codec learnt about it.
public struct HTTP1ParsedRequestHead: Hashable, Sendable {
    /// The head in the version-neutral model. `scheme`/`authority`/`path` come
    /// from the target; for origin and asterisk forms `authority` is the Host
    /// value (nil when Host is absent or empty).
    public var head: HTTPRequestHead
    /// The head exactly as received: the request line through the CRLF that
    /// ends the last field line, without the blank line (nor any empty lines
    /// that preceded the request line). The "exact head" digest covers these.
    public var rawHead: [UInt8]
    /// How the body is delimited: `.none`, `.contentLength` or `.chunked`.
    public var framing: HTTP1Framing
    /// Whether the connection may carry another request after this one.
    public var keepAlive: Bool
    /// `Expect: 100-continue` in an HTTP/1.1 request: the client may wait for
    /// a 100 (Continue) before sending the body.
    public var expectsContinue: Bool
    /// `Upgrade` listed in `Connection` (HTTP/1.1): a 101 may switch protocols.
    /// The parser pauses after this message until told the outcome.
    public var upgradeRequested: Bool

    public init(head: HTTPRequestHead, rawHead: [UInt8], framing: HTTP1Framing, keepAlive: Bool,
                expectsContinue: Bool, upgradeRequested: Bool) {
        self.head = head
        self.rawHead = rawHead
        self.framing = framing
        self.keepAlive = keepAlive
        self.expectsContinue = expectsContinue
        self.upgradeRequested = upgradeRequested
    }
}

/// A response head as parsed, with what the codec learnt about it.
public struct HTTP1ParsedResponseHead: Hashable, Sendable {
    public var head: HTTPResponseHead
    /// The status line through the CRLF that ends the last field line, without
    /// the blank line, exactly as received.
    public var rawHead: [UInt8]
    /// How the body is delimited; `.tunnel` for 101 and for 2xx to CONNECT.
    public var framing: HTTP1Framing
    /// Whether the connection may carry another exchange after this one
    /// (false for close-delimited bodies and tunnels).
    public var keepAlive: Bool
    /// The method of the request this answers (as given to `expectResponse`).
    public var requestMethod: HTTPMethod

    /// A 1xx other than 101: a final response to the same request follows.
    public var isInterim: Bool { head.status.isInterim }

    public init(head: HTTPResponseHead, rawHead: [UInt8], framing: HTTP1Framing, keepAlive: Bool,
                requestMethod: HTTPMethod) {
        self.head = head
        self.rawHead = rawHead
        self.framing = framing
        self.keepAlive = keepAlive
        self.requestMethod = requestMethod
    }
}
