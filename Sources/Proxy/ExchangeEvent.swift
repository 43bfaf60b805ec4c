import HTTP
import Evidence
import TLS

/// What an `ExchangeFlow` is told, after its request head started it.
///
/// "Client" is the downstream stream the request arrived on; "upstream" is
/// the stream the pool assigned. The driver reports each event once, on the
/// exchange's loop.
public enum ExchangeEvent: Sendable {
    /// A chunk of the request body from the client (never empty).
    case requestBody([UInt8])
    /// The client's request is complete.
    case requestEnd(trailers: HTTPFields?)
    /// The client's stream is gone: it reset the stream, or its connection
    /// closed or failed. Nothing more can be sent to it.
    case clientGone(ProxyError)

    /// The pool assigned an upstream connection (`tls` nil for plain HTTP);
    /// nothing has been sent on it for this exchange yet.
    case upstreamOpened(connection: ConnectionID, tls: TLSConnectionInfo?)
    /// The upstream could not be reached (resolution, connect, TLS, pool),
    /// or its stream failed (reset, closed early, broken framing). The
    /// driver has already let go of the upstream stream.
    case upstreamFailed(ProxyError)
    /// The request head went upstream in this form (`streamID` for HTTP/2):
    /// the head as sent, and its wire form for the exact digest.
    case requestHeadSent(HTTPRequestHead, wire: HeadDigest.WireForm, streamID: Int?)

    /// A response head from upstream: interim (1xx) or final.
    case responseHead(HTTPResponseHead, wire: HeadDigest.WireForm)
    /// A chunk of the response body from upstream (never empty).
    case responseBody([UInt8])
    /// The upstream response is complete.
    case responseEnd(trailers: HTTPFields?)
    /// A final response head went to the client in this form.
    case responseHeadSent(HTTPResponseHead, wire: HeadDigest.WireForm)

    /// The upstream stream stopped (false) or resumed (true) taking bytes.
    case upstreamWritable(Bool)
    /// The client's stream stopped (false) or resumed (true) taking bytes.
    case clientWritable(Bool)
}

/// What an `ExchangeFlow` asks its driver to do, in order.
public enum ExchangeCommand: Sendable, Hashable {
    /// Get an upstream stream to this target from the pool (connecting when
    /// none is idle); answer with `.upstreamOpened` or `.upstreamFailed`.
    case openUpstream(UpstreamTarget)
    /// Send this request part on the upstream stream.
    case sendRequest(HTTPRequestPart)
    /// Send this response part to the client.
    case sendResponse(HTTPResponsePart)
    /// Stop reading the request body from the client (backpressure), or resume.
    case pauseRequestBody
    case resumeRequestBody
    /// Stop reading the response body from upstream (backpressure), or resume.
    case pauseResponseBody
    case resumeResponseBody
    /// Reset the client's stream (RST_STREAM on HTTP/2; on HTTP/1.1 close the
    /// connection): the response cannot be completed.
    case resetClientStream
    /// This exchange is done with its upstream stream. `reusable`: the
    /// exchange completed on it and the connection may serve another;
    /// otherwise reset the stream (HTTP/2) or close the connection (HTTP/1.1).
    /// While still connecting, this cancels the request: a connection that
    /// arrives later goes to the pool unused.
    case releaseUpstream(reusable: Bool)
    /// The exchange is over; this is its record (hooks have annotated it).
    case finished(ExchangeRecord)
}
