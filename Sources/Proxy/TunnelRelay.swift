import Transport
import Wire

/// Relays bytes untouched between a client channel and a server channel (a
/// passthrough tunnel), with backpressure both ways: when one side's write
/// queue is full, reading from the other pauses until it drains. A FIN on
/// one side is passed on as a half-close; the relay ends when both channels
/// closed, reporting the first failure.
///
/// Loop-confined: both channels live on `loop`; every method runs there.
final class TunnelRelay {
    private let client: ByteChannel
    private let server: ByteChannel
    private var openChannels = 2
    private var failure: TransportError?
    private let finished: (TransportError?) -> Void

    /// Takes over both channels' events; `client` must be established (or
    /// about to be, for a passthrough) and `server` connected or connecting.
    /// `finished` runs once, on the loop, after both closed.
    init(client: ByteChannel, server: ByteChannel, finished: @escaping (TransportError?) -> Void) {
        self.client = client
        self.server = server
        self.finished = finished
    }

    /// Starts relaying; `clientStarted` and `serverStarted` tell whether a
    /// channel's handler is merely replaced (it is running; a started server
    /// channel, a tunnel through an upstream proxy, resumes reading) or the
    /// channel is started.
    func start(clientStarted: Bool, serverStarted: Bool = false) {
        if clientStarted {
            client.setHandler { [self] event in handle(event, from: client, to: server) }
        } else {
            client.start { [self] event in handle(event, from: client, to: server) }
        }
        if serverStarted {
            server.setHandler { [self] event in handle(event, from: server, to: client) }
            server.resumeReading()
        } else {
            server.start { [self] event in handle(event, from: server, to: client) }
        }
    }

    private func handle(_ event: ChannelEvent, from source: ByteChannel, to sink: ByteChannel) {
        switch event {
        case .clientHello, .established:
            break
        case .received(let bytes):
            if !sink.write(bytes) { source.pauseReading() }
        case .readEOF:
            sink.shutdownWrite()
        case .writable:
            // `source` drained: the side that writes into it may read again.
            sink.resumeReading()
        case .closed(let error):
            if failure == nil, let error { failure = error }
            // One side gone: the other has nothing to relay to.
            if sink.isOpen {
                if error == nil { sink.close() } else { sink.abort() }
            }
            openChannels -= 1
            if openChannels == 0 { finished(failure) }
        }
    }
}
