import HTTP

/// What the HTTP/1.1 server and client engines share: the parser and
/// serializer on one channel, the demand-driven pump, and what the stream of
/// the exchange in progress asks of its engine. Subclasses parse their side's
/// messages and track their exchange.
///
/// Reading follows demand: the parser is asked for the next event only while
/// someone wants it, and the channel reads only when the parser needs bytes.
///
/// `@unchecked Sendable`: touched only on the channel's loop (it is captured
/// by loop closures that run there).
class HTTP1Engine: HTTPStreamDriver, @unchecked Sendable {
    let channel: ByteChannel
    var parser: HTTP1Parser
    var serializer = HTTP1Serializer()
    var nextStreamID = 1
    /// The peer finished sending.
    var peerEnded = false
    private var pumpScheduled = false

    init(channel: ByteChannel, parsing kind: HTTP1Parser.Kind, limits: HTTP1ParserLimits) {
        self.channel = channel
        self.parser = HTTP1Parser(parsing: kind, limits: limits)
    }

    // MARK: What each role decides

    /// The stream of the exchange in progress.
    var activeStream: HTTPStream? { nil }
    /// Whether the parser may run at all (the connection is in a reading phase).
    var isParsing: Bool { false }
    /// Whether the exchange in progress does not want parser events now.
    var waitsForConsumer: Bool { false }
    func handle(_ event: HTTP1Event) {}
    func parseFailed(_ error: HTTP1ParseError) {}
    /// The peer finished sending between exchanges.
    func peerClosedWhileIdle() {}
    /// The peer finished sending and every event before its end was handled:
    /// between exchanges that is `peerClosedWhileIdle`; a role may also end
    /// an exchange that runs until the peer's end.
    func peerFinishedSending() {
        if activeStream == nil { peerClosedWhileIdle() }
    }
    /// Forgets the exchange in progress and stops (the connection is being reset).
    func dropExchange() {}

    // MARK: Parsing

    /// Runs the pump on a later loop turn (calls from the owner's side never deliver events inline).
    final func schedulePump() {
        guard !pumpScheduled else { return }
        pumpScheduled = true
        channel.loop.execute { [self] in pump() }
    }

    /// Pulls parser events while they are wanted; reads when the parser needs bytes.
    /// A message's end already parsed is pulled even for a consumer that waits:
    /// a paused `HTTPStream` still takes it (see its invariant), so it is not
    /// parted from the message's last bytes.
    final func pump() {
        pumpScheduled = false
        while isParsing {
            if waitsForConsumer, !parser.endsMessageNext {
                channel.pauseReading()
                return
            }
            let event: HTTP1Event?
            do {
                event = try parser.next()
            } catch {
                parseFailed(error)
                return
            }
            guard let event else {
                if !peerEnded {
                    channel.resumeReading()
                } else {
                    peerFinishedSending()
                }
                return
            }
            handle(event)
        }
    }

    /// Frames and writes body bytes of the message in progress.
    final func writeBody(_ bytes: [UInt8]) throws(TransportError) {
        do {
            channel.write(try serializer.writeBody(bytes))
        } catch {
            throw .http1Serialize(error)
        }
    }

    /// Writes the end of the message in progress: the last chunk and the
    /// trailers when chunked. A message that is not chunked cannot carry
    /// trailers: they are dropped. Returns the trailers written, nil if none.
    final func writeEnd(trailers: HTTPFields?) throws(TransportError) -> HTTPFields? {
        let carried = serializer.carriesTrailers && trailers?.isEmpty == false ? trailers : nil
        do {
            let bytes = try serializer.writeEnd(trailers: carried)
            if !bytes.isEmpty { channel.write(bytes) }
        } catch {
            throw .http1Serialize(error)
        }
        return carried
    }

    // MARK: Channel and stream side, alike for both roles

    func channelWritable() {
        activeStream?.writabilityMayHaveChanged()
    }

    /// Resets the connection; the exchange in progress fails with `.cancelled`.
    func abort() {
        let stream = activeStream
        dropExchange()
        stream?.fail(.cancelled)
        channel.abort()
    }

    /// HTTP/1.1 cannot abandon one message and go on: the connection is reset.
    func reset(_ stream: HTTPStream, code: HTTP2ErrorCode) {
        guard activeStream === stream else { return }
        dropExchange()
        channel.abort()
    }

    func isWritable(_ stream: HTTPStream) -> Bool {
        activeStream === stream && channel.isWritable
    }

    func pendingOutboundBytes(_ stream: HTTPStream) -> Int {
        activeStream === stream ? channel.pendingWriteByteCount : 0
    }

    func inboundWanted(_ stream: HTTPStream) {
        if activeStream === stream { schedulePump() }
    }

    func consumed(_ stream: HTTPStream, bytes: Int) {}

    func sendBody(_ bytes: [UInt8], on stream: HTTPStream) throws(TransportError) {
        guard activeStream === stream else { throw .invalidState("the exchange is over") }
        try writeBody(bytes)
    }

    func sendEnd(trailers: HTTPFields?, on stream: HTTPStream) throws(TransportError) -> HTTPFields? { nil }
}
