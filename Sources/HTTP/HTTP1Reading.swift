/// What an HTTP/1.1 connection layer asks of reading when its `next` has
/// nothing more to do until another event.
public enum HTTP1Reading: Hashable, Sendable {
    /// Leave reading as it is.
    case unchanged
    /// Stop reading: the consumer does not want what would come now (TCP
    /// then pushes back on the peer).
    case pause
    /// Read: the parser needs bytes.
    case resume
}
