/// An HTTP/2 stream identifier (31 bits; odd for client-initiated streams).
public typealias HTTP2StreamID = Int32

/// Something an `HTTP2Session` learned from the peer or from its own sending.
///
/// For one stream the order is: `interimResponse`* (client role only), then
/// one `requestHead`/`responseHead`, then `data`*, then `streamEnded`; or a
/// `streamReset` at any point (also after `streamEnded`, while this side
/// still sends), after which nothing more is reported for it.
/// `data` chunks for one stream that arrive back to back are coalesced.
public enum HTTP2Event: Hashable, Sendable {
    /// Server role: a request's head. `decodedFields` is the header list
    /// exactly as HPACK decoded it, pseudo-fields first, in order (the input of
    /// the "exact head" digest); `head.fields` holds the regular fields only,
    /// with `cookie` crumbs kept as separate fields as received.
    case requestHead(stream: HTTP2StreamID, head: HTTPRequestHead, decodedFields: [HTTPField])
    /// Server role: a request the session refused before it became one (its
    /// header list went over `maxHeaderListSize`; RST_STREAM
    /// ENHANCE_YOUR_CALM follows). `head` holds what was kept of it: the
    /// pseudo-header fields and `intact-trace` (`HTTP2HeaderBlock`), nil
    /// when they were not all there; `reason` says why. Nothing more is
    /// reported for the stream.
    case requestRefused(stream: HTTP2StreamID, head: HTTPRequestHead?, reason: String)
    /// Client role: an interim (1xx) response; the final response follows.
    case interimResponse(stream: HTTP2StreamID, head: HTTPResponseHead, decodedFields: [HTTPField])
    /// Client role: the final response's head (`:status` 200–599).
    case responseHead(stream: HTTP2StreamID, head: HTTPResponseHead, decodedFields: [HTTPField])
    /// Body bytes. The receiver must call `HTTP2Session.consumed(stream:bytes:)`
    /// once it has passed them on; until then they count against the peer's window.
    case data(stream: HTTP2StreamID, bytes: [UInt8])
    /// The peer ended its side of the stream, with trailers when it sent them.
    case streamEnded(stream: HTTP2StreamID, trailers: HTTPFields?)
    /// The stream was reset, by the peer or locally (see `HTTP2StreamReset`).
    case streamReset(HTTP2StreamReset)
    /// The peer sent GOAWAY: streams above `lastStreamID` were not processed.
    case goAwayReceived(lastStreamID: HTTP2StreamID, code: HTTP2ErrorCode, debugData: [UInt8])
    /// The peer acknowledged our SETTINGS.
    case settingsAcknowledged
    /// The peer answered our PING carrying this opaque value.
    case pingAcknowledged(UInt64)
    /// The connection failed; a GOAWAY with `error.goAwayCode` is queued (or was
    /// sent) and the session reads nothing more. Reported once.
    case connectionError(HTTP2ConnectionError)
}

/// A stream that ended abnormally.
public struct HTTP2StreamReset: Hashable, Sendable, CustomStringConvertible {
    /// Who reset the stream.
    public enum Initiator: Hashable, Sendable {
        /// The peer sent RST_STREAM.
        case peer
        /// This side sent RST_STREAM: the application asked for it, or the
        /// session found a stream error (malformed header block, bad field) —
        /// `reason` then names the problem as nghttp2 reported it.
        case local
    }

    public var stream: HTTP2StreamID
    public var code: HTTP2ErrorCode
    public var initiator: Initiator
    /// A precise description when one is known (never empty for local stream errors).
    public var reason: String?

    public init(stream: HTTP2StreamID, code: HTTP2ErrorCode, initiator: Initiator, reason: String?) {
        self.stream = stream
        self.code = code
        self.initiator = initiator
        self.reason = reason
    }

    public var description: String {
        "stream \(stream) reset by \(initiator == .peer ? "peer" : "us") with \(code.name)" + (reason.map { ": \($0)" } ?? "")
    }
}

/// Why an HTTP/2 connection failed.
public enum HTTP2ConnectionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Server role: the first 24 bytes were not the client connection preface.
    case badClientPreface
    /// The peer made us queue more SETTINGS/PING acknowledgements than
    /// `limit` (`HTTP2Configuration.maxOutboundAcks`) without reading them (SETTINGS or PING flood).
    case flood(limit: Int)
    /// The peer sent more than `limit` CONTINUATION frames after one HEADERS
    /// (`HTTP2Configuration.maxContinuations`; the CONTINUATION flood, CVE-2024-27316 and kin).
    case continuationFlood(limit: Int)
    /// The peer reset more than `limit` of the last `window` streams it opened
    /// (the HTTP/2 "rapid reset" attack, CVE-2023-44487).
    case rapidReset(limit: Int, window: Int)
    /// The peer violated the protocol and nghttp2 sent GOAWAY with `code`;
    /// `reason` is nghttp2's diagnostic (also the GOAWAY debug data).
    case protocolViolation(code: HTTP2ErrorCode, reason: String)
    /// Any other fatal nghttp2 error, with its library code and message.
    case library(code: Int32, message: String)

    /// The error code of the GOAWAY this side sends for the failure.
    public var goAwayCode: HTTP2ErrorCode {
        switch self {
        case .badClientPreface: return .protocolError
        case .flood, .continuationFlood, .rapidReset: return .enhanceYourCalm
        case .protocolViolation(let code, _): return code
        case .library: return .internalError
        }
    }

    public var description: String {
        switch self {
        case .badClientPreface: return "the client did not send the HTTP/2 connection preface"
        case .flood(let limit):
            return "SETTINGS/PING flood: more than \(limit) acknowledgements queued for a peer that does not read"
        case .continuationFlood(let limit):
            return "CONTINUATION flood: more than \(limit) CONTINUATION frames after one HEADERS"
        case .rapidReset(let limit, let window): return "rapid reset: the peer reset more than \(limit) of its last \(window) streams"
        case .protocolViolation(let code, let reason): return "\(code.name): \(reason)"
        case .library(let code, let message): return "nghttp2 error \(code): \(message)"
        }
    }
}

/// A request the application made that the session cannot carry out.
public enum HTTP2SessionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The call belongs to the other role (`sendRequest` on a server session…).
    case wrongRole
    /// No open stream has this identifier (never opened, or already closed).
    case unknownStream(HTTP2StreamID)
    /// This side of the stream already ended, or its head has not been sent
    /// (data before the response head), or an interim head asked to end the stream.
    case streamNotWritable(HTTP2StreamID)
    /// The connection failed or is going away; no new streams.
    case sessionClosing
    /// nghttp2 refused the call.
    case library(code: Int32, message: String)

    public var description: String {
        switch self {
        case .wrongRole: return "the call does not fit this session's role"
        case .unknownStream(let id): return "stream \(id) is not open"
        case .streamNotWritable(let id): return "stream \(id) cannot take this now"
        case .sessionClosing: return "the session is closing"
        case .library(let code, let message): return "nghttp2 error \(code): \(message)"
        }
    }
}
