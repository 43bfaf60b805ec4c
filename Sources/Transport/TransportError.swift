import HTTP
import TLS
import Wire

/// Every failure the transport layer reports, as a value that names where it
/// happened: the TCP connect, the socket, the TLS handshake, the HTTP framing,
/// an HTTP/2 stream, or a deadline. Recorded with each exchange and shown to
/// users, so `description` reads as one precise sentence.
public enum TransportError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Opening the TCP connection failed (refused, unreachable, name not found, connect timeout).
    case connect(WireError)
    /// The socket failed after it was connected (reset by the peer, broken pipe).
    case connection(WireError)
    /// The TLS handshake failed. `TLSError.kind` says how: `.notTLS` for bytes
    /// that are no ClientHello, `.invalidServerName` for an SNI that is not a
    /// host name, a certificate or version problem otherwise.
    case tlsHandshake(TLSError)
    /// TLS failed after the handshake (a damaged record, a fatal alert).
    case tls(TLSError)
    /// A deadline passed.
    case timeout(TransportTimeout)
    /// The peer closed the connection while `stage` was unfinished.
    case peerClosed(during: TransportStage)
    /// The peer's HTTP/1.x bytes were malformed; `error.status` is the status a
    /// server answers (400, 414, 431, 501, 505), `error.reason` says why.
    case http1Parse(HTTP1ParseError)
    /// An HTTP/1.x message could not be written as asked (framing conflict,
    /// body longer than Content-Length, invalid field).
    case http1Serialize(HTTP1SerializerError)
    /// The HTTP/2 connection failed (protocol violation, flood, rapid reset).
    case http2Connection(HTTP2ConnectionError)
    /// The HTTP/2 session refused a call (stream not open, session closing).
    case http2Session(HTTP2SessionError)
    /// An HTTP/2 stream was reset, by the peer or by us, with its error code.
    case streamReset(HTTP2StreamReset)
    /// The peer sent GOAWAY before processing this stream; it may be retried.
    case goAway(lastStreamID: HTTP2StreamID, code: HTTP2ErrorCode)
    /// A forward proxy answered CONNECT with a non-2xx status.
    case proxyRefused(proxy: String, status: Int, reason: String)
    /// The connection's negotiated protocol is not one this layer speaks
    /// (an ALPN value other than `h2` and `http/1.1`).
    case unsupportedProtocol(String)
    /// The HTTP/2 server did not allow RFC 8441 extended CONNECT (it sent no
    /// SETTINGS_ENABLE_CONNECT_PROTOCOL = 1): a `:protocol` tunnel cannot be opened to it.
    case extendedConnectNotAllowed(protocol: String)
    /// A call that the stream or connection cannot take in its current state
    /// (body after the end, a second request on a busy HTTP/1.1 connection…).
    case invalidState(String)
    /// This side closed or reset the connection or stream before it finished.
    case cancelled

    public var description: String {
        switch self {
        case .connect(let error): return "TCP connect failed: \(error)"
        case .connection(let error): return "connection failed: \(error)"
        case .tlsHandshake(let error): return "TLS handshake failed: \(error)"
        case .tls(let error): return "TLS failed: \(error)"
        case .timeout(let what): return "timed out: \(what)"
        case .peerClosed(let stage): return "peer closed the connection during \(stage)"
        case .http1Parse(let error): return "HTTP/1.1 parse error: \(error.status) \(error.reason)"
        case .http1Serialize(let error): return "HTTP/1.1 message not written: \(error)"
        case .http2Connection(let error): return "HTTP/2 connection error: \(error)"
        case .http2Session(let error): return "HTTP/2 call refused: \(error)"
        case .streamReset(let reset): return "HTTP/2 \(reset)"
        case .goAway(let last, let code): return "HTTP/2 GOAWAY (\(code.name)) before this stream was processed (last stream \(last))"
        case .proxyRefused(let proxy, let status, let reason): return "proxy \(proxy) refused CONNECT: \(status) \(reason)"
        case .unsupportedProtocol(let name): return "negotiated protocol \"\(name)\" is not HTTP/1.1 or HTTP/2"
        case .extendedConnectNotAllowed(let name):
            return "the HTTP/2 upstream does not allow extended CONNECT (RFC 8441: no SETTINGS_ENABLE_CONNECT_PROTOCOL), "
                + "so the \"\(name)\" tunnel cannot go to it"
        case .invalidState(let what): return "not possible now: \(what)"
        case .cancelled: return "cancelled by this side"
        }
    }
}

/// Which deadline passed.
public enum TransportTimeout: String, Hashable, Sendable, CustomStringConvertible {
    /// TCP connect (including name resolution).
    case connect = "TCP connect"
    /// The TLS handshake did not complete (the peer stopped sending, or never began).
    case tlsHandshake = "TLS handshake"
    public var description: String { rawValue }
}

/// What was in progress when a connection ended early.
public enum TransportStage: String, Hashable, Sendable, CustomStringConvertible {
    case tlsHandshake = "the TLS handshake"
    case request = "a request"
    case response = "a response"
    /// A reused HTTP/1.1 connection ended before any byte of the response:
    /// the server most likely closed it as idle while the request was on its
    /// way, and never processed it (RFC 9110 §9.2.2 lets an idempotent
    /// request be sent again).
    case responseOnReusedConnection = "a response on a reused connection (no byte of it came)"
    case http2Streams = "open HTTP/2 streams"
    public var description: String { rawValue }
}
