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
/// Writes before `.established` are queued and sent once it is. Under TLS,
/// small writes of one loop turn are held back (`heldPlaintext`) and
/// encrypted together when the connection flushes (`Connection.beforeFlush`):
/// a response's head and body go out as one TLS record instead of two (one
/// `SSL_write_ex` less per proxied request, about 8k instructions).
///
/// The TLS and phase logic lives in `ChannelSecurityLayer`, which does no
/// I/O; this class is its driver: it feeds the connection's events and the
/// owner's calls into the layer and carries out the `Output` each returns
/// (socket writes, events for the handler, the handshake timer, reading).
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
    public var tlsInfo: TLSConnectionInfo? { layer.tlsInfo }
    /// Server TLS: what the ClientHello said; nil before it arrived and for clients. Read only on the loop.
    public var clientHello: ClientHelloSummary? { layer.clientHello }

    /// The channel's state machine: phase, engine, queued writes.
    var layer: ChannelSecurityLayer
    /// Receives events; dropped after `.closed`.
    var receiver = ChannelReceiver.none
    /// The first failure, reported with `.closed`.
    var failure: TransportError?
    /// True between `pauseReading()` and `resumeReading()`.
    var pausedByOwner = false
    /// See `isHeld`.
    var held = false
    /// The TLS handshake deadline, while one runs.
    var handshakeTimer: LoopTimer?
    /// Plaintext written during this turn and not yet encrypted: at most
    /// `holdLimit` bytes, only while `layer.encryptsWrites`. Sealed
    /// (`sealHeldPlaintext`) before anything that must follow it: the
    /// connection's flush, a larger write, a half-close or close.
    var heldPlaintext: [UInt8] = []

    /// Most plaintext held back: one TLS record's worth.
    static let holdLimit = 16 * 1024

    /// Whether the engine's record buffers are kept between records (TLS
    /// only, from `.established` with TLS details on; see `RecordBufferPolicy`).
    var recordBuffers = RecordBufferPolicy()
    /// True once TLS carries application bytes: only then are reads counted.
    var countsRecordReads = false
    /// The idle check armed while `recordBuffers.keeping`.
    var recordBufferTimer: LoopTimer?

    /// Wraps an unstarted connection; nothing happens until `start(_:)`.
    public init(connection: Connection, security: ChannelSecurity) {
        self.connection = connection
        self.id = ByteChannel.nextID.add(1, ordering: .relaxed).newValue
        self.layer = ChannelSecurityLayer(security: security)
    }

    private static let nextID = Atomic<UInt64>(0)

    /// Installs `handler` and starts: a TLS client sends its ClientHello, a TLS
    /// server waits for one, a plaintext channel delivers `.established(nil)`
    /// on the next loop turn. Called only on the loop, once.
    public func start(_ handler: @escaping (ChannelEvent) -> Void) {
        start(.closure(handler))
    }

    /// Starts with an HTTP connection as the handler, called directly. Called only on the loop, once.
    func start(owner: HTTPConnection) {
        start(.http(owner))
    }

    private func start(_ receiver: ChannelReceiver) {
        loop.preconditionOnLoop()
        precondition(layer.isUnstarted, "ByteChannel.start called twice")
        self.receiver = receiver
        connection.start({ [self] event in connectionEvent(event) },
                         lending: { [self] bytes in lentBytes(bytes) })
        connection.beforeFlush = { [weak self] in self?.sealHeldPlaintext() }
        var output = ChannelSecurityLayer.Output()
        layer.start(into: &output)
        perform(output)
    }

    /// Replaces the handler, for handing the channel from one layer to the
    /// next (an HTTP/1.1 connection to a tunnel after CONNECT). Called only on the loop.
    public func setHandler(_ handler: @escaping (ChannelEvent) -> Void) {
        loop.preconditionOnLoop()
        guard isOpen else { return }
        receiver = .closure(handler)
    }

    /// Hands the channel to an HTTP connection, called directly (see `setHandler`). Called only on the loop.
    func setOwner(_ owner: HTTPConnection) {
        loop.preconditionOnLoop()
        guard isOpen else { return }
        receiver = .http(owner)
    }

    /// Starts TLS on an established plaintext channel. `leftover` holds the
    /// bytes already read that belong to the TLS stream (the start of the
    /// ClientHello or ServerHello). Resumes reading; `.established` follows
    /// with the TLS details. Called only on the loop.
    public func startTLS(_ security: ChannelSecurity, leftover: [UInt8] = []) {
        loop.preconditionOnLoop()
        var output = ChannelSecurityLayer.Output()
        let started = layer.startTLS(security, leftover: leftover, into: &output)
        if started { pausedByOwner = false }
        perform(output)
        if started { applyReadState() }
    }

    /// True until `close()`, `abort()` or a failure began. Read only on the loop.
    public var isOpen: Bool {
        layer.isEnding ? false : connection.isOpen
    }

    /// True once application bytes flow (after `.established`). Read only on the loop.
    public var isEstablished: Bool {
        layer.isEstablished
    }

    // MARK: Writing

    /// Queues application bytes (encrypted first under TLS) and returns
    /// `isWritable`: false means "stop until `.writable`". Bytes written before
    /// `.established` wait for it. After a close or `shutdownWrite()` the bytes
    /// are dropped and false is returned. Never calls back. Called only on the loop.
    @discardableResult
    public func write(_ bytes: [UInt8]) -> Bool {
        loop.preconditionOnLoop()
        if layer.encryptsWrites, !bytes.isEmpty, heldPlaintext.count + bytes.count <= ByteChannel.holdLimit {
            if heldPlaintext.isEmpty {
                heldPlaintext = bytes
                connection.flushAtEndOfTurn()
            } else {
                heldPlaintext += bytes
            }
            return connection.isWritable
        }
        sealHeldPlaintext()
        var output = ChannelSecurityLayer.Output()
        let outcome = layer.write(bytes, into: &output)
        let writable = perform(output)
        switch outcome {
        case .accepted: return writable
        case .queued: return true
        case .refused: return false
        }
    }

    /// Sends what is written so far now rather than when the loop turn ends
    /// (see `Connection.flushNow`): for a message that is complete. Plaintext
    /// held back is encrypted first (the connection's `beforeFlush`), so all
    /// of it goes. Never calls back. Called only on the loop.
    public func flushNow() {
        connection.flushNow()
    }

    /// Whether the owner may keep writing: the connection's pending bytes are
    /// below its high watermark (TLS records are handed to the connection as
    /// soon as they are made, so nothing waits inside the engine; at most one
    /// record's plaintext waits for the end of the turn). Read only on the loop.
    public var isWritable: Bool {
        isEstablished ? connection.isWritable : isOpen
    }

    /// Bytes written and not yet taken by the kernel (ciphertext under TLS),
    /// plus writes waiting for `.established`. Read only on the loop.
    public var pendingWriteByteCount: Int {
        connection.pendingWriteByteCount + layer.earlyWriteByteCount + heldPlaintext.count
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

    /// Reads unless the owner paused, the channel is held, or the layer shuts reading.
    func applyReadState() {
        switch layer.readGate {
        case .leaveAlone:
            return
        case .shut:
            connection.pauseReading()
        case .ownerDecides:
            if pausedByOwner || held { connection.pauseReading() } else { connection.resumeReading() }
        }
    }

    // MARK: Closing

    /// Half-close: under TLS sends close_notify, then the TCP FIN once queued
    /// bytes are out; reading goes on. Before `.established` it happens right
    /// after the queued writes. Called only on the loop.
    public func shutdownWrite() {
        loop.preconditionOnLoop()
        sealHeldPlaintext()
        var output = ChannelSecurityLayer.Output()
        layer.shutdownWrite(into: &output)
        perform(output)
    }

    /// Graceful close: close_notify under TLS, queued bytes sent, then the
    /// socket closed; `.closed(nil)` follows. Called only on the loop.
    public func close() {
        loop.preconditionOnLoop()
        sealHeldPlaintext()
        var output = ChannelSecurityLayer.Output()
        layer.close(into: &output)
        perform(output)
    }

    /// Hard close: drops queued bytes and resets the TCP connection (RST).
    /// `.closed(nil)` follows. Called only on the loop.
    public func abort() {
        loop.preconditionOnLoop()
        heldPlaintext = []
        var output = ChannelSecurityLayer.Output()
        layer.abort(into: &output)
        perform(output)
    }

    // MARK: Connection events

    private func connectionEvent(_ event: ConnectionEvent) {
        var output = ChannelSecurityLayer.Output()
        switch event {
        case .received:
            // `start` gives the connection a lending receiver (`lentBytes`), so its reads
            // never arrive as arrays.
            preconditionFailure("a ByteChannel's reads are lent, never delivered as .received")
        case .readEOF:
            layer.readEOF(into: &output)
        case .writable:
            if isEstablished { deliver(.writable) }
            return
        case .closed(let error):
            heldPlaintext = []
            cancelHandshakeTimer()
            stopCountingRecordReads()
            layer.connectionClosed()
            let reason = failure ?? error.map { .connection($0) }
            let receiver = self.receiver
            self.receiver = .none
            receiver.deliver(.closed(reason))
            return
        }
        perform(output)
    }

    /// Bytes read, lent by the connection for this call only: the layer
    /// takes what it keeps (a TLS engine reads them in place).
    private func lentBytes(_ bytes: UnsafeRawBufferPointer) {
        var output = ChannelSecurityLayer.Output()
        layer.receive(lent: bytes, into: &output)
        perform(output)
    }

    /// Every application byte delivered so far (after TLS): a client's
    /// progress, for the proxy's head timeout. Read only on the loop.
    public private(set) var receivedByteCount = 0

    /// Hands an event to the handler, if the channel still has one.
    func deliver(_ event: ChannelEvent) {
        switch event {
        case .received(let bytes):
            receivedByteCount += bytes.count
            if countsRecordReads { noteRecordRead() }
        case .established(let details):
            countsRecordReads = details != nil
        default:
            break
        }
        receiver.deliver(event)
    }
}

/// Who takes a `ByteChannel`'s events. An HTTP connection, which owns the
/// channel for the most part of its life, is called directly, without a
/// closure between; any other owner (a tunnel relay, a dialer, a test) gives a closure.
enum ChannelReceiver {
    case none
    case http(HTTPConnection)
    case closure((ChannelEvent) -> Void)

    func deliver(_ event: ChannelEvent) {
        switch self {
        case .http(let connection): connection.channelEvent(event)
        case .closure(let handler): handler(event)
        case .none: break
        }
    }
}
