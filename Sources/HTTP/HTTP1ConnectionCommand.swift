/// What an HTTP/1.1 connection layer (`HTTP1ServerLayer`, `HTTP1ClientLayer`)
/// asks its driver to do with the connection itself. The driver carries it
/// out at once, in the order the layer returned it relative to any bytes to
/// write that came with it (bytes first).
public enum HTTP1ConnectionCommand: Hashable, Sendable {
    /// Nothing to do.
    case none
    /// Close the connection (the peer already finished, or the layer is done
    /// with it); a linger timer, if one is armed, is cancelled.
    case close
    /// Reset the connection: what was sent may be lost, the peer sees an error.
    case abort
    /// No more to send and the peer already finished sending: shut our
    /// sending side down, then close.
    case shutdownAndClose
    /// No more to send: shut our sending side down, arm the linger timer and
    /// keep reading (the layer discards what arrives), so the last response is
    /// not lost to a reset. The peer's end of input (`readEnded`) or the timer
    /// (`lingerTimerFired`) then closes.
    case shutdownAndLinger
}
