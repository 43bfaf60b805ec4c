import HTTP

/// What an `HTTPStream` tells its handler, on the stream's loop and never
/// from inside a call the handler made on the stream or its connection.
///
/// Inbound parts come in wire order: on a client stream any number of
/// `.interimResponse`, then one `.response`; on both roles `.body`* then one
/// `.end`. `.failed` may come at any point and is the last event; after
/// `.end` on a stream whose own side also ended, nothing more comes.
public enum HTTPStreamEvent: Sendable {
    /// Client streams: an interim (1xx other than 101) response head as received.
    case interimResponse(HTTPResponseHead, wire: HeadDigest.WireForm)
    /// Client streams: the final response head as received, with its wire
    /// form (the input of the exact head digest).
    case response(HTTPResponseHead, wire: HeadDigest.WireForm)
    /// Body bytes, transfer coding removed. Never empty.
    case body([UInt8])
    /// The peer's message is complete; trailers when it sent any.
    case end(trailers: HTTPFields?)
    /// The stream became writable again after `isWritable` was false.
    case writable
    /// The exchange failed: the stream was reset, the connection closed or
    /// failed, or the peer's message was malformed. Nothing follows.
    case failed(TransportError)
}

extension HTTPStreamEvent {
    /// Whether this is the end of the peer's message.
    var isEnd: Bool {
        if case .end = self { return true }
        return false
    }
}
