import Evidence
import HTTP
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

    /// The upstream stream is open and the request head went out on it:
    /// `sent` as sent (its version that of the upstream connection), `wire`
    /// its wire form for the exact digest, `streamID` for HTTP/2, `tls` nil
    /// for plain HTTP.
    case upstreamOpened(connection: ConnectionID, tls: TLSConnectionInfo?, streamID: Int?,
                        sent: HTTPRequestHead, wire: HeadDigest.WireForm)
    /// The upstream could not be reached (resolution, connect, TLS, pool),
    /// or its stream failed (reset, closed early, broken framing). The
    /// driver has already let go of the upstream stream.
    case upstreamFailed(ProxyError)
    /// A response head from upstream: interim (1xx) or final.
    case responseHead(HTTPResponseHead, wire: HeadDigest.WireForm)
    /// A chunk of the response body from upstream (never empty).
    case responseBody([UInt8])
    /// The upstream response is complete.
    case responseEnd(trailers: HTTPFields?)
    /// A response head went to the client in this form: the final one, or an
    /// interim one (relayed, or the proxy's own `100 Continue`).
    case responseHeadSent(HTTPResponseHead, wire: HeadDigest.WireForm)
    /// The response's end went to the client with these trailers: the ones
    /// the engine wrote, which may be none of those asked for (an HTTP/1.x
    /// response that is not chunked cannot carry trailers).
    case responseEndSent(trailers: HTTPFields?)

    /// The upstream stream stopped (false) or resumed (true) taking bytes.
    case upstreamWritable(Bool)
    /// The client's stream stopped (false) or resumed (true) taking bytes.
    case clientWritable(Bool)
    /// The timer a `.startTimer` asked for has run out.
    case timerFired(ExchangeTimer)
    /// The relay `.relayUpgraded` started is over (both connections closed):
    /// what each leg carried each way (nil when the relay never started),
    /// and the first failure.
    case upgradeRelayEnded(downstream: RelayedStreams?, upstream: RelayedStreams?, error: ProxyError?)
}

/// The timer that paces one message of an exchange (a hook's delay, or the
/// pause between the slices of a throttled body). Each message has at most
/// one running.
public enum ExchangeTimer: Sendable, Hashable {
    case request
    case response
}

/// What an `ExchangeFlow` asks its driver to do, in order.
public enum ExchangeCommand: Sendable, Hashable {
    /// Open a stream to this target on a pooled connection (dialling when
    /// none is free) and send `head` on it, its body framed as `framing`
    /// (a framing without body ends the request with its head); answer with
    /// `.upstreamOpened` or `.upstreamFailed`.
    case openUpstream(UpstreamTarget, head: HTTPRequestHead, framing: HTTP1Framing)
    /// Send request body bytes on the upstream stream.
    case sendRequestBody([UInt8])
    /// End the request on the upstream stream.
    case endRequest(trailers: HTTPFields?)
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
    /// Abandon the upstream stream: reset it (HTTP/2 RST_STREAM; on HTTP/1.1
    /// the connection, which cannot be reused mid-message). While it is still
    /// being opened, reset it as soon as it opens. A stream that completed
    /// needs nothing: its connection goes back to the pool by itself.
    case abandonUpstream
    /// Report `.timerFired(timer)` after `after` (on the exchange's loop);
    /// a timer still running when the exchange finishes never fires.
    case startTimer(ExchangeTimer, after: Duration)
    /// The 101 went to the client and upstream's 101 is over: take both
    /// connections from HTTP (neither serves HTTP again; the upstream one is
    /// never pooled) and relay their bytes both ways with backpressure,
    /// counting and digesting each direction; answer `.upgradeRelayEnded`.
    case relayUpgraded
    /// Close the client's connection (gracefully: FIN, not RST) without
    /// answering; every exchange on it ends.
    case closeClientConnection
    /// The exchange is over; this is its record (hooks have annotated it).
    case finished(ExchangeRecord)
}
