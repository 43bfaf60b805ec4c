import HTTP
import Wire

/// What an `HTTPClientConnection` tells its owner, on the channel's loop.
public enum HTTPClientConnectionEvent: Sendable {
    /// The channel is established and speaks this version.
    case ready(HTTPVersion)
    /// A stream finished: the connection may take another (`canOpenStream`).
    case available
    /// HTTP/2: the server sent GOAWAY. Streams above `lastStreamID` failed
    /// with `.goAway` (they may be retried elsewhere); no new stream opens here.
    case goAway(lastStreamID: Int, code: HTTP2ErrorCode)
    /// The connection closed; the last event. nil after a clean close.
    case closed(TransportError?)
}

/// The client side of HTTP/1.1 or HTTP/2 on one `ByteChannel`, the mirror of
/// `HTTPServerConnection`: `openStream` sends a request head and returns the
/// stream that carries the request body out and the response in.
///
/// - HTTP/1.1: one exchange at a time, no pipelining; the connection can carry
///   the next request once both messages of the current one are complete and
///   both sides kept it alive (`.available` then says so). A response that
///   opens a tunnel (101, 2xx to CONNECT) ends its stream; the connection
///   then takes no stream and waits for `detachForTunnel` (the owner relays
///   the new protocol) or `close`. `HTTPClientConnection.connect` does CONNECT itself.
/// - HTTP/2: concurrent streams; after the server's GOAWAY no new stream opens.
///
/// Use `HTTPClientConnection.connect(to:…)` to dial (TCP, proxy CONNECT, TLS),
/// or wrap a channel and `start`/`adopt` it.
///
/// `@unchecked Sendable`: `channel` and `configuration` are immutable;
/// everything else is touched only on the channel's loop.
public final class HTTPClientConnection: HTTPConnection, @unchecked Sendable {
    /// Settings of a client connection.
    public struct Configuration: Sendable {
        /// `.negotiated` follows ALPN (HTTP/1.1 without it); `.http2` over
        /// plaintext speaks HTTP/2 with prior knowledge.
        public var protocolChoice: HTTPProtocolChoice = .negotiated
        public var http1Limits: HTTP1ParserLimits = .standard
        public var http2: HTTP2Configuration = HTTP2Configuration()
        /// HTTP/2: a stream stops being writable when this many bytes wait in its queue.
        public var streamWriteHighWater = 256 * 1024

        public init() {}
    }

    public let configuration: Configuration
    private var handler: ((HTTPClientConnectionEvent) -> Void)?

    /// Wraps a channel; nothing happens until `start` or `adopt`.
    public init(channel: ByteChannel, configuration: Configuration = Configuration()) {
        self.configuration = configuration
        super.init(channel: channel, protocolChoice: configuration.protocolChoice)
    }

    /// Starts an unstarted channel. Called only on the loop, once.
    public func start(_ handler: @escaping (HTTPClientConnectionEvent) -> Void) {
        self.handler = handler
        begin()
    }

    /// Takes over a started channel (established, or handshaking after
    /// `startTLS`), replacing its handler; `leftover` holds application bytes
    /// already read. Called only on the loop, once.
    public func adopt(leftover: [UInt8] = [], _ handler: @escaping (HTTPClientConnectionEvent) -> Void) {
        self.handler = handler
        begin(adopting: leftover)
    }

    /// Whether `openStream` would succeed now: ready, and (HTTP/1.1) idle and
    /// kept alive, or (HTTP/2) not going away. Read only on the loop.
    public var canOpenStream: Bool { clientDriver?.canOpenStream ?? false }

    /// Sends a request head and returns its stream; `handler` receives the
    /// response parts. `framing` is the HTTP/1.1 body framing (nil: from the
    /// head's fields — no `Content-Length`/`Transfer-Encoding` means no body;
    /// pass `.chunked` to stream a body of unknown length). On both versions a
    /// framing without body (`.none`, `.contentLength(0)`, or nil with no
    /// framing fields) ends the request with its head: do not call `sendEnd`.
    /// On HTTP/1.1 an HTTP/2 head is sent as HTTP/1.1, with `Host` added from
    /// its authority when missing. Throws `.invalidState` when the connection
    /// cannot take a stream now. Called only on the loop.
    public func openStream(_ head: HTTPRequestHead, framing: HTTP1Framing? = nil,
                           handler: @escaping (HTTPStreamEvent) -> Void) throws(TransportError) -> HTTPClientStream {
        loop.preconditionOnLoop()
        guard let driver = clientDriver else { throw .invalidState("the connection is not ready") }
        return try driver.open(head, framing: framing, handler: handler)
    }

    /// HTTP/1.1, after a 101 ended the current stream: hands the channel
    /// back with `handler` installed and returns the bytes the server already
    /// sent past the 101 (a `.readEOF` follows on a later loop turn when the
    /// server's FIN came with them). The connection's owner (the pool) sees `.closed(nil)`:
    /// the connection carries no more HTTP and is never reused. Reading
    /// resumes. Called only on the loop.
    public func detachForTunnel(handler: @escaping (ChannelEvent) -> Void) throws(TransportError) -> [UInt8] {
        loop.preconditionOnLoop()
        guard let driver = driver as? HTTP1ClientDriver else {
            throw .invalidState("only an HTTP/1.1 connection switches protocols")
        }
        let (leftover, peerEnded) = try driver.detachForTunnel()
        let readEnd = readEnd
        detach()
        let owner = self.handler
        self.handler = nil
        channel.setHandler(handler)
        channel.resumeReading()
        owner?(.closed(nil))
        // A FIN read with the 101 is not read again: the new owner hears of it next.
        if peerEnded, let readEnd {
            let newOwner = LoopBound(handler, on: loop)
            loop.execute { newOwner.value(.readEOF(readEnd)) }
        }
        return leftover
    }

    func deliver(_ event: HTTPClientConnectionEvent) {
        handler?(event)
    }

    /// Delivers on a later loop turn (for events that arise inside an owner's call).
    func deliverLater(_ event: HTTPClientConnectionEvent) {
        loop.execute { [self] in deliver(event) }
    }

    /// Tells the owner a stream slot is free: at once from one of the
    /// driver's own steps (`inStep`, never inside an owner's call), else on a
    /// later loop turn.
    func announceAvailable(inStep: Bool) {
        if inStep { deliver(.available) } else { deliverLater(.available) }
    }

    private var clientDriver: (any HTTPClientDriver)? { driver?.asClientDriver }

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
        case .http2: return HTTP2ClientDriver(connection: self)
        case .http1_0, .http1_1: return HTTP1ClientDriver(connection: self)
        }
    }
}

/// Client-role drivers also open streams.
protocol HTTPClientDriver: HTTPConnectionDriver {
    var canOpenStream: Bool { get }
    func open(_ head: HTTPRequestHead, framing: HTTP1Framing?,
              handler: @escaping (HTTPStreamEvent) -> Void) throws(TransportError) -> HTTPClientStream
}
