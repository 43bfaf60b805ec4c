import HTTP
import TLS
import Wire

extension HTTPClientConnection {
    /// Dials `endpoint`: resolves and opens TCP (to the proxy when there is
    /// one, then CONNECT through it), runs the TLS handshake (SNI and ALPN
    /// from `endpoint.tls`), and calls `completion` once the connection is
    /// ready — or with where it failed: `.connect` (TCP), `.proxyRefused`
    /// (non-2xx to CONNECT), `.tlsHandshake`, `.timeout`, `.peerClosed`.
    /// Every later connection event goes to `events`. `completion` runs on
    /// `loop`, never inside this call. Called only on `loop`.
    public static func connect(to endpoint: HTTPEndpoint, on loop: EventLoop,
                               configuration: Configuration = Configuration(),
                               connectTimeout: Duration = .seconds(10),
                               events: @escaping (HTTPClientConnectionEvent) -> Void,
                               completion: @escaping (Result<HTTPClientConnection, TransportError>) -> Void) {
        loop.preconditionOnLoop()
        var configuration = configuration
        configuration.protocolChoice = endpoint.protocolChoice
        HTTPClientDialer(endpoint: endpoint, loop: loop, configuration: configuration, events: events,
                         completion: completion).start(timeout: connectTimeout)
    }
}

/// One dial in progress: TCP, then CONNECT through a proxy, then TLS, then
/// the HTTP driver; completes once, when the connection is ready or fails.
/// Keeps itself alive through the closures it hands out until then.
///
/// `@unchecked Sendable`: created and used only on `loop`.
final class HTTPClientDialer: @unchecked Sendable {
    /// How far the dial got.
    enum Phase {
        case connecting
        /// Waiting for the proxy's answer to CONNECT.
        case tunnelling(ByteChannel, ProxyConnectHandshake)
        /// The HTTP connection waits for its channel (TLS handshake, ALPN).
        case establishing(HTTPClientConnection)
        case done
    }

    private let endpoint: HTTPEndpoint
    private let loop: EventLoop
    private let configuration: HTTPClientConnection.Configuration
    private let events: (HTTPClientConnectionEvent) -> Void
    private let completion: (Result<HTTPClientConnection, TransportError>) -> Void
    private var phase = Phase.connecting

    init(endpoint: HTTPEndpoint, loop: EventLoop, configuration: HTTPClientConnection.Configuration,
         events: @escaping (HTTPClientConnectionEvent) -> Void,
         completion: @escaping (Result<HTTPClientConnection, TransportError>) -> Void) {
        self.endpoint = endpoint
        self.loop = loop
        self.configuration = configuration
        self.events = events
        self.completion = completion
    }

    func start(timeout: Duration) {
        let host = endpoint.proxy?.host ?? endpoint.host
        let port = endpoint.proxy?.port ?? endpoint.port
        Connection.connect(host: host, port: port, on: loop, timeout: timeout) { [self] result in
            switch result {
            case .failure(let error):
                finish(.failure(.connect(error)))
            case .success(let connection):
                connected(connection)
            }
        }
    }

    private var tlsSecurity: ChannelSecurity? {
        endpoint.tls.map { tls in
            .tlsClient(TLSClientSetup(context: tls.context, serverName: tls.serverName ?? endpoint.host,
                                      handshakeTimeout: tls.handshakeTimeout))
        }
    }

    private func connected(_ connection: Connection) {
        guard endpoint.proxy != nil else {
            let channel = ByteChannel(connection: connection, security: tlsSecurity ?? .plaintext)
            let http = HTTPClientConnection(channel: channel, configuration: configuration)
            phase = .establishing(http)
            http.start { [self] event in connectionEvent(event, http) }
            return
        }
        let handshake: ProxyConnectHandshake
        do {
            handshake = try ProxyConnectHandshake(authority: endpoint.authority, authorization: endpoint.proxy?.authorization)
        } catch {
            connection.close()
            finish(.failure(.http1Serialize(error)))
            return
        }
        let channel = ByteChannel(connection: connection, security: .plaintext)
        phase = .tunnelling(channel, handshake)
        channel.start { [self] event in proxyEvent(event) }
        channel.write(handshake.request)
    }

    private func proxyEvent(_ event: ChannelEvent) {
        guard case .tunnelling(let channel, var handshake) = phase else { return }
        switch event {
        case .received(let bytes):
            let outcome = handshake.receive(bytes)
            phase = .tunnelling(channel, handshake)
            switch outcome {
            case .needMoreBytes:
                return
            case .refused(let head):
                channel.close()
                finish(.failure(.proxyRefused(proxy: endpoint.proxy?.description ?? "the proxy", status: head.status.code,
                                               reason: head.reason)))
            case .malformed(let error):
                channel.close()
                finish(.failure(.http1Parse(error)))
            case .tunnel(let leftover):
                let http = HTTPClientConnection(channel: channel, configuration: configuration)
                phase = .establishing(http)
                if let tlsSecurity {
                    channel.startTLS(tlsSecurity, leftover: leftover)
                    http.adopt { [self] event in connectionEvent(event, http) }
                } else {
                    http.adopt(leftover: leftover) { [self] event in connectionEvent(event, http) }
                }
            }
        case .readEOF:
            channel.close()
            finish(.failure(.peerClosed(during: .response)))
        case .closed(let error):
            finish(.failure(error ?? .peerClosed(during: .response)))
        case .clientHello, .established, .writable:
            return
        }
    }

    private func connectionEvent(_ event: HTTPClientConnectionEvent, _ http: HTTPClientConnection) {
        guard case .establishing = phase else {
            events(event)
            return
        }
        switch event {
        case .ready:
            finish(.success(http))
        case .closed(let error):
            finish(.failure(error ?? .peerClosed(during: .tlsHandshake)))
        case .available, .goAway:
            return
        }
    }

    private func finish(_ result: Result<HTTPClientConnection, TransportError>) {
        if case .done = phase { return }
        phase = .done
        completion(result)
    }
}
