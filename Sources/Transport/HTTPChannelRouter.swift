import HTTP
import TLS

/// Routes a `ByteChannel`'s events to the HTTP engine chosen once the
/// channel is established (by ALPN or a forced version). Shared by the server
/// and client connections. Lives on the channel's loop.
final class HTTPChannelRouter {
    /// Where the routing is.
    enum State {
        /// Waiting for `.established`; `leftover` goes to the engine first.
        case awaitingChannel(leftover: [UInt8])
        case running(any HTTPConnectionEngine)
        /// The owner took the channel back (a tunnel); events are no longer ours.
        case detached
        case closed
    }

    let channel: ByteChannel
    let choice: HTTPProtocolChoice
    private(set) var state: State = .awaitingChannel(leftover: [])
    /// How the peer finished sending, once it did (a detach passes it on).
    private(set) var readEnd: ReadEnd?
    /// Builds the engine for the version the channel settled.
    private let makeEngine: (HTTPVersion) -> any HTTPConnectionEngine
    private let ready: (HTTPVersion) -> Void
    private let closed: (TransportError?) -> Void

    init(channel: ByteChannel, choice: HTTPProtocolChoice,
         makeEngine: @escaping (HTTPVersion) -> any HTTPConnectionEngine,
         ready: @escaping (HTTPVersion) -> Void, closed: @escaping (TransportError?) -> Void) {
        self.channel = channel
        self.choice = choice
        self.makeEngine = makeEngine
        self.ready = ready
        self.closed = closed
    }

    /// Starts an unstarted channel.
    func start() {
        channel.start { [self] event in handle(event) }
    }

    /// Takes over a started channel, established or still handshaking.
    func adopt(leftover: [UInt8]) {
        state = .awaitingChannel(leftover: leftover)
        channel.setHandler { [self] event in handle(event) }
        if channel.isEstablished { established(channel.tlsInfo) }
    }

    var engine: (any HTTPConnectionEngine)? {
        if case .running(let engine) = state { return engine }
        return nil
    }

    /// The owner takes the channel back; no further events reach the engine.
    func detach() {
        state = .detached
    }

    private func handle(_ event: ChannelEvent) {
        switch event {
        case .clientHello:
            // Owners that pick a context by SNI handle the hello before handing the channel over.
            channel.continueHandshake()
        case .established(let info):
            established(info)
        case .received(let bytes):
            switch state {
            case .awaitingChannel(let leftover): state = .awaitingChannel(leftover: leftover + bytes)
            case .running(let engine): engine.received(bytes)
            case .detached, .closed: break
            }
        case .readEOF(let end):
            readEnd = end
            engine?.readEnded()
        case .writable:
            engine?.channelWritable()
        case .closed(let error):
            let reported: TransportError?
            switch state {
            case .running(let engine): reported = engine.channelClosed(error)
            case .awaitingChannel: reported = error ?? .peerClosed(during: .tlsHandshake)
            case .detached, .closed: return
            }
            state = .closed
            closed(reported)
        }
    }

    private func established(_ info: TLSConnectionInfo?) {
        guard case .awaitingChannel(let leftover) = state else { return }
        switch choice.version(for: info) {
        case .failure(let error):
            state = .closed
            channel.abort()
            closed(error)
        case .success(let version):
            let engine = makeEngine(version)
            state = .running(engine)
            ready(version)
            if case .running = state { engine.start(leftover: leftover) }
        }
    }
}
