import AuthFlow
import Evidence
import Foundation
import HTTP
import Synchronization
import TLS
import Transport
import Wire

/// The mock Appian server on a socket: TLS (HTTP/2 and HTTP/1.1 by ALPN,
/// optionally requiring a client certificate) in front of one `MockServer`,
/// recording every exchange from the server's side when given a recorder.
///
/// ```swift
/// let host = MockServerHost(configuration: configuration, recorder: recorder)
/// let started = try host.start()      // started.listenAddress, started.server.contextURL
/// …
/// host.stop()
/// ```
///
/// Connections live on the group's loops; the one `MockServer` (a value with
/// no locks of its own) is behind a mutex, so its state changes one request
/// at a time whatever loop asks.
public final class MockServerHost: Sendable {
    public let configuration: Configuration
    public let recorder: TapRecorder?
    let group: EventLoopGroup
    let classifier: StepClassifier
    let bodyLimit: Int
    private let state = Mutex(Lifecycle.idle)
    private let server = Mutex<MockServer?>(nil)
    private let exchanges = Atomic(0)

    private enum Lifecycle: Sendable {
        case idle
        case running(HTTPServer)
        case stopped
    }

    /// Why a host did not start.
    public enum StartError: Error, CustomStringConvertible {
        case alreadyStarted
        case certificate(any Error)
        case tls(TLSError)
        case listen(WireError)

        public var description: String {
            switch self {
            case .alreadyStarted: return "the host was started before"
            case .certificate(let error): return "server certificate: \(error)"
            case .tls(let error): return "TLS setup: \(error)"
            case .listen(let error): return "cannot listen: \(error)"
            }
        }
    }

    /// A host for `configuration`, recording into `recorder` (which the
    /// caller closes after `stop`). Connections run on `group` (a group of
    /// its own, one loop, when nil).
    public init(configuration: Configuration, recorder: TapRecorder? = nil, group: EventLoopGroup? = nil) {
        self.configuration = configuration
        self.recorder = recorder
        self.group = group ?? EventLoopGroup(loopCount: 1, label: "intact.mock-server")
        classifier = StepClassifier(contextPath: configuration.server.contextPath)
        bodyLimit = configuration.server.maxRequestBodyBytes
    }

    /// Loads the certificate, binds and starts serving. Once.
    /// Blocks on disk I/O and maybe key generation: never call on a loop queue.
    public func start() throws(StartError) -> Started {
        let certificate: ServerCertificateSource.Loaded
        do {
            let host = configuration.certificateNameWithoutSNI
                ?? (configuration.externalOriginFollowsListener ? configuration.listenAddress.ip : configuration.server.externalOrigin.host)
            certificate = try configuration.certificate.load(defaultName: host)
        } catch {
            throw .certificate(error)
        }
        var tls = certificate.configuration
        tls.alpnPreference = configuration.alpn
        if let roots = configuration.clientCertificateRoots { tls.clientCertificate = .require(trustedBy: roots) }
        let context: TLSContext
        do {
            context = try TLSContext(server: tls)
        } catch {
            throw .tls(error)
        }
        let http = HTTPServer(group: group, configuration: HTTPServer.Configuration(
            address: configuration.listenAddress,
            tls: TLSServerSetup(context: context, handshakeTimeout: configuration.handshakeTimeout),
            connection: HTTPServerConnection.Configuration()),
            onConnectionEvent: { [self] connection, event in connectionEvent(connection, event) },
            onStream: { _ in
                // Served in `connectionEvent`, which sees the stream first and knows its connection.
            })
        let began = state.withLock { state -> Bool in
            guard case .idle = state else { return false }
            state = .running(http)
            return true
        }
        guard began else { throw .alreadyStarted }
        let bound: SocketAddress
        do {
            if let socket = configuration.listeningSocket {
                bound = try http.start(on: socket)
            } else {
                bound = try http.start()
            }
        } catch {
            state.withLock { $0 = .stopped }
            throw .listen(error)
        }
        var running = configuration.server
        if configuration.externalOriginFollowsListener {
            running.externalOrigin = Origin(scheme: "https", host: bound.ip, port: Int(bound.port))
        }
        server.withLock { $0 = MockServer(configuration: running) }
        return Started(listenAddress: bound, server: running, caCertificatePath: certificate.caCertificatePath,
                       createdCA: certificate.createdCA)
    }

    /// Stops accepting and closes every connection gracefully; returns once
    /// the listening socket is closed. Never call on a loop queue.
    public func stop() {
        let http = state.withLock { state -> HTTPServer? in
            defer { state = .stopped }
            if case .running(let http) = state { return http }
            return nil
        }
        guard let http else { return }
        let closed = DispatchSemaphore(value: 0)
        http.stop { closed.signal() }
        closed.wait()
    }

    /// Exchanges finished so far (answered, refused or broken). Callable from any thread.
    public var exchangeCount: Int { exchanges.load(ordering: .relaxed) }

    /// The mock server's answer to one request, now.
    func answer(_ request: MockRequest) -> MockResponse {
        server.withLock { server in
            guard var running = server else { preconditionFailure("requests arrive only after start") }
            let response = running.handle(request, now: Date())
            server = running
            return response
        }
    }

    func exchangeFinished() {
        exchanges.add(1, ordering: .relaxed)
    }

    /// Every connection event, on the connection's loop.
    private func connectionEvent(_ connection: HTTPServerConnection, _ event: HTTPServerConnectionEvent) {
        let connectionID = "c\(connection.channel.id)"
        switch event {
        case .stream(let stream):
            ServedStream(host: self, stream: stream, connectionID: connectionID, tls: connection.channel.tlsInfo).start()
        case .malformedRequest(let error, let answer, let wire):
            exchangeFinished()
            guard let recorder else { return }
            var response: RecordedMessage?
            if let answer, let wire {
                var observation = MessageObservation(response: answer, wire: wire,
                                                     using: recorder.settings.redaction.digests,
                                                     start: .now(), headersDone: .now())
                response = observation.finish(end: .now(), redaction: recorder.settings.redaction)
            }
            recorder.record(traceID: nil, step: nil, connectionID: connectionID,
                            tls: connection.channel.tlsInfo.map { TLSDetails($0) }, request: nil, response: response,
                            error: ExchangeRecord.Failure(kind: .protocolError, location: "server HTTP/1.1 request",
                                                          message: "\(error.status) \(error.reason)"))
        case .refusedStream(let streamID, let request, let reason):
            // An HTTP/2 request refused before it became one (header list too large): a failed exchange here.
            exchangeFinished()
            let what = request.map { " (\($0.method) \($0.path))" } ?? ""
            recorder?.record(traceID: request.flatMap { ExchangeRecord.traceID(in: $0.fields) }, step: nil,
                             connectionID: connectionID, streamID: streamID,
                             tls: connection.channel.tlsInfo.map { TLSDetails($0) }, request: nil, response: nil,
                             error: ExchangeRecord.Failure(kind: .protocolError, location: "server HTTP/2 request",
                                                           message: "request" + what + ": " + reason))
        case .closed(.tlsHandshake(let error)?):
            // A refused handshake (no client certificate, an untrusted one) is a connection event with its
            // failure, peer and time, as a proxy records one: verify pairs it with the exchange it broke.
            exchangeFinished()
            recorder?.record(traceID: nil, step: nil, connectionID: connectionID, tls: nil, request: nil, response: nil,
                             error: TransportError.tlsHandshake(error).recordedFailure(at: "server TLS handshake"),
                             connection: RequestlessConnection(outcome: .handshakeFailed,
                                                         peer: connection.channel.remoteAddress.description, at: .now()))
        case .ready, .closed:
            break
        }
    }
}
