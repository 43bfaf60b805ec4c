/// Why an HTTP/1.1 connection layer ended the exchange in progress before
/// both of its messages were complete.
public enum HTTP1ExchangeFailure: Hashable, Sendable {
    /// The peer closed the connection while this message was unfinished.
    case peerClosed(during: HTTP1UnfinishedMessage)
    /// The peer's bytes were malformed.
    case malformed(HTTP1ParseError)
    /// This side gave up on it: a server closes after a response that ends
    /// the connection while the rest of the request body is still to come.
    case cancelled
}

/// Which message of an HTTP/1.1 exchange was unfinished when the connection ended.
public enum HTTP1UnfinishedMessage: Hashable, Sendable {
    case request
    case response
    /// A client's request on a reused connection, and no byte of its
    /// response came: the server most likely closed the connection as idle
    /// while the request was on its way and never processed it (RFC 9110
    /// §9.2.2 lets an idempotent request be sent again).
    case responseOnReusedConnection
}
