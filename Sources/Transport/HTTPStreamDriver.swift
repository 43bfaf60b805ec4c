import HTTP

/// The protocol driver behind a stream (HTTP/1.1 or HTTP/2, server or client
/// role), as the stream calls it. Every method runs on the stream's loop,
/// inside a call the stream's owner made, so none may deliver events
/// synchronously (they schedule instead).
protocol HTTPStreamDriver: AnyObject {
    /// Writes body bytes of this side's message.
    func sendBody(_ bytes: [UInt8], on stream: HTTPStream) throws(TransportError)
    /// Ends this side's message.
    /// Ends our message; returns the trailers that went out with it (nil when
    /// none did: an HTTP/1.x message that is not chunked cannot carry them).
    func sendEnd(trailers: HTTPFields?, on stream: HTTPStream) throws(TransportError) -> HTTPFields?
    /// Abandons the exchange (HTTP/2: RST_STREAM with `code`; HTTP/1.1: the connection is reset).
    func reset(_ stream: HTTPStream, code: HTTP2ErrorCode)
    /// Whether the stream may take more outbound bytes without piling them up.
    func isWritable(_ stream: HTTPStream) -> Bool
    /// Outbound bytes of this stream not yet taken by the kernel (HTTP/1.1:
    /// the channel's pending bytes; HTTP/2: the stream's queued DATA plus the
    /// channel's pending bytes, which other streams share).
    func pendingOutboundBytes(_ stream: HTTPStream) -> Int
    /// The stream's consumer wants inbound parts again (after a pause or once a handler is installed).
    func inboundWanted(_ stream: HTTPStream)
    /// The consumer took `bytes` body bytes (HTTP/2 reopens the peer's window by that much).
    func consumed(_ stream: HTTPStream, bytes: Int)
}

/// Server-role drivers also send response heads.
protocol HTTPServerStreamDriver: HTTPStreamDriver {
    /// Writes a response head (interim or final) and returns it as the
    /// driver wrote it (version, reason and fields as on the wire, framing
    /// fields the serializer added included) with its wire form.
    func sendHead(_ head: HTTPResponseHead, framing: HTTP1Framing?,
                  on stream: HTTPServerStream) throws(TransportError) -> (sent: HTTPResponseHead, wire: HeadDigest.WireForm)
}
