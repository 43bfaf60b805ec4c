/// Why an `HTTP2ConnectionLayer` ended a stream before both of its messages
/// were complete (`HTTP2ConnectionLayer.Step.streamFailed`).
public enum HTTP2StreamFailure: Hashable, Sendable {
    /// RST_STREAM, from the peer or from this side's session (a stream error).
    case reset(HTTP2StreamReset)
    /// Client: the server's GOAWAY says it never processed the stream
    /// (its id is above `lastStreamID`); the request may be retried elsewhere.
    case notProcessed(lastStreamID: HTTP2StreamID, code: HTTP2ErrorCode)
    /// The connection failed; every open stream fails with it.
    case connection(HTTP2ConnectionError)
    /// The peer's end of input (or the channel closing) came with the stream open.
    case peerClosed
    /// This side aborted the connection.
    case cancelled
}
