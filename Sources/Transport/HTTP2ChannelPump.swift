import HTTP

/// Runs an `HTTP2Session` over a `ByteChannel`: feeds it what the channel
/// receives, writes what it produces while the channel is writable (and
/// stops taking frames while it is not, so a peer that does not read is held
/// back and a flooding one detected), and hands every event to its owner.
/// Shared by the HTTP/2 server and client engines.
///
/// `@unchecked Sendable`: touched only on the channel's loop.
final class HTTP2ChannelPump: @unchecked Sendable {
    let session: HTTP2Session
    let channel: ByteChannel
    /// Receives the session's events, whether they came from receiving or sending.
    var onEvents: ([HTTP2Event]) -> Void = { _ in }
    /// Runs after each flush, so streams can learn they became writable.
    var afterFlush: () -> Void = {}
    private var flushScheduled = false

    /// Largest piece taken from the session per channel write.
    private static let writeSize = 128 * 1024

    init(session: HTTP2Session, channel: ByteChannel) {
        self.session = session
        self.channel = channel
    }

    /// Feeds received bytes, reports the events, then writes what is due.
    func received(_ bytes: [UInt8]) {
        let events = session.receive(bytes)
        if !events.isEmpty { onEvents(events) }
        flush()
    }

    /// Writes on the next loop turn (many calls in one turn make one flush).
    func scheduleFlush() {
        guard !flushScheduled else { return }
        flushScheduled = true
        channel.loop.execute { [self] in flush() }
    }

    /// Takes frames from the session while the channel is writable; closes
    /// the channel once the session is finished (GOAWAY done, or failed).
    func flush() {
        flushScheduled = false
        guard channel.isOpen else { return }
        while channel.isWritable {
            let bytes = session.takeOutbound(maxBytes: HTTP2ChannelPump.writeSize)
            let events = session.takeEvents()
            if !bytes.isEmpty { channel.write(bytes) }
            if !events.isEmpty { onEvents(events) }
            if bytes.isEmpty { break }
        }
        afterFlush()
        if session.isFinished { channel.close() }
    }
}
