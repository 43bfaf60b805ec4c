internal import CEpoll
import Dispatch
import Glibc

/// A TCP connection on a non-blocking socket, registered with its event
/// loop's `EventPoller` (edge-triggered, once, for input, output and hang-up).
///
/// Life cycle: a connection comes from `Listener` or `Connection.connect`
/// unstarted; `start(_:)` installs the handler and begins reading. From then
/// on the handler receives `ConnectionEvent`s on `loop`, ending with exactly
/// one `.closed`. A started connection keeps itself alive until `.closed`
/// (the poller's registration holds it), so owners need not retain it. A connection that is
/// never started must be closed or dropped; dropping it closes the descriptor.
///
/// Reading: chunks are delivered as they arrive, read until the socket would
/// block (up to 256 KiB per turn, then the loop serves others first).
/// `pauseReading()` stops reading (no system call: input announced meanwhile
/// is remembered and read on resuming), so the kernel buffer fills and TCP
/// flow control pushes back on the peer.
///
/// Writing: `write(_:)` queues and returns at once; the chunks queued during
/// a loop turn are gathered into one `writev(2)` when the turn ends
/// (`EventLoop.runTurn`), or at once by `flushNow()` when a message is
/// complete. `isWritable` follows the `writeWatermarks`. After
/// `EAGAIN` the rest waits for the poller's output event (`awaitingWritable`).
///
/// Closing: `shutdownWrite()` sends FIN once the queue drains; `close()`
/// stops reading, drains, then closes; `abort()` drops the queue and resets.
/// Once the peer's EOF arrived and our write side is shut down, the connection
/// closes by itself. Teardown deregisters the socket at once and closes the
/// descriptor and delivers `.closed` on a later loop turn, never inside the
/// call that began it.
///
/// `@unchecked Sendable`: `loop`, `descriptor` and the addresses are
/// immutable; all other state is touched only on `loop` (each public method
/// says "called only on the loop" and checks it).
public final class Connection: @unchecked Sendable, CustomStringConvertible {
    /// Where the connection's state lives and its events are delivered.
    public let loop: EventLoop
    /// Our end of the connection.
    public let localAddress: SocketAddress
    /// The peer's end.
    public let remoteAddress: SocketAddress
    /// What carries the bytes: a socket (owned, closed exactly once by
    /// `finishClosing()` or `deinit`) or, on an embedded loop, memory.
    let backend: Backend

    /// Where the connection is in its life; see `Lifecycle`.
    var lifecycle = Lifecycle.idle
    /// Whether bytes are being read; see `ReadSide`.
    var readSide = ReadSide.reading
    /// Whether bytes may still be written; see `WriteSide`.
    var writeSide = WriteSide.open
    /// Bytes accepted by `write(_:)` and not yet taken by the kernel.
    var pending = PendingWrites()
    /// True while a flush is queued on the loop (at most one at a time).
    var flushScheduled = false
    /// True while a read continuation is queued on the loop (at most one at a time).
    var readScheduled = false
    /// True when the last read stopped before the socket said EAGAIN (paused
    /// mid-burst, budget spent, or input announced while paused), so bytes
    /// may wait that the edge-triggered poller will not announce again.
    var readStoppedEarly = false
    /// The poller's token for this socket, from `start(_:)` until teardown.
    var pollToken: UInt64?
    /// True after a write met a full kernel buffer, until the poller's output
    /// event let `flush` send the rest.
    var awaitingWritable = false
    /// Receives events; dropped after `.closed`, breaking any cycle through it.
    private var handler: ((ConnectionEvent) -> Void)?
    /// Takes bytes read in place of `.received`, lent from the loop's read
    /// buffer (see `start(_:lending:)`); dropped with `handler`.
    var lendingReceiver: ((UnsafeRawBufferPointer) -> Void)?
    /// Called first in every flush (the end of a turn, `flushNow()`, room
    /// announced after a full kernel buffer): an owner that holds bytes back
    /// to write them together writes them here (see `flushAtEndOfTurn()`).
    /// It may call `write(_:)` and `close()`; it must not deliver events of
    /// its own. Dropped with `handler`. Set only on the loop.
    public var beforeFlush: (() -> Void)?

    /// When producers should stop and resume writing. Called only on the loop;
    /// a change takes effect at the next write or flush.
    public var writeWatermarks = WriteWatermarks.default

    /// False once the pending bytes reached the high watermark, until they
    /// fall to the low one (announced by `.writable`). Read only on the loop.
    public internal(set) var isWritable = true

    /// Bytes queued by `write(_:)` that the kernel has not taken yet. Read only on the loop.
    public var pendingWriteByteCount: Int { pending.byteCount }

    /// Most bytes read per input event before yielding the loop.
    static let readBudgetPerEvent = 256 * 1024

    /// The socket's descriptor; nil for an in-memory connection.
    var descriptor: Int32? {
        guard case .socket(let descriptor) = backend else { return nil }
        return descriptor
    }

    /// What carries a connection's bytes (see `Connection+Backend.swift`).
    enum Backend {
        /// A non-blocking TCP socket registered with the loop's `EventPoller`.
        case socket(descriptor: Int32)
        /// An in-memory connection whose other end a test holds (embedded loops only).
        case memory(EmbeddedPeer)
    }

    /// The connection's life; the descriptor is open in every state but `closed`.
    enum Lifecycle {
        /// Made but not started: not registered yet.
        case idle
        /// Registered with the poller; events flow.
        case open
        /// Deregistered; the descriptor is closed and `.closed(error)`
        /// delivered on the next loop turn (`finishClosing`).
        case closing(error: WireError?)
        /// Descriptor closed, `.closed` delivered.
        case closed
    }

    /// The reading direction.
    enum ReadSide {
        /// Input is read as it is announced (once started).
        case reading
        /// Held by `pauseReading()`.
        case paused
        /// Finished: the peer's EOF arrived, or `close()` said no more.
        case ended
    }

    /// The writing direction.
    enum WriteSide {
        /// `write(_:)` accepted.
        case open
        /// `shutdownWrite()` or `close()` called; FIN goes out once `pending` drains.
        case shutdownAfterDrain
        /// FIN sent (or the connection is going away); nothing more is written.
        case shutDown
    }

    /// Adopts a connected, non-blocking socket. Turns on `TCP_NODELAY`. On a
    /// throw the caller still owns (and must close) `descriptor`.
    init(descriptor: Int32, loop: EventLoop, remoteAddress: SocketAddress) throws(WireError) {
        try Socket.setNoDelay(descriptor)
        self.localAddress = try Socket.localAddress(descriptor)
        self.backend = .socket(descriptor: descriptor)
        self.loop = loop
        self.remoteAddress = remoteAddress
    }

    /// An in-memory connection on an embedded loop, whose other end is
    /// `peer` (see `EmbeddedNetwork`).
    init(peer: EmbeddedPeer, loop: EventLoop, localAddress: SocketAddress, remoteAddress: SocketAddress) {
        self.backend = .memory(peer)
        self.loop = loop
        self.localAddress = localAddress
        self.remoteAddress = remoteAddress
    }

    deinit {
        // A started connection lives until closed (the poller holds it), so
        // only an unstarted one can get here with its descriptor open.
        if case .idle = lifecycle {
            releaseBackend()
        }
    }

    /// Installs `handler` and starts reading (unless paused before). Bytes
    /// written before `start` are flushed now. A connection closed before it
    /// was started never calls `handler`. Called only on the loop, once.
    public func start(_ handler: @escaping (ConnectionEvent) -> Void) {
        start(handler, lending: nil)
    }

    /// Like `start(_:)`, but bytes read go to `receiver` instead of coming as
    /// `.received` arrays: lent straight from the loop's read buffer, valid
    /// only during the call (the receiver copies what it keeps), never
    /// empty, in order, under the same rules as `.received` (pausing or
    /// closing inside stops the burst). Saves a copy and an allocation per
    /// read for an owner that consumes bytes in place (a TLS engine).
    /// Called only on the loop, once.
    public func start(_ handler: @escaping (ConnectionEvent) -> Void,
                      lending receiver: ((UnsafeRawBufferPointer) -> Void)?) {
        loop.preconditionOnLoop()
        switch lifecycle {
        case .idle: break
        case .closed: return  // closed before it was started: nothing to deliver
        case .open, .closing: preconditionFailure("Connection.start called twice")
        }
        self.handler = handler
        self.lendingReceiver = receiver
        lifecycle = .open
        do {
            try registerBackend()
        } catch {
            teardown(error)
            return
        }
        // Input already waiting is announced by the registration itself.
        if !pending.isEmpty || writeSide != .open { scheduleFlush() }
    }

    /// True until `close()`, `abort()` or a failure began tearing down; false
    /// once `.closed` is on its way. Read only on the loop.
    public var isOpen: Bool {
        switch lifecycle {
        case .idle, .open: return true
        case .closing, .closed: return false
        }
    }

    /// Graceful close: stops reading, sends what is queued, then closes
    /// (`.closed(nil)`, or the error if sending fails). A peer that never reads
    /// can stall this; follow with `abort()` after a timeout if that matters.
    /// Unread received bytes make the kernel send RST instead of FIN.
    /// Called only on the loop.
    public func close() {
        loop.preconditionOnLoop()
        if case .idle = lifecycle {
            teardown(nil)
            return
        }
        endReading()
        shutdownWrite()
        // After an earlier `shutdownWrite()` the FIN is already out: nothing will finish later.
        closeIfBothDirectionsFinished()
    }

    /// Hard close: drops queued bytes and resets the connection (RST, via
    /// `SO_LINGER` 0). Delivers `.closed(nil)`. Called only on the loop.
    public func abort() {
        loop.preconditionOnLoop()
        guard isOpen else { return }
        resetOnRelease()
        teardown(nil)
    }

    /// Closes for good once both directions are finished: the peer's EOF
    /// arrived (or `close()` stopped reading) and our FIN went out.
    func closeIfBothDirectionsFinished() {
        if case .ended = readSide, case .shutDown = writeSide {
            teardown(nil)
        }
    }

    /// Starts tearing down: deregisters the socket; the next loop turn closes
    /// the descriptor and delivers `.closed(error)`. Idempotent.
    func teardown(_ error: WireError?) {
        switch lifecycle {
        case .idle:
            releaseBackend()
            lifecycle = .closed
        case .open:
            pending.removeAll()
            readSide = .ended
            writeSide = .shutDown
            lifecycle = .closing(error: error)
            deregisterBackend()
            loop.execute { self.finishClosing() }
        case .closing, .closed:
            return
        }
    }

    /// Closes the descriptor and delivers `.closed`, a turn after `teardown`. Runs on the loop.
    private func finishClosing() {
        guard case .closing(let error) = lifecycle else { return }
        releaseBackend()
        lifecycle = .closed
        let handler = self.handler
        self.handler = nil
        lendingReceiver = nil
        beforeFlush = nil
        handler?(.closed(error))
    }

    /// `"Connection(127.0.0.1:50000 -> 127.0.0.1:8080)"`, for logs. Safe from any thread.
    public var description: String {
        "Connection(\(localAddress) -> \(remoteAddress))"
    }

    /// What the poller saw on the socket (`epoll` event bits), in a loop turn:
    /// input, hang-up or an error sends it to `readable()` (which holds it
    /// while reading is paused); output or an error resumes a write that met
    /// a full kernel buffer.
    func pollEvent(_ events: UInt32) {
        ready(input: events & intact_epoll_input_events != 0, output: events & intact_epoll_output_events != 0,
              shortReadDrains: events & intact_epoll_hangup_events == 0)
    }

    /// Input (or a hang-up) and output readiness, from the poller or an
    /// embedded peer, in a loop turn. `shortReadDrains`: see `readable`.
    func ready(input: Bool, output: Bool, shortReadDrains: Bool = false) {
        if input { readable(shortReadDrains: shortReadDrains) }
        if awaitingWritable, output {
            beforeFlush?()
            flush()
        }
    }

    /// Hands an event to the handler, if the connection still has one.
    func deliver(_ event: ConnectionEvent) {
        handler?(event)
    }
}
