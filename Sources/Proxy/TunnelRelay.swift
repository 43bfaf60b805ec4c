import Hashing
import Transport
import Wire

/// Relays bytes untouched between a client channel and a server channel (a
/// passthrough tunnel), with backpressure both ways: when one side's write
/// queue is full, reading from the other pauses until it drains. A FIN on
/// one side is passed on as a half-close; the relay ends when both channels
/// closed, reporting the first failure and what it carried each way.
///
/// It relays passthrough tunnels and connections that switched protocols
/// after a 101 alike; the latter count and digest each direction (with the
/// recording's digest function, `counting`), on the side it was read and
/// the side it was written.
///
/// Loop-confined: both channels live on `loop`; every method runs there.
final class TunnelRelay {
    private let client: ByteChannel
    private let server: ByteChannel
    private var openChannels = 2
    private var failure: TransportError?
    /// What was relayed, when counting.
    private var traffic: RelayTraffic?
    private let finished: (TransportError?, RelayTraffic?) -> Void

    /// Takes over both channels' events; `client` must be established (or
    /// about to be, for a passthrough) and `server` connected or connecting.
    /// `finished` runs once, on the loop, after both closed, with what was
    /// relayed when `counting` (digested with that function).
    init(client: ByteChannel, server: ByteChannel, counting: DigestFunction? = nil,
         finished: @escaping (TransportError?, RelayTraffic?) -> Void) {
        self.client = client
        self.server = server
        traffic = counting.map(RelayTraffic.init(digests:))
        self.finished = finished
    }

    /// Relays bytes `source` sent before the relay took it over (read past
    /// the head that opened the tunnel), as if they had just arrived.
    func relayEarlier(_ bytes: [UInt8], fromClient: Bool) {
        guard !bytes.isEmpty else { return }
        if fromClient {
            handle(.received(bytes), from: client, to: server)
        } else {
            handle(.received(bytes), from: server, to: client)
        }
    }

    /// Starts relaying; `clientStarted` and `serverStarted` tell whether a
    /// channel's handler is merely replaced (it is running; a started server
    /// channel, a tunnel through an upstream proxy, resumes reading) or the
    /// channel is started.
    func start(clientStarted: Bool, serverStarted: Bool = false) {
        if clientStarted {
            client.setHandler(clientEvents)
        } else {
            client.start(clientEvents)
        }
        if serverStarted {
            server.setHandler(serverEvents)
            server.resumeReading()
        } else {
            server.start(serverEvents)
        }
    }

    /// The handlers `start` installs, for handing a channel over to the relay
    /// before it starts (an event delivered to them is relayed).
    var clientEvents: (ChannelEvent) -> Void { { [self] event in handle(event, from: client, to: server) } }
    var serverEvents: (ChannelEvent) -> Void { { [self] event in handle(event, from: server, to: client) } }

    private func handle(_ event: ChannelEvent, from source: ByteChannel, to sink: ByteChannel) {
        switch event {
        case .clientHello, .established:
            break
        case .received(let bytes):
            let sinkOpen = sink.isOpen
            if traffic != nil { count(bytes, fromClient: source === client, written: sinkOpen) }
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
            if openChannels == 0 { finished(failure, traffic) }
        }
    }

    private func count(_ bytes: [UInt8], fromClient: Bool, written: Bool) {
        if fromClient {
            traffic?.fromClient.add(bytes)
            if written { traffic?.toServer.add(bytes) }
        } else {
            traffic?.fromServer.add(bytes)
            if written { traffic?.toClient.add(bytes) }
        }
    }
}
