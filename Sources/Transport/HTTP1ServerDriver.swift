import HTTP
import Wire

/// HTTP/1.1 on the server side of a channel, one exchange at a time (see
/// `HTTPServerConnection`): a thin driver of `HTTP1ServerLayer`, which holds
/// the connection logic. It feeds the layer the channel's events and the
/// stream's calls, and carries out what comes back: writes, reading paused
/// or resumed, the linger timer, closing; request parts go to the
/// `HTTPServerStream` of the exchange in progress.
final class HTTP1ServerDriver: HTTP1Driver, HTTPConnectionDriver, HTTPServerStreamDriver, @unchecked Sendable {
    private unowned let connection: HTTPServerConnection
    private var layer: HTTP1ServerLayer
    /// The stream of the layer's exchange, the `activeStream` while the layer has
    /// one. Dropped when the layer is idle with no exchange and the stream has
    /// finished (nothing can reach it then), so an idle keep-alive connection does
    /// not hold the last exchange's heads; an unfinished one is kept until the next
    /// request or the close, which may still fail it.
    private var stream: HTTPServerStream?
    /// Armed by `.shutdownAndLinger`; cancelled when the connection closes.
    private var lingerTimer: LoopTimer?

    init(connection: HTTPServerConnection) {
        self.connection = connection
        layer = HTTP1ServerLayer(limits: connection.configuration.http1Limits)
        super.init(channel: connection.channel)
    }

    // MARK: Channel side

    func start(leftover: [UInt8]) {
        layer.receive(leftover)
        pump()
    }

    func received(_ bytes: [UInt8]) {
        layer.receive(bytes)
        pump()
    }

    func readEnded() {
        perform(layer.readEnded())
        pump()
    }

    func channelClosed(_ error: TransportError?) -> TransportError? {
        cancelLingerTimer()
        if let unfinished = layer.channelClosed() {
            stream?.fail(error ?? .peerClosed(during: TransportStage(unfinished)))
        }
        stream = nil
        return error
    }

    func closeGracefully() {
        perform(layer.stopAfterExchange())
    }

    // MARK: The layer's steps

    override var activeStream: HTTPStream? { layer.exchange == nil ? nil : stream }

    override func runLayer() {
        while true {
            let current = layer.exchange == nil ? nil : stream
            switch layer.next(consumerWants: current?.wantsInbound ?? false) {
            case .idle(let reading):
                if current == nil, stream?.isFinished == true { stream = nil }
                apply(reading)
                return
            case .requestHead(let parsed, let streamID):
                let stream = HTTPServerStream(
                    loop: channel.loop, streamID: streamID, version: parsed.head.version, request: parsed.head,
                    requestWire: .http1(head: parsed.rawHead), requestBodyFraming: parsed.framing,
                    expectsContinue: parsed.expectsContinue, connection: connection, driver: self)
                self.stream = stream
                connection.deliver(.stream(stream))
                stream.answerContinueIfOwed(automatic: connection.configuration.automaticContinue)
            case .requestBody(let bytes):
                current?.receive(.body(bytes))
            case .requestEnd(let trailers):
                current?.receive(.end(trailers: trailers))
            case .connection(let command):
                perform(command)
            case .refused(let refusal):
                carryOut(refusal, failing: current)
            }
        }
    }

    /// A malformed request (or one that did not come in time): see `HTTP1ServerLayer.refuse`.
    func parseFailed(_ error: HTTP1ParseError) {
        let current = activeStream
        carryOut(layer.refuse(error), failing: current)
    }

    private func carryOut(_ refusal: HTTP1ServerLayer.Refusal, failing current: HTTPStream?) {
        if let failure = refusal.exchangeFailure { current?.fail(TransportError(failure)) }
        if let answer = refusal.answer {
            channel.write(answer.bytes)
            connection.deliver(.malformedRequest(refusal.error, answer: answer.head,
                                                 wire: .http1(head: answer.serialized.rawHead)))
        } else if refusal.reported {
            connection.deliver(.malformedRequest(refusal.error, answer: nil, wire: nil))
        }
        perform(refusal.then)
    }

    private func perform(_ command: HTTP1ConnectionCommand) {
        switch command {
        case .none:
            break
        case .close:
            cancelLingerTimer()
            channel.close()
        case .abort:
            channel.abort()
        case .shutdownAndClose:
            channel.shutdownWrite()
            channel.close()
        case .shutdownAndLinger:
            channel.shutdownWrite()
            lingerTimer = channel.loop.schedule(after: connection.configuration.lingerTimeout) { [self] in
                lingerTimer = nil
                perform(layer.lingerTimerFired())
            }
            channel.resumeReading()
        }
    }

    private func cancelLingerTimer() {
        lingerTimer?.cancel()
        lingerTimer = nil
    }

    /// Hands the channel over after a tunnel-opening response; returns the bytes read past the request.
    func detachForTunnel() throws(TransportError) -> [UInt8] {
        let leftover: [UInt8]
        do {
            leftover = try layer.detachForTunnel()
        } catch {
            throw TransportError(error)
        }
        stream?.release()
        stream = nil
        return leftover
    }

    // MARK: Stream side

    override func dropExchange() {
        layer.drop()
    }

    override func frameBody(_ bytes: [UInt8]) throws(HTTP1LayerError) -> [UInt8] {
        try layer.sendBody(bytes)
    }

    private func checkCurrent(_ stream: HTTPStream) throws(TransportError) {
        guard activeStream === stream else { throw TransportError(HTTP1LayerError.exchangeOver) }
    }

    func sendHead(_ head: HTTPResponseHead, framing: HTTP1Framing?,
                  on stream: HTTPServerStream) throws(TransportError) -> (sent: HTTPResponseHead, wire: HeadDigest.WireForm) {
        try checkCurrent(stream)
        let sent: HTTP1ServerLayer.SentHead
        do {
            sent = try layer.sendResponseHead(head, framing: framing, answering: stream.request,
                                              continueOwed: stream.continueOwed)
        } catch {
            throw TransportError(error)
        }
        channel.write(sent.serialized.bytes)
        if sent.opensTunnel { stream.outboundEnded() }
        return (sent.head, .http1(head: sent.serialized.rawHead))
    }

    override func sendEnd(trailers: HTTPFields?, on stream: HTTPStream) throws(TransportError) -> HTTPFields? {
        try checkCurrent(stream)
        let end: HTTP1ServerLayer.SentEnd
        do {
            end = try layer.sendEnd(trailers: trailers)
        } catch {
            throw TransportError(error)
        }
        if !end.bytes.isEmpty { channel.write(end.bytes) }
        // The response is complete: it leaves now, ahead of the exchange's
        // bookkeeping and the next request's setup that this turn still runs.
        channel.flushNow()
        stream.outboundEnded()
        switch end.completion {
        case .nextRequest where layer.awaitsRequest:
            // Nothing received waits: the layer can only resume reading, which
            // delivers nothing inside the owner's call; no loop turn needed.
            pump()
        case .awaitingRequestEnd, .nextRequest:
            schedulePump()
        case .finish(let command):
            perform(command)
        case .cancelRequest(let command):
            stream.fail(.cancelled)
            perform(command)
        }
        return end.trailers
    }

    override func inboundWanted(_ stream: HTTPStream) {
        guard let current = activeStream as? HTTPServerStream, current === stream else { return }
        current.answerContinueIfOwed(automatic: connection.configuration.automaticContinue)
        schedulePump()
    }
}
