import Synchronization
import TLS
import Wire

/// A byte stream over one `Wire.Connection`: plaintext, or TLS through a
/// `TLSEngine`, in the server or client role. Whatever the security, the
/// handler sees application bytes (`.received`) and writes them with `write`.
///
/// Life cycle: make it with an unstarted connection, then `start(_:)`. Events
/// follow on the connection's loop: for a TLS server, optionally
/// `.clientHello`; then `.established` (with the TLS details, or nil for
/// plaintext); then `.received`/`.readEOF`/`.writable`; and exactly one
/// `.closed` last. A started channel keeps itself alive until `.closed`.
///
/// A TLS server channel always reads the ClientHello itself before OpenSSL
/// does (`ClientHelloPeek`), so garbage, a plain HTTP request or an invalid
/// SNI fail with a precise error instead of OpenSSL's "wrong version number",
/// and `clientHello` is known to the owner. With `ClientHelloPolicy.ask` the
/// owner decides: `continueHandshake(with:)`, `passThrough()` (the peeked
/// bytes come back raw and the channel stays plaintext), or `close()`.
///
/// A plaintext channel can start TLS in place (`startTLS`), handing over the
/// bytes already read past the plaintext part (a forward proxy reads
/// `CONNECT host:443`, answers 200, then intercepts TLS on the same socket).
///
/// Writes before `.established` are queued and sent once it is.
///
/// `@unchecked Sendable`: `connection`, `id` and the addresses are immutable;
/// every other property is touched only on `loop` (each public method says
/// "called only on the loop" and checks it).
public final class ByteChannel: @unchecked Sendable {
    /// The TCP connection underneath.
    public let connection: Connection
    /// A process-wide unique number, for logs and records.
    public let id: UInt64
    /// Where events are delivered and state lives.
    public var loop: EventLoop { connection.loop }
    public var localAddress: SocketAddress { connection.localAddress }
    public var remoteAddress: SocketAddress { connection.remoteAddress }

    /// What the TLS handshake settled; nil for plaintext or until `.established`. Read only on the loop.
    public internal(set) var tlsInfo: TLSConnectionInfo?
    /// Server TLS: what the ClientHello said; nil before it arrived and for clients. Read only on the loop.
    public internal(set) var clientHello: ClientHelloSummary?

    /// Where the channel is; see `Phase`.
    var phase: Phase
    /// Receives events; dropped after `.closed`.
    var handler: ((ChannelEvent) -> Void)?
    /// The first failure, reported with `.closed`.
    var failure: TransportError?
    /// True between `pauseReading()` and `resumeReading()`.
    var pausedByOwner = false
    /// See `isHeld`.
    var held = false
    /// Writes made before the channel carried application data, sent when it does.
    var earlyWrites = EarlyWrites()
    /// Set once `.readEOF` was delivered, so it is delivered once.
    var readEnded = false
    /// The TLS handshake deadline, while one runs.
    var handshakeTimer: LoopTimer?

    /// The channel's life.
    enum Phase {
        /// Not started; the security to begin with.
        case unstarted(ChannelSecurity)
        /// Plaintext from the next loop turn, which delivers `.established(nil)`
        /// and then `replay` (bytes read before: a peeked ClientHello, leftover).
        /// Reading waits for that turn, so no received byte overtakes them.
        case startingPlaintext(replay: [UInt8])
        /// Application bytes pass as they are.
        case plaintext
        /// Server: collecting the ClientHello.
        case peeking(TLSServerSetup, seen: [UInt8])
        /// Server with `ClientHelloPolicy.ask`: the owner decides; reading is paused.
        case awaitingDecision(TLSServerSetup, seen: [UInt8])
        case handshaking(TLSEngine)
        /// TLS established: application bytes pass through the engine.
        case secured(TLSEngine)
        /// `close()`, `abort()` or a failure began; waiting for the connection's `.closed`.
        case closing
        case closed
    }

    /// Writes and a half-close asked for before the channel was established.
    struct EarlyWrites {
        var chunks: [[UInt8]] = []
        var byteCount = 0
        var shutdownRequested = false
    }

    /// Wraps an unstarted connection; nothing happens until `start(_:)`.
    public init(connection: Connection, security: ChannelSecurity) {
        self.connection = connection
        self.id = ByteChannel.nextID.add(1, ordering: .relaxed).newValue
        self.phase = .unstarted(security)
    }

    private static let nextID = Atomic<UInt64>(0)

    /// Installs `handler` and starts: a TLS client sends its ClientHello, a TLS
    /// server waits for one, a plaintext channel delivers `.established(nil)`
    /// on the next loop turn. Called only on the loop, once.
    public func start(_ handler: @escaping (ChannelEvent) -> Void) {
        loop.preconditionOnLoop()
        guard case .unstarted(let security) = phase else { preconditionFailure("ByteChannel.start called twice") }
        self.handler = handler
        connection.start { [self] event in connectionEvent(event) }
        begin(security, leftover: [])
    }

    /// Replaces the handler, for handing the channel from one layer to the
    /// next (an HTTP/1.1 connection to a tunnel after CONNECT). Called only on the loop.
    public func setHandler(_ handler: @escaping (ChannelEvent) -> Void) {
        loop.preconditionOnLoop()
        guard isOpen else { return }
        self.handler = handler
    }

    /// Starts TLS on an established plaintext channel. `leftover` holds the
    /// bytes already read that belong to the TLS stream (the start of the
    /// ClientHello or ServerHello). Resumes reading; `.established` follows
    /// with the TLS details. Called only on the loop.
    public func startTLS(_ security: ChannelSecurity, leftover: [UInt8] = []) {
        loop.preconditionOnLoop()
        guard case .plaintext = phase, !readEnded else {
            fail(.invalidState("startTLS needs an open plaintext channel"))
            return
        }
        pausedByOwner = false
        begin(security, leftover: leftover)
        applyReadState()
    }

    /// True until `close()`, `abort()` or a failure began. Read only on the loop.
    public var isOpen: Bool {
        switch phase {
        case .closing, .closed: return false
        default: return connection.isOpen
        }
    }

    /// True once application bytes flow (after `.established`). Read only on the loop.
    public var isEstablished: Bool {
        switch phase {
        case .plaintext, .secured: return true
        default: return false
        }
    }

    // MARK: Writing

    /// Queues application bytes (encrypted first under TLS) and returns
    /// `isWritable`: false means "stop until `.writable`". Bytes written before
    /// `.established` wait for it. After a close or `shutdownWrite()` the bytes
    /// are dropped and false is returned. Never calls back. Called only on the loop.
    @discardableResult
    public func write(_ bytes: [UInt8]) -> Bool {
        loop.preconditionOnLoop()
        switch phase {
        case .plaintext:
            return connection.write(bytes)
        case .secured(let engine):
            return writeSecured(bytes, engine)
        case .unstarted, .startingPlaintext, .peeking, .awaitingDecision, .handshaking:
            guard !earlyWrites.shutdownRequested else { return false }
            earlyWrites.chunks.append(bytes)
            earlyWrites.byteCount += bytes.count
            return true
        case .closing, .closed:
            return false
        }
    }

    /// Whether the owner may keep writing: the connection's pending bytes are
    /// below its high watermark (TLS records are handed to the connection as
    /// soon as they are made, so nothing waits inside the engine). Read only on the loop.
    public var isWritable: Bool {
        isEstablished ? connection.isWritable : isOpen
    }

    /// Bytes written and not yet taken by the kernel (ciphertext under TLS),
    /// plus writes waiting for `.established`. Read only on the loop.
    public var pendingWriteByteCount: Int {
        connection.pendingWriteByteCount + earlyWrites.byteCount
    }

    /// When writers should stop and resume; see `Connection.writeWatermarks`. Called only on the loop.
    public var writeWatermarks: WriteWatermarks {
        get { connection.writeWatermarks }
        set { connection.writeWatermarks = newValue }
    }

    // MARK: Reading

    /// Stops `.received` events (the connection stops reading, so TCP pushes
    /// back on the peer). At most the bytes of one read already decrypted may
    /// still arrive in the current turn. Called only on the loop.
    public func pauseReading() {
        loop.preconditionOnLoop()
        pausedByOwner = true
        applyReadState()
    }

    /// Undoes `pauseReading()`. Called only on the loop.
    public func resumeReading() {
        loop.preconditionOnLoop()
        pausedByOwner = false
        applyReadState()
    }

    /// Stops reading for a reason of the whole loop's (the recording's
    /// backpressure), apart from the owner's `pauseReading()`: the channel
    /// reads only when neither holds it. Called only on the loop.
    public var isHeld: Bool {
        get { held }
        set {
            loop.preconditionOnLoop()
            held = newValue
            applyReadState()
        }
    }

    /// Reads unless the owner paused, the channel is held, or a ClientHello decision is pending.
    func applyReadState() {
        switch phase {
        case .unstarted, .closing, .closed:
            return
        case .startingPlaintext, .awaitingDecision:
            connection.pauseReading()
        case .plaintext, .peeking, .handshaking, .secured:
            if pausedByOwner || held { connection.pauseReading() } else { connection.resumeReading() }
        }
    }

    // MARK: Closing

    /// Half-close: under TLS sends close_notify, then the TCP FIN once queued
    /// bytes are out; reading goes on. Before `.established` it happens right
    /// after the queued writes. Called only on the loop.
    public func shutdownWrite() {
        loop.preconditionOnLoop()
        switch phase {
        case .plaintext:
            connection.shutdownWrite()
        case .secured(let engine):
            engine.shutdown()
            flushOutbound(engine)
            connection.shutdownWrite()
        case .unstarted, .startingPlaintext, .peeking, .awaitingDecision, .handshaking:
            earlyWrites.shutdownRequested = true
        case .closing, .closed:
            return
        }
    }

    /// Graceful close: close_notify under TLS, queued bytes sent, then the
    /// socket closed; `.closed(nil)` follows. Called only on the loop.
    public func close() {
        loop.preconditionOnLoop()
        if case .secured(let engine) = phase {
            engine.shutdown()
            flushOutbound(engine)
        }
        endPhase()
        connection.close()
    }

    /// Hard close: drops queued bytes and resets the TCP connection (RST).
    /// `.closed(nil)` follows. Called only on the loop.
    public func abort() {
        loop.preconditionOnLoop()
        endPhase()
        connection.abort()
    }

    /// Records `error` as the reason (first one wins) and closes: gracefully
    /// when an alert waits to go out, so the peer learns why.
    func fail(_ error: TransportError) {
        if failure == nil { failure = error }
        switch phase {
        case .handshaking(let engine), .secured(let engine):
            flushOutbound(engine)
        default:
            break
        }
        endPhase()
        connection.close()
    }

    /// Moves to `.closing` (unless closed already) and stops the handshake timer.
    private func endPhase() {
        cancelHandshakeTimer()
        switch phase {
        case .closed: return
        default: phase = .closing
        }
    }

    // MARK: Connection events

    private func connectionEvent(_ event: ConnectionEvent) {
        switch event {
        case .received(let bytes):
            receive(bytes)
        case .readEOF:
            peerFinishedSending()
        case .writable:
            if isEstablished { deliver(.writable) }
        case .closed(let error):
            cancelHandshakeTimer()
            phase = .closed
            let reason = failure ?? error.map { .connection($0) }
            let handler = self.handler
            self.handler = nil
            handler?(.closed(reason))
        }
    }

    /// Every application byte delivered so far (after TLS): a client's
    /// progress, for the proxy's head timeout. Read only on the loop.
    public private(set) var receivedByteCount = 0

    /// Routes received bytes by phase.
    func receive(_ bytes: [UInt8]) {
        switch phase {
        case .plaintext:
            deliver(.received(bytes))
        case .startingPlaintext(let replay):
            phase = .startingPlaintext(replay: replay + bytes)
        case .peeking(let setup, let seen):
            peek(setup, seen: seen + bytes)
        case .awaitingDecision(let setup, let seen):
            phase = .awaitingDecision(setup, seen: seen + bytes)
        case .handshaking(let engine):
            engine.feed(bytes)
            advanceHandshake(engine)
        case .secured(let engine):
            engine.feed(bytes)
            readSecured(engine)
        case .unstarted, .closing, .closed:
            return
        }
    }

    /// The peer's FIN: ends reading, or fails a handshake that needed more.
    private func peerFinishedSending() {
        switch phase {
        case .plaintext, .startingPlaintext:
            deliverReadEnd(.endOfStream)
        case .secured:
            deliverReadEnd(.endOfStreamWithoutCloseNotify)
        case .peeking, .awaitingDecision, .handshaking:
            fail(.peerClosed(during: .tlsHandshake))
        case .unstarted, .closing, .closed:
            return
        }
    }

    func deliverReadEnd(_ end: ReadEnd) {
        guard !readEnded else { return }
        readEnded = true
        deliver(.readEOF(end))
    }

    /// Hands an event to the handler, if the channel still has one.
    func deliver(_ event: ChannelEvent) {
        if case .received(let bytes) = event { receivedByteCount += bytes.count }
        handler?(event)
    }

    /// Enters `.startingPlaintext`: reading pauses until the next loop turn
    /// announces the channel (`.established(nil)`, then `replay`), then
    /// follows the owner's wish again.
    func startPlaintext(replaying replay: [UInt8]) {
        phase = .startingPlaintext(replay: replay)
        applyReadState()
        loop.execute { [self] in
            guard case .startingPlaintext(let replay) = phase else { return }
            phase = .plaintext
            flushEarlyWrites()
            deliver(.established(nil))
            if case .plaintext = phase, !replay.isEmpty { deliver(.received(replay)) }
            applyReadState()
        }
    }

    /// Sends what was written before `.established`, then any half-close asked for.
    func flushEarlyWrites() {
        let early = earlyWrites
        earlyWrites = EarlyWrites()
        for chunk in early.chunks { write(chunk) }
        if early.shutdownRequested { shutdownWrite() }
    }
}
