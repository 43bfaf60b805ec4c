import HTTP

/// What the HTTP/1.1 server and client drivers share: the channel, the
/// demand-driven pump, and what the stream of the exchange in progress asks
/// of its driver. The connection logic lives in the role's sans-io layer
/// (`HTTP1ServerLayer`, `HTTP1ClientLayer`); a driver only feeds it the
/// channel's and the stream's events and carries out what it returns.
///
/// Reading follows demand: the layer is asked for its next step only while
/// someone wants it, and the channel reads only when the layer says so.
///
/// `@unchecked Sendable`: touched only on the channel's loop (it is captured
/// by loop closures that run there).
class HTTP1Driver: HTTPStreamDriver, @unchecked Sendable {
    let channel: ByteChannel
    private var pumpScheduled = false
    /// True while `pump` runs the layer: a change made meanwhile is seen by its next step.
    private var pumping = false

    init(channel: ByteChannel) {
        self.channel = channel
    }

    // MARK: What each role provides

    /// The stream of the exchange in progress.
    var activeStream: HTTPStream? { nil }
    /// One exchange at a time.
    final var activeStreamCount: Int { activeStream == nil ? 0 : 1 }
    /// Carries out the layer's steps until it waits.
    func runLayer() {}
    /// The layer frames body bytes of this side's message.
    func frameBody(_ bytes: [UInt8]) throws(HTTP1LayerError) -> [UInt8] { [] }
    /// Forgets the exchange in progress and stops (the connection is being reset).
    func dropExchange() {}

    // MARK: Pumping

    /// Runs the pump on a later loop turn (calls from the owner's side never
    /// deliver events inline). Nothing to schedule while the pump runs: the
    /// owner's call came from one of its steps, and it asks the layer again
    /// once that call returned.
    final func schedulePump() {
        guard !pumpScheduled, !pumping else { return }
        pumpScheduled = true
        channel.loop.execute { [self] in pump() }
    }

    /// Carries out the layer's steps now.
    final func pump() {
        pumpScheduled = false
        let outer = pumping
        pumping = true
        runLayer()
        pumping = outer
    }

    /// Carries out what the layer asks of reading once it is idle.
    final func apply(_ reading: HTTP1Reading) {
        switch reading {
        case .unchanged: break
        case .pause: channel.pauseReading()
        case .resume: channel.resumeReading()
        }
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
        do {
            channel.write(try frameBody(bytes))
        } catch {
            throw TransportError(error)
        }
    }

    func sendEnd(trailers: HTTPFields?, on stream: HTTPStream) throws(TransportError) -> HTTPFields? { nil }
}
