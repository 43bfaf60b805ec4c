/// How the body of an HTTP/1.1 message is delimited (RFC 9112 §6).
///
/// The parser reports the framing it found on each head event; the serializer
/// takes one (or derives it from the fields) to write a message. Passing the
/// parsed framing back to the serializer reproduces the original framing.
public enum HTTP1Framing: Hashable, Sendable {
    /// No body: a request without framing fields, a HEAD response, 1xx, 204, 304.
    case none
    /// Exactly this many body bytes.
    case contentLength(Int)
    /// `Transfer-Encoding: chunked`, ended by the last chunk and trailers.
    case chunked
    /// A response body that lasts until the server closes the connection.
    case closeDelimited
    /// After this head the connection carries another protocol: a 101 response
    /// or a 2xx response to CONNECT.
    case tunnel

    /// Whether the message may carry body bytes at all.
    public var allowsBody: Bool {
        switch self {
        case .contentLength(let n): return n > 0
        case .chunked, .closeDelimited: return true
        case .none, .tunnel: return false
        }
    }
}
