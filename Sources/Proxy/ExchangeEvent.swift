import Evidence
import HTTP
import TLS

/// What an `ExchangeFlow` is told, after its request head started it:
/// only what happens by itself (bytes arrive, a stream opens, fails or takes
/// bytes again, a timer runs out). What a command the flow issued came to is
/// never an event: it is that command's `CommandOutcome`, consumed in the
/// step that issued it.
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
    /// its wire form for the exact digest, `streamID` for HTTP/2, `tls` (the
    /// upstream connection's session as records show it) nil for plain HTTP.
    case upstreamOpened(connection: ConnectionID, tls: TLSDetails?, streamID: Int?,
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
    /// The upstream stream takes bytes again after a `.sendRequestBody`
    /// came back `.full`.
    case upstreamWritable
    /// The client's stream takes bytes again after a `.sendResponse(.body)`
    /// came back `.full`.
    case clientWritable
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

/// What an `ExchangeFlow` asks its driver to do, one at a time, through
/// `ExchangeActions.perform(_:for:)`; each is carried out before the flow
/// goes on, and its outcome comes back as the call's result.
public enum ExchangeCommand: Sendable, Hashable {
    /// Open a stream to this target on a pooled connection (dialling when
    /// none is free) and send `head` on it, its body framed as `framing`
    /// (a framing without body ends the request with its head); answer with
    /// `.upstreamOpened` or `.upstreamFailed`.
    case openUpstream(UpstreamTarget, head: HTTPRequestHead, framing: HTTP1Framing)
    /// Send request body bytes on the upstream stream: `.done`, `.full`
    /// (sent; wait for `.upstreamWritable` before reading more from the
    /// client) or `.failed` (the driver has let go of the upstream stream).
    case sendRequestBody([UInt8])
    /// End the request on the upstream stream: `.done` or `.failed`.
    case endRequest(trailers: HTTPFields?)
    /// Send this response part to the client: a head comes back
    /// `.headSent` with the head as the engine wrote it, the end `.endSent`
    /// with the trailers that went out, a body chunk `.done` or `.full`
    /// (sent; `.clientWritable` follows); any of them `.failed` when the
    /// client's stream is gone.
    case sendResponse(HTTPResponsePart)
    /// The upstream stream opened on HTTP/2, which answers no
    /// `Expect: 100-continue` (the body flows under flow control): send the
    /// client the proxy's own `100 Continue` if it waits for one and no
    /// response head went out. `.headSent` when one went, else `.done`.
    case sendContinueIfOwed
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
    /// counting and digesting each direction; `.upgradeRelayEnded` comes
    /// when the relay is over. `.failed` when the connections could not be
    /// taken (the client's connection is closed then).
    case relayUpgraded
    /// Close the client's connection (gracefully: FIN, not RST) without
    /// answering; every exchange on it ends.
    case closeClientConnection
    /// The exchange is over; this is its record (hooks have annotated it,
    /// and the connection's faults). The flow returns its record to the
    /// layer, which issues this (`DownstreamLayer`).
    case finished(ExchangeRecord)
}

/// What carrying out one command came to, returned to the flow (or layer)
/// that issued it, inside the same step: the flow acts on it before it
/// issues its next command or returns. No outcome of a command is ever
/// reported as a later event.
public enum CommandOutcome: Sendable {
    /// Carried out; nothing to report.
    case done
    /// Sent, and the stream takes no more for now: a `.clientWritable` or
    /// `.upstreamWritable` event follows once it does.
    case full
    /// A response head went to the client in this form (as the engine wrote
    /// it: version, reason, framing fields): the final one, or an interim one.
    case headSent(HTTPResponseHead, wire: HeadDigest.WireForm)
    /// The response's end went to the client with these trailers: the ones
    /// the engine wrote, which may be none of those asked for (an HTTP/1.x
    /// response that is not chunked cannot carry trailers).
    case endSent(trailers: HTTPFields?)
    /// The stream the command was for failed: the client's (it reset the
    /// stream, or its connection is gone), or the upstream's (the driver
    /// has already let go of it).
    case failed(ProxyError)
}

/// Carries out an exchange's commands as its flow issues them (the
/// connection's driver; a script in tests).
///
/// Invariant: `perform` returns only once the command is carried out, and
/// never calls back into the flow or the layer that issued it, not even
/// indirectly: anything the transport reports meanwhile waits for the
/// step to end (`DownstreamDriver.feed`).
public protocol ExchangeActions: AnyObject {
    @discardableResult
    func perform(_ command: ExchangeCommand, for exchange: ExchangeID) -> CommandOutcome
}
