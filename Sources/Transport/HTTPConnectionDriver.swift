/// An HTTP/1.1 or HTTP/2 driver running on an established channel, as
/// its `HTTPConnection` drives it. Every method runs on the channel's loop,
/// from a channel event or a scheduled turn.
protocol HTTPConnectionDriver: AnyObject {
    /// The driver takes over; `leftover` holds application bytes already read.
    func start(leftover: [UInt8])
    func received(_ bytes: [UInt8])
    /// The peer finished sending.
    func readEnded()
    /// The channel's pending bytes fell to its low watermark.
    func channelWritable()
    /// The channel closed (with its failure, if any): fail what is still open
    /// and return the error to report for the connection (the driver may know
    /// a more precise one, such as an HTTP/2 connection error).
    func channelClosed(_ error: TransportError?) -> TransportError?
    /// Stops taking new exchanges, finishes those in progress, then closes.
    func closeGracefully()
    /// Resets the connection; what is open fails with `.cancelled`.
    func abort()
    /// Exchanges (HTTP/1.1) or streams (HTTP/2) not yet finished.
    var activeStreamCount: Int { get }
    /// This driver as a client-role driver; nil for a server's. A witness
    /// call, where `as? any HTTPClientDriver` asks the runtime for the
    /// conformance (a cache lookup) each time a stream is opened.
    var asClientDriver: (any HTTPClientDriver)? { get }
}

extension HTTPConnectionDriver {
    var asClientDriver: (any HTTPClientDriver)? { nil }
}

extension HTTPClientDriver {
    var asClientDriver: (any HTTPClientDriver)? { self }
}
