import TLS

/// The state machine of one byte channel with no I/O: plaintext, or TLS in
/// the server or client role through a `TLSEngine`, with the ClientHello
/// peek, the owner's decision after it, writes queued until established,
/// `startTLS` in place and the handshake deadline. `ByteChannel` is its
/// driver: it feeds the socket's events and the owner's calls in, and carries
/// out the `Output` each call fills. Tests drive it with event → command
/// scripts and no socket.
///
/// Invariants:
/// - No I/O, no loop, no timer, no callback: every call only changes this
///   value and fills the `Output` it is given; the caller carries that out
///   in the field order `Output` documents.
/// - Application bytes flow only while `isEstablished` (`.plaintext` or
///   `.secured`); bytes written before are queued in `earlyWrites` and go
///   out, in order and before `.established` is delivered, once they can.
/// - Received bytes are never reordered: bytes peeked or carried over
///   (`leftover`, a passed-through ClientHello) reach the engine or the
///   owner before anything received later, because the phases that hold
///   them (`.startingPlaintext`, `.awaitingDecision`) shut reading
///   (`readGate`) and append what still arrives.
/// - `.readEOF` is reported at most once; after `.closing` nothing but
///   `connectionClosed()` changes the phase.
/// - The secured phase allocates nothing per event beyond the byte buffers
///   themselves: `Output` is a value the caller keeps on its stack, and a
///   follow-up (`Output.then`) is a case of `Step`, not a closure.
public struct ChannelSecurityLayer {
    /// Where the channel is.
    enum Phase {
        /// Not started; the security to begin with.
        case unstarted(ChannelSecurity)
        /// Plaintext from the next loop turn (`Step.announcePlaintext`), which
        /// reports `.established(nil)` and then `replay` (bytes read before:
        /// a peeked ClientHello, leftover). Reading is shut until then.
        case startingPlaintext(replay: [UInt8])
        /// Application bytes pass as they are.
        case plaintext
        /// Server: collecting the ClientHello.
        case peeking(TLSServerSetup, seen: [UInt8])
        /// Server with `ClientHelloPolicy.ask`: the owner decides; reading is shut.
        case awaitingDecision(TLSServerSetup, seen: [UInt8])
        case handshaking(TLSEngine)
        /// TLS established: application bytes pass through the engine.
        case secured(TLSEngine)
        /// A close, reset or failure was asked for; waiting for the socket's close.
        case closing
        case closed
    }

    /// Writes and a half-close asked for before the channel was established.
    struct EarlyWrites {
        var chunks: [[UInt8]] = []
        var byteCount = 0
        var shutdownRequested = false
    }

    var phase: Phase
    /// Writes made before the channel carried application data, sent when it does.
    var earlyWrites = EarlyWrites()
    /// Set once `.readEOF` was reported, so it is reported once.
    var readEnded = false

    /// What the TLS handshake settled; nil for plaintext or until `.established`.
    public internal(set) var tlsInfo: TLSConnectionInfo?
    /// Server TLS: what the ClientHello said; nil before it arrived and for clients.
    public internal(set) var clientHello: ClientHelloSummary?

    /// A layer that will begin with `security` on `start(into:)`.
    public init(security: ChannelSecurity) {
        phase = .unstarted(security)
    }

    // MARK: What the driver asks

    /// True until `start(into:)`.
    public var isUnstarted: Bool {
        if case .unstarted = phase { return true }
        return false
    }

    /// True once application bytes flow (plaintext, or TLS after the handshake).
    public var isEstablished: Bool {
        switch phase {
        case .plaintext, .secured: return true
        default: return false
        }
    }

    /// True while a write would be encrypted at once (TLS established, no
    /// close_notify of ours sent): the driver may then hold small writes of
    /// one loop turn back and hand them over together, as one record.
    public var encryptsWrites: Bool {
        guard case .secured(let engine) = phase else { return false }
        switch engine.state {
        case .established, .closeNotifyReceived: return true
        case .handshaking, .closeNotifySent, .closed, .failed: return false
        }
    }

    /// The engine while TLS carries application bytes; nil otherwise.
    var securedEngine: TLSEngine? {
        guard case .secured(let engine) = phase else { return nil }
        return engine
    }

    /// True once a close, reset or failure was asked for (or the socket closed).
    public var isEnding: Bool {
        switch phase {
        case .closing, .closed: return true
        default: return false
        }
    }

    /// Bytes written before `.established` and still queued.
    public var earlyWriteByteCount: Int { earlyWrites.byteCount }

    /// What the phase lets the driver do about reading.
    public enum ReadGate: Hashable, Sendable {
        /// Leave the socket's reading as it is (not started, or closing).
        case leaveAlone
        /// Do not read, whatever the owner wants: bytes held back must go first,
        /// or the owner has a ClientHello to decide on.
        case shut
        /// Read unless the owner paused or the channel is held.
        case ownerDecides
    }

    /// See `ReadGate`. The driver applies it after `Output.updateReading`.
    public var readGate: ReadGate {
        switch phase {
        case .unstarted, .closing, .closed: return .leaveAlone
        case .startingPlaintext, .awaitingDecision: return .shut
        case .plaintext, .peeking, .handshaking, .secured: return .ownerDecides
        }
    }

    // MARK: Starting

    /// Begins with the security given at init: a TLS client's handshake starts
    /// on the next turn, a TLS server waits for a ClientHello, a plaintext
    /// channel is announced on the next turn. Call once.
    public mutating func start(into output: inout Output) {
        guard case .unstarted(let security) = phase else { preconditionFailure("ChannelSecurityLayer.start called twice") }
        begin(security, leftover: [], into: &output)
    }

    /// Starts TLS on an established plaintext channel whose peer has not
    /// finished sending. `leftover` holds the bytes already read that belong
    /// to the TLS stream. Returns false (and fails the channel) otherwise.
    @discardableResult
    public mutating func startTLS(_ security: ChannelSecurity, leftover: [UInt8], into output: inout Output) -> Bool {
        guard case .plaintext = phase, !readEnded else {
            fail(.invalidState("startTLS needs an open plaintext channel"), into: &output)
            return false
        }
        begin(security, leftover: leftover, into: &output)
        return true
    }

    /// Enters `security`'s first phase. `leftover` is processed before anything read later.
    mutating func begin(_ security: ChannelSecurity, leftover: [UInt8], into output: inout Output) {
        switch security {
        case .plaintext:
            startPlaintext(replaying: leftover, into: &output)
        case .tlsServer(let setup):
            phase = .peeking(setup, seen: leftover)
            output.deadline = .arm(setup.handshakeTimeout)
            if !leftover.isEmpty { output.later = .peekLeftover }
        case .tlsClient(let setup):
            let engine: TLSEngine
            do {
                engine = try TLSEngine(context: setup.context, serverName: setup.serverName)
            } catch {
                fail(.tlsHandshake(error), into: &output)
                return
            }
            engine.feed(leftover)
            phase = .handshaking(engine)
            output.deadline = .arm(setup.handshakeTimeout)
            output.later = .startClientHandshake
        }
    }

    /// Enters `.startingPlaintext`: reading is shut until the next turn
    /// announces the channel (`.established(nil)`, then `replay`).
    mutating func startPlaintext(replaying replay: [UInt8], into output: inout Output) {
        phase = .startingPlaintext(replay: replay)
        output.updateReading = true
        output.later = .announcePlaintext
    }

    // MARK: Owner's calls

    /// Application bytes to send: passed as they are, encrypted, queued until
    /// established, or dropped after a close or `shutdownWrite`.
    public mutating func write(_ bytes: [UInt8], into output: inout Output) -> WriteOutcome {
        switch phase {
        case .plaintext:
            output.appendSend(bytes)
            return .accepted
        case .secured(let engine):
            return writeSecured(bytes, engine, into: &output)
        case .unstarted, .startingPlaintext, .peeking, .awaitingDecision, .handshaking:
            guard !earlyWrites.shutdownRequested else { return .refused }
            earlyWrites.chunks.append(bytes)
            earlyWrites.byteCount += bytes.count
            return .queued
        case .closing, .closed:
            return .refused
        }
    }

    /// Half-close: close_notify under TLS, then the socket's write side.
    /// Before established it happens right after the queued writes.
    public mutating func shutdownWrite(into output: inout Output) {
        switch phase {
        case .plaintext:
            output.shutdownWrite = true
        case .secured(let engine):
            engine.shutdown()
            flushOutbound(engine, into: &output)
            output.shutdownWrite = true
        case .unstarted, .startingPlaintext, .peeking, .awaitingDecision, .handshaking:
            earlyWrites.shutdownRequested = true
        case .closing, .closed:
            return
        }
    }

    /// Graceful close: close_notify under TLS, then the socket closed after its queued bytes.
    public mutating func close(into output: inout Output) {
        if case .secured(let engine) = phase {
            engine.shutdown()
            flushOutbound(engine, into: &output)
        }
        endPhase()
        output.close = .close(reason: nil)
    }

    /// Hard close: the socket reset, queued bytes dropped.
    public mutating func abort(into output: inout Output) {
        endPhase()
        output.close = .reset(reason: nil)
    }

    /// Flushes what the engine has to say, then closes with `error` as the reason.
    mutating func fail(_ error: TransportError, into output: inout Output) {
        switch phase {
        case .handshaking(let engine), .secured(let engine):
            flushOutbound(engine, into: &output)
        default:
            break
        }
        endPhase()
        output.close = .close(reason: error)
    }

    /// Moves to `.closing` unless closed already.
    private mutating func endPhase() {
        switch phase {
        case .closed: return
        default: phase = .closing
        }
    }

    // MARK: Socket events

    /// Bytes read from the socket, routed by phase. Bytes held back (replay,
    /// peeked) grow in place: the phase is parked at `.closing` while its
    /// payload is extended, so the array has one owner and is not copied.
    public mutating func receive(_ bytes: [UInt8], into output: inout Output) {
        switch phase {
        case .plaintext:
            output.event = .received(bytes)
        case .startingPlaintext(var replay):
            phase = .closing
            replay += bytes
            phase = .startingPlaintext(replay: replay)
        case .peeking(let setup, var seen):
            phase = .closing
            seen += bytes
            peek(setup, seen: seen, into: &output)
        case .awaitingDecision(let setup, var seen):
            phase = .closing
            seen += bytes
            phase = .awaitingDecision(setup, seen: seen)
        case .handshaking(let engine):
            engine.feed(bytes)
            advanceHandshake(engine, into: &output)
        case .secured(let engine):
            engine.feed(bytes)
            readSecured(engine, into: &output)
        case .unstarted, .closing, .closed:
            return
        }
    }

    /// Bytes read from the socket, lent for the duration of the call (the
    /// loop's read buffer): under TLS the engine reads them in place, and
    /// keeps a copy only of what it left unread; in other phases they become
    /// an array as `receive(_:into:)` takes. Nothing keeps `bytes` after the
    /// call: `output` holds only arrays of its own.
    public mutating func receive(lent bytes: UnsafeRawBufferPointer, into output: inout Output) {
        switch phase {
        case .handshaking(let engine):
            engine.withLentInbound(bytes) { advanceHandshake(engine, into: &output) }
        case .secured(let engine):
            engine.withLentInbound(bytes) { readSecured(engine, into: &output) }
        case .plaintext, .startingPlaintext, .peeking, .awaitingDecision:
            receive(Array(bytes), into: &output)
        case .unstarted, .closing, .closed:
            return
        }
    }

    /// The peer's FIN: ends reading, or fails a handshake that needed more.
    public mutating func readEOF(into output: inout Output) {
        switch phase {
        case .plaintext, .startingPlaintext:
            endReading(.endOfStream, into: &output)
        case .secured:
            endReading(.endOfStreamWithoutCloseNotify, into: &output)
        case .peeking, .awaitingDecision, .handshaking:
            fail(.peerClosed(during: .tlsHandshake), into: &output)
        case .unstarted, .closing, .closed:
            return
        }
    }

    /// The socket is closed; nothing more happens.
    public mutating func connectionClosed() {
        phase = .closed
    }

    /// The handshake deadline passed: before `.established` the socket is reset
    /// with `.timeout(.tlsHandshake)`; later it is ignored.
    public mutating func handshakeDeadlinePassed(into output: inout Output) {
        switch phase {
        case .peeking, .awaitingDecision, .handshaking:
            endPhase()
            output.close = .reset(reason: .timeout(.tlsHandshake))
        case .unstarted, .startingPlaintext, .plaintext, .secured, .closing, .closed:
            return
        }
    }

    /// Reports the end of the peer's sending, once.
    mutating func endReading(_ end: ReadEnd, into output: inout Output) {
        guard !readEnded else { return }
        readEnded = true
        output.event = .readEOF(end)
    }

    // MARK: Steps

    /// Carries on with a step an earlier `Output` named (`then` at once,
    /// `later` on the next loop turn). Each step checks the phase first: the
    /// owner may have closed the channel meanwhile.
    public mutating func step(_ step: Step, into output: inout Output) {
        switch step {
        case .announcePlaintext:
            guard case .startingPlaintext(let replay) = phase else { return }
            phase = .plaintext
            flushEarlyWrites(into: &output)
            output.event = .established(nil)
            output.then = .replay(replay)
        case .replay(let replay):
            if case .plaintext = phase, !replay.isEmpty { output.event = .received(replay) }
            output.then = .reopenReading
        case .reopenReading:
            output.updateReading = true
        case .peekLeftover:
            guard case .peeking(let setup, let seen) = phase else { return }
            peek(setup, seen: seen, into: &output)
        case .startClientHandshake:
            guard case .handshaking(let engine) = phase else { return }
            advanceHandshake(engine, into: &output)
        case .resumeHandshakeAfterDecision:
            output.updateReading = true
            guard case .handshaking(let engine) = phase else { return }
            advanceHandshake(engine, into: &output)
        case .readAfterHandshake:
            guard case .secured(let engine) = phase else { return }
            readSecured(engine, into: &output)
        case .checkReadEnd:
            guard case .secured(let engine) = phase else { return }
            checkReadEnd(engine, into: &output)
        }
    }

    /// Sends what was written before established, then any half-close asked for.
    mutating func flushEarlyWrites(into output: inout Output) {
        let early = earlyWrites
        earlyWrites = EarlyWrites()
        for chunk in early.chunks { _ = write(chunk, into: &output) }
        if early.shutdownRequested { shutdownWrite(into: &output) }
    }
}
