import HTTP
import Wire

/// What an `HTTPServerConnection` tells its owner, on the channel's loop.
public enum HTTPServerConnectionEvent: Sendable {
    /// The channel is established and speaks this version.
    case ready(HTTPVersion)
    /// A request arrived. Install the stream's handler (`setHandler`) before
    /// returning to receive its body; answer with `sendHead`/`sendBody`/`sendEnd`.
    case stream(HTTPServerStream)
    /// HTTP/1.1 bytes that are no valid request. The connection answered with
    /// the error's status (`answer`, with its wire form as sent) unless a
    /// response was already under way (nil), and is closing. Record it.
    case malformedRequest(HTTP1ParseError, answer: HTTPResponseHead?, wire: HeadDigest.WireForm?)
    /// HTTP/2: a stream reset before it became a request (its header list
    /// over the limit: RST_STREAM ENHANCE_YOUR_CALM). `request` holds what
    /// was kept of its head (pseudo-header fields, `Intact-Trace`), nil when
    /// not even its method came; `reason` says why. The connection goes on. Record it.
    case refusedStream(streamID: Int, request: HTTPRequestHead?, reason: String)
    /// The connection closed; the last event. nil after a clean close.
    case closed(TransportError?)
}

/// The server side of HTTP/1.1 or HTTP/2 on one `ByteChannel`.
///
/// Once the channel is established, the version comes from ALPN (`h2` →
/// HTTP/2, else HTTP/1.1) or from `Configuration.protocolChoice`. Each request
/// surfaces as an `HTTPServerStream` in a `.stream` event:
/// - HTTP/1.1: one exchange at a time. Pipelined requests wait, unparsed, in
///   order; the next one surfaces when the current request and its response
///   are both complete, so responses go out in order. Keep-alive follows the
///   request (`Connection`, version) and the response (`Connection: close`,
///   close-delimited body). A malformed request is answered with its status
///   (400, 414, 431, 501, 505), its reason as a text body and
///   `Connection: close`, reported as `.malformedRequest`, and the connection closes.
///   CONNECT (and Upgrade): answer 2xx (101) on the stream, then call
///   `detachForTunnel` to take the channel back with the bytes already read.
/// - HTTP/2: concurrent streams; each stream's flow control follows its consumer.
///
/// `@unchecked Sendable`: `channel` and `configuration` are immutable;
/// everything else is touched only on the channel's loop.
public final class HTTPServerConnection: HTTPConnection, @unchecked Sendable {
    /// Settings of a server connection.
    ///
    /// A value type whose fields live in one immutable box shared by every
    /// copy (copy on write): each connection keeps a reference to its
    /// server's settings instead of ~0.13 KiB of its own for as long as it
    /// stays open. A setter makes a new box; copies made before keep theirs.
    public struct Configuration: Sendable {
        private struct Values: Sendable {
            var protocolChoice: HTTPProtocolChoice = .negotiated
            var http1Limits: HTTP1ParserLimits = .standard
            var http2 = HTTP2Configuration()
            var automaticContinue = true
            var streamWriteHighWater = 256 * 1024
            var lingerTimeout: Duration = .seconds(2)
        }

        private final class Box: Sendable {
            let values: Values
            init(_ values: Values) { self.values = values }
        }

        /// The defaults, shared by every configuration nobody changed.
        private static let defaults = Box(Values())
        private var box = Configuration.defaults

        public init() {}

        /// Changes one field in a fresh box.
        private mutating func update<Value>(_ field: WritableKeyPath<Values, Value>, _ value: Value) {
            var values = box.values
            values[keyPath: field] = value
            box = Box(values)
        }

        public var protocolChoice: HTTPProtocolChoice { get { box.values.protocolChoice } set { update(\.protocolChoice, newValue) } }
        public var http1Limits: HTTP1ParserLimits { get { box.values.http1Limits } set { update(\.http1Limits, newValue) } }
        public var http2: HTTP2Configuration { get { box.values.http2 } set { update(\.http2, newValue) } }
        /// Send `100 Continue` when a stream that expects it starts reading (see `HTTPServerStream`).
        public var automaticContinue: Bool { get { box.values.automaticContinue } set { update(\.automaticContinue, newValue) } }
        /// HTTP/2: a stream stops being writable when this many bytes wait in its queue.
        public var streamWriteHighWater: Int { get { box.values.streamWriteHighWater } set { update(\.streamWriteHighWater, newValue) } }
        /// After a response that ends the connection (or an error answer), how
        /// long to keep reading and discarding what the client still sends,
        /// waiting for its FIN, before closing (so the answer is not lost to a reset).
        public var lingerTimeout: Duration { get { box.values.lingerTimeout } set { update(\.lingerTimeout, newValue) } }
    }

    public let configuration: Configuration
    private var handler: ((HTTPServerConnectionEvent) -> Void)?

    /// Wraps a channel; nothing happens until `start` or `adopt`.
    public init(channel: ByteChannel, configuration: Configuration = Configuration()) {
        self.configuration = configuration
        super.init(channel: channel, protocolChoice: configuration.protocolChoice)
    }

    /// Starts an unstarted channel and serves it. A TLS `.clientHello` is
    /// answered with `continueHandshake()`. The connection keeps itself alive
    /// until `.closed`. Called only on the loop, once.
    public func start(_ handler: @escaping (HTTPServerConnectionEvent) -> Void) {
        self.handler = handler
        begin()
    }

    /// Serves a channel that is already started (established, or handshaking
    /// after `startTLS`), replacing its handler. `leftover` holds application
    /// bytes already read from it. Called only on the loop, once.
    public func adopt(leftover: [UInt8] = [], _ handler: @escaping (HTTPServerConnectionEvent) -> Void) {
        self.handler = handler
        begin(adopting: leftover)
    }

    /// HTTP/1.1, after a tunnel-opening answer went out on the current stream
    /// (2xx to CONNECT, or 101): hands the channel back to the owner with
    /// `handler` installed, and returns the bytes the client already sent
    /// past the request (the start of its TLS ClientHello, typically). Reading
    /// resumes. No `.closed` event follows on this connection. Called only on the loop.
    public func detachForTunnel(handler: @escaping (ChannelEvent) -> Void) throws(TransportError) -> [UInt8] {
        loop.preconditionOnLoop()
        guard let driver = driver as? HTTP1ServerDriver else {
            throw .invalidState("tunnels are opened on HTTP/1.1 connections only")
        }
        let leftover = try driver.detachForTunnel()
        detach()
        self.handler = nil
        channel.setHandler(handler)
        channel.resumeReading()
        return leftover
    }

    /// The client began a request head and did not finish it in time (the
    /// proxy's `--head-timeout`): HTTP/1.1 answers 408, reports it as a
    /// `.malformedRequest` and closes; HTTP/2 closes gracefully (GOAWAY).
    /// Called only on the loop, while no exchange is in progress.
    public func requestHeadTimedOut(after seconds: Int) {
        if let driver = driver as? HTTP1ServerDriver {
            driver.parseFailed(.headTimeout(seconds: seconds))
        } else {
            close()
        }
    }

    func deliver(_ event: HTTPServerConnectionEvent) {
        handler?(event)
    }

    override func announceReady(_ version: HTTPVersion) {
        handler?(.ready(version))
    }

    override func announceClosed(_ error: TransportError?) {
        let handler = self.handler
        self.handler = nil
        handler?(.closed(error))
    }

    override func makeDriver(_ version: HTTPVersion) -> any HTTPConnectionDriver {
        switch version {
        case .http2: return HTTP2ServerDriver(connection: self)
        case .http1_0, .http1_1: return HTTP1ServerDriver(connection: self)
        }
    }
}
