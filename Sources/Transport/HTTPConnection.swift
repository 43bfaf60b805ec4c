import HTTP
import Wire

/// What `HTTPServerConnection` and `HTTPClientConnection` share: the channel,
/// the engine chosen once it is established, closing, and keeping itself
/// alive from `start`/`adopt` until `.closed`. Not made directly.
///
/// `@unchecked Sendable`: `channel` is immutable; everything else is touched
/// only on the channel's loop.
public class HTTPConnection: @unchecked Sendable {
    public let channel: ByteChannel
    public var loop: EventLoop { channel.loop }
    /// The version spoken, once ready. Read only on the loop.
    public private(set) var version: HTTPVersion?

    private(set) var router: HTTPChannelRouter!
    /// Held from start to `.closed` (or a detach), so owners need not keep the connection.
    var selfReference: HTTPConnection?

    init(channel: ByteChannel, protocolChoice: HTTPProtocolChoice) {
        self.channel = channel
        router = HTTPChannelRouter(
            channel: channel, choice: protocolChoice,
            makeEngine: { [unowned self] version in makeEngine(version) },
            ready: { [unowned self] version in
                self.version = version
                announceReady(version)
            },
            closed: { [unowned self] error in
                announceClosed(error)
                selfReference = nil
            })
    }

    // MARK: What each role provides

    func makeEngine(_ version: HTTPVersion) -> any HTTPConnectionEngine {
        preconditionFailure("HTTPConnection is used only through its server and client subclasses")
    }

    func announceReady(_ version: HTTPVersion) {}
    func announceClosed(_ error: TransportError?) {}

    // MARK: Shared

    /// Starts the unstarted channel (after the subclass installed its handler).
    func begin() {
        loop.preconditionOnLoop()
        selfReference = self
        router.start()
    }

    /// Takes over the started channel (after the subclass installed its handler).
    func begin(adopting leftover: [UInt8]) {
        loop.preconditionOnLoop()
        selfReference = self
        router.adopt(leftover: leftover)
    }

    /// Stops taking new streams and closes once those open finish: HTTP/1.1
    /// after the exchange in progress (at once when idle), HTTP/2 with GOAWAY.
    /// Called only on the loop.
    public func close() {
        loop.preconditionOnLoop()
        if let engine = router.engine { engine.closeGracefully() } else { channel.close() }
    }

    /// Resets the connection at once; open streams fail with `.cancelled`. Called only on the loop.
    public func abort() {
        loop.preconditionOnLoop()
        if let engine = router.engine { engine.abort() } else { channel.abort() }
    }

    /// Exchanges (HTTP/1.1) or streams (HTTP/2) not yet finished. Read only on the loop.
    public var activeStreamCount: Int { router.engine?.activeStreamCount ?? 0 }
}
