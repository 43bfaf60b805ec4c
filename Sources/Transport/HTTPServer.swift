import HTTP
import Synchronization
import TLS
import Wire

/// An HTTP server on a listening socket: plaintext or TLS (ALPN `h2`,
/// `http/1.1`), each accepted connection an `HTTPServerConnection` on one of
/// the group's loops, each request handed to `onStream` on that loop. For
/// the mock server, test origins and anything else that only answers requests.
///
/// `onStream` must install the stream's handler (or answer it) before it
/// returns; see `HTTPServerStream`.
public final class HTTPServer: Sendable {
    /// How the server listens and speaks.
    public struct Configuration: Sendable {
        /// Where to listen; port 0 picks a free one (see `start()`'s result).
        public var address: SocketAddress
        /// nil: plaintext. The context's ALPN preference decides the versions offered.
        public var tls: TLSServerSetup?
        public var connection: HTTPServerConnection.Configuration

        public init(address: SocketAddress = .loopbackIPv4(port: 0), tls: TLSServerSetup? = nil,
                    connection: HTTPServerConnection.Configuration = HTTPServerConnection.Configuration()) {
            self.address = address
            self.tls = tls
            self.connection = connection
        }
    }

    public let group: EventLoopGroup
    public let configuration: Configuration
    private let onStream: @Sendable (HTTPServerStream) -> Void
    private let onConnectionEvent: (@Sendable (HTTPServerConnection, HTTPServerConnectionEvent) -> Void)?
    private let state = Mutex(State())

    /// The listener and the open connections.
    private struct State: Sendable {
        var listener: Listener?
        var connections: [ObjectIdentifier: HTTPServerConnection] = [:]
        var stopped = false
    }

    /// `onStream` gets each request; `onConnectionEvent`, if given, sees every
    /// connection event first (`.malformedRequest` to record, `.closed`…).
    /// Both run on the connection's loop.
    public init(group: EventLoopGroup, configuration: Configuration = Configuration(),
                onConnectionEvent: (@Sendable (HTTPServerConnection, HTTPServerConnectionEvent) -> Void)? = nil,
                onStream: @escaping @Sendable (HTTPServerStream) -> Void) {
        self.group = group
        self.configuration = configuration
        self.onStream = onStream
        self.onConnectionEvent = onConnectionEvent
    }

    /// Binds and starts accepting; returns the bound address. Callable from any thread, once.
    public func start() throws(WireError) -> SocketAddress {
        try start(on: ListeningSocket(bindingTo: configuration.address))
    }

    /// Starts accepting on `socket`, bound and listening already (an
    /// inherited one: `intact server --listen-fd`); `configuration.address`
    /// is not used. Takes the socket over. Callable from any thread, once.
    public func start(on socket: ListeningSocket) throws(WireError) -> SocketAddress {
        let listener = try Listener(adopting: socket, on: group.next(), connectionLoops: group) {
            [self] connection in accept(connection)
        }
        state.withLock { $0.listener = listener }
        return listener.localAddress
    }

    /// Starts serving on an embedded loop's in-memory network, at
    /// `configuration.address` (give it a port), with every connection on
    /// `network.loop` (for tests: a whole exchange stepped by hand, no
    /// socket). `localAddress` stays nil; `stop` closes the connections.
    /// Called on the loop, once.
    public func start(on network: EmbeddedNetwork) -> SocketAddress {
        network.loop.preconditionOnLoop()
        network.listen(on: configuration.address) { [self] connection in accept(connection) }
        return configuration.address
    }

    /// The bound address, once started.
    public var localAddress: SocketAddress? { state.withLock { $0.listener?.localAddress } }

    /// Stops accepting and closes every connection gracefully (HTTP/1.1
    /// after the exchange in progress, HTTP/2 with GOAWAY). `completion` runs
    /// once the listening socket is closed. Callable from any thread.
    public func stop(_ completion: (@Sendable () -> Void)? = nil) {
        let (listener, connections) = state.withLock { state in
            state.stopped = true
            return (state.listener, Array(state.connections.values))
        }
        for connection in connections {
            connection.loop.execute { connection.close() }
        }
        if let listener { listener.close(completion) } else { completion?() }
    }

    /// Number of connections open now. Callable from any thread.
    public var connectionCount: Int { state.withLock { $0.connections.count } }

    /// Runs on the accepted connection's loop.
    private func accept(_ connection: Connection) {
        let security: ChannelSecurity = configuration.tls.map { .tlsServer($0) } ?? .plaintext
        let http = HTTPServerConnection(channel: ByteChannel(connection: connection, security: security),
                                        configuration: configuration.connection)
        let key = ObjectIdentifier(http)
        let accepted = state.withLock { state in
            guard !state.stopped else { return false }
            state.connections[key] = http
            return true
        }
        guard accepted else {
            connection.close()
            return
        }
        let onStream = self.onStream
        let onConnectionEvent = self.onConnectionEvent
        http.start { [self] event in
            onConnectionEvent?(http, event)
            switch event {
            case .stream(let stream):
                onStream(stream)
            case .closed:
                _ = state.withLock { $0.connections.removeValue(forKey: key) }
            case .ready, .malformedRequest, .refusedStream:
                break
            }
        }
    }

    /// A TLS server setup offering `protocols` by ALPN, presenting `identity`
    /// (or the one `certificateProvider` picks per SNI).
    public static func tlsSetup(identity: TLSIdentity?,
                                certificateProvider: (@Sendable (String?) -> TLSIdentity?)? = nil,
                                protocols: HTTPProtocolChoice = .negotiated,
                                clientCertificate: TLSClientCertificatePolicy = .none) throws(TLSError) -> TLSServerSetup {
        var tls = TLSServerConfiguration(identity: identity, certificateProvider: certificateProvider)
        tls.alpnPreference = protocols.alpnProtocols
        tls.clientCertificate = clientCertificate
        return TLSServerSetup(context: try TLSContext(server: tls))
    }
}
