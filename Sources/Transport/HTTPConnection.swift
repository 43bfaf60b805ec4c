import HTTP
import TLS
import Wire

/// What `HTTPServerConnection` and `HTTPClientConnection` share: the channel,
/// routing its events to the driver chosen once it is established (by ALPN
/// or a forced version), closing, and keeping itself alive from
/// `start`/`adopt` until `.closed`. Not made directly.
///
/// The connection is the channel's handler itself: each channel event goes
/// straight to `channelEvent`, which hands it to the driver; the role's
/// subclass makes the driver (`makeDriver`) and tells its owner
/// (`announceReady`, `announceClosed`).
///
/// `@unchecked Sendable`: `channel` and `choice` are immutable; everything
/// else is touched only on the channel's loop.
public class HTTPConnection: @unchecked Sendable {
    /// Where the connection is with its channel.
    enum State {
        /// Waiting for `.established`; `leftover` goes to the driver first.
        case awaitingChannel(leftover: [UInt8])
        case running(any HTTPConnectionDriver)
        /// The owner took the channel back (a tunnel); its events are no longer ours.
        case detached
        case closed
    }

    public let channel: ByteChannel
    public var loop: EventLoop { channel.loop }
    /// The version spoken, once ready. Read only on the loop.
    public private(set) var version: HTTPVersion?

    let choice: HTTPProtocolChoice
    private(set) var state = State.awaitingChannel(leftover: [])
    /// How the peer finished sending, once it did (a detach passes it on).
    private(set) var readEnd: ReadEnd?
    /// Held from start to `.closed` (or a detach), so owners need not keep the connection.
    var selfReference: HTTPConnection?

    init(channel: ByteChannel, protocolChoice: HTTPProtocolChoice) {
        self.channel = channel
        self.choice = protocolChoice
    }

    // MARK: What each role provides

    func makeDriver(_ version: HTTPVersion) -> any HTTPConnectionDriver {
        preconditionFailure("HTTPConnection is used only through its server and client subclasses")
    }

    func announceReady(_ version: HTTPVersion) {}
    func announceClosed(_ error: TransportError?) {}

    // MARK: Shared

    /// The driver, once the channel is established and until it closes or is detached.
    var driver: (any HTTPConnectionDriver)? {
        if case .running(let driver) = state { return driver }
        return nil
    }

    /// Starts the unstarted channel (after the subclass installed its handler).
    func begin() {
        loop.preconditionOnLoop()
        selfReference = self
        channel.start(owner: self)
    }

    /// Takes over the started channel, established or still handshaking
    /// (after the subclass installed its handler).
    func begin(adopting leftover: [UInt8]) {
        loop.preconditionOnLoop()
        selfReference = self
        state = .awaitingChannel(leftover: leftover)
        channel.setOwner(self)
        if channel.isEstablished { established(channel.tlsInfo) }
    }

    /// The owner takes the channel back; no further events reach the driver,
    /// and the connection no longer keeps itself alive.
    func detach() {
        state = .detached
        selfReference = nil
    }

    /// Stops taking new streams and closes once those open finish: HTTP/1.1
    /// after the exchange in progress (at once when idle), HTTP/2 with GOAWAY.
    /// Called only on the loop.
    public func close() {
        loop.preconditionOnLoop()
        if let driver { driver.closeGracefully() } else { channel.close() }
    }

    /// Resets the connection at once; open streams fail with `.cancelled`. Called only on the loop.
    public func abort() {
        loop.preconditionOnLoop()
        if let driver { driver.abort() } else { channel.abort() }
    }

    /// Exchanges (HTTP/1.1) or streams (HTTP/2) not yet finished. Read only on the loop.
    public var activeStreamCount: Int { driver?.activeStreamCount ?? 0 }

    // MARK: Channel events

    /// One event of the channel, which delivers here directly while the connection owns it.
    final func channelEvent(_ event: ChannelEvent) {
        switch event {
        case .received(let bytes):
            switch state {
            case .running(let driver): driver.received(bytes)
            case .awaitingChannel(let leftover): state = .awaitingChannel(leftover: leftover + bytes)
            case .detached, .closed: break
            }
        case .writable:
            driver?.channelWritable()
        case .readEOF(let end):
            readEnd = end
            driver?.readEnded()
        case .clientHello:
            // Owners that pick a context by SNI handle the hello before handing the channel over.
            channel.continueHandshake()
        case .established(let info):
            established(info)
        case .closed(let error):
            let reported: TransportError?
            switch state {
            case .running(let driver): reported = driver.channelClosed(error)
            case .awaitingChannel: reported = error ?? .peerClosed(during: .tlsHandshake)
            case .detached, .closed: return
            }
            state = .closed
            finish(reported)
        }
    }

    private func established(_ info: TLSConnectionInfo?) {
        guard case .awaitingChannel(let leftover) = state else { return }
        switch choice.version(for: info) {
        case .failure(let error):
            state = .closed
            channel.abort()
            finish(error)
        case .success(let version):
            let driver = makeDriver(version)
            state = .running(driver)
            self.version = version
            announceReady(version)
            if case .running = state { driver.start(leftover: leftover) }
        }
    }

    /// Tells the owner the connection closed and lets go of itself.
    private func finish(_ error: TransportError?) {
        announceClosed(error)
        selfReference = nil
    }
}
