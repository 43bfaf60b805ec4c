import HTTP
import Wire

/// HTTP/1.1 on the client side of a channel, one exchange at a time (see
/// `HTTPClientConnection`): a thin driver of `HTTP1ClientLayer`, which holds
/// the connection logic. It feeds the layer the channel's events and the
/// stream's calls, and carries out what comes back: writes, reading paused
/// or resumed, closing; response parts go to the `HTTPClientStream` of the
/// exchange in progress.
final class HTTP1ClientDriver: HTTP1Driver, HTTPClientDriver, @unchecked Sendable {
    private unowned let connection: HTTPClientConnection
    private var layer: HTTP1ClientLayer
    /// The stream of the layer's exchange; kept (released) after it ends
    /// until the next request, only as the `activeStream` while the layer has one.
    private var stream: HTTPClientStream?

    init(connection: HTTPClientConnection) {
        self.connection = connection
        layer = HTTP1ClientLayer(limits: connection.configuration.http1Limits)
        super.init(channel: connection.channel)
    }

    var canOpenStream: Bool { layer.canOpenExchange }

    func open(_ head: HTTPRequestHead, framing: HTTP1Framing?,
              handler: @escaping (HTTPStreamEvent) -> Void) throws(TransportError) -> HTTPClientStream {
        let sent: HTTP1ClientLayer.SentHead
        do {
            sent = try layer.sendRequestHead(head, framing: framing, webSocketKey: ExtendedConnect.newWebSocketKey())
        } catch {
            throw TransportError(error)
        }
        channel.write(sent.serialized.bytes)
        let stream = HTTPClientStream(loop: channel.loop, streamID: sent.streamID, version: sent.head.version,
                                      request: sent.head, requestWire: .http1(head: sent.serialized.rawHead),
                                      connection: connection, driver: self)
        self.stream = stream
        stream.setHandler(handler)
        if sent.requestEnded { stream.outboundEnded() }
        schedulePump()
        return stream
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
        layer.readEnded()
        pump()
    }

    func channelClosed(_ error: TransportError?) -> TransportError? {
        let reported = layer.failure.map(TransportError.http1Parse) ?? error
        if let unfinished = layer.channelClosed() {
            stream?.fail(reported ?? .peerClosed(during: TransportStage(unfinished)))
        }
        stream = nil
        return reported
    }

    func closeGracefully() {
        if layer.stopAfterExchange() { channel.close() }
    }

    // MARK: The layer's steps

    override var activeStream: HTTPStream? { layer.exchange == nil ? nil : stream }

    override func runLayer() {
        while true {
            let current = layer.exchange == nil ? nil : stream
            switch layer.next(consumerWants: current?.wantsInbound ?? false) {
            case .idle(let reading):
                apply(reading)
                return
            case .interimResponse(let parsed):
                current?.receive(.interimResponse(parsed.head, wire: .http1(head: parsed.rawHead)))
            case .response(let parsed):
                current?.receiveResponse(parsed.head, wire: .http1(head: parsed.rawHead))
            case .upgraded:
                // The exchange ended with the 101; the stream is no longer the layer's.
                stream?.receive(.end(trailers: nil))
            case .responseBody(let bytes):
                current?.receive(.body(bytes))
            case .responseEnd(let trailers):
                current?.receive(.end(trailers: trailers))
            case .completed(let completion):
                // A step of the pump, outside any owner's call: `.available` may go at once.
                complete(completion, inStep: true)
            case .close(let failure):
                if let failure { stream?.fail(TransportError(failure)) }
                channel.close()
            }
        }
    }

    /// `inStep`: called from one of the pump's steps (never inside an owner's
    /// call), so the owner may hear of a reusable connection at once.
    private func complete(_ completion: HTTP1ClientLayer.Completion, inStep: Bool) {
        switch completion {
        case .pending: break
        case .reusable: connection.announceAvailable(inStep: inStep)
        case .close: channel.close()
        }
    }

    /// Hands the channel over after a 101; returns the bytes read past it
    /// and whether the server's FIN was read too.
    func detachForTunnel() throws(TransportError) -> (leftover: [UInt8], peerEnded: Bool) {
        do {
            return try layer.detachForTunnel()
        } catch {
            throw TransportError(error)
        }
    }

    // MARK: Stream side

    override func dropExchange() {
        layer.drop()
    }

    override func frameBody(_ bytes: [UInt8]) throws(HTTP1LayerError) -> [UInt8] {
        try layer.sendBody(bytes)
    }

    override func sendEnd(trailers: HTTPFields?, on stream: HTTPStream) throws(TransportError) -> HTTPFields? {
        guard activeStream === stream else { throw TransportError(HTTP1LayerError.exchangeOver) }
        let end: HTTP1ClientLayer.SentEnd
        do {
            end = try layer.sendEnd(trailers: trailers)
        } catch {
            throw TransportError(error)
        }
        if end.halfClose { channel.shutdownWrite() }
        if !end.bytes.isEmpty { channel.write(end.bytes) }
        stream.outboundEnded()
        if end.completion == .reusable { schedulePump() }
        complete(end.completion, inStep: false)
        return end.trailers
    }
}
