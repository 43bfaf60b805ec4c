import Glibc

/// The test's end of an in-memory `Connection` on an embedded loop
/// (`EventLoop.embedded()`): what the test sends, the connection reads;
/// what the connection writes, the test reads. Made by `EmbeddedNetwork`
/// (a client connecting, or a dial the test accepts).
///
/// Semantics follow a TCP socket's: the connection reads until there is
/// nothing left (`EAGAIN`), sees EOF after `finishSending()`, fails with
/// `.connectionReset` after `reset()`; its writes fill `receiveWindow`
/// (unlimited unless set) and meet `EAGAIN` beyond it, until the test reads
/// (`read()`), which announces room, as the kernel would. So backpressure,
/// half-close and resets happen as on a socket, deterministically.
///
/// Nothing is delivered inside a call: `send`, `finishSending`, `reset` and
/// `read` queue the readiness they cause on the loop; `EventLoop.run()`
/// delivers it.
///
/// `@unchecked Sendable`: touched only on its loop's thread (an embedded
/// loop has one).
public final class EmbeddedPeer: @unchecked Sendable, CustomStringConvertible {
    /// The loop of the connection.
    public let loop: EventLoop
    /// The connection's address for its peer (our end's address).
    public let address: SocketAddress
    /// The connection, from its `start` until it is released (closed or
    /// reset): the peer keeps a started connection alive, as a poller
    /// registration does.
    private var connection: Connection?
    /// Bytes sent by the test that the connection has not read, from `inboundStart` on.
    private var inbound: [UInt8] = []
    private var inboundStart = 0
    /// True once the test finished sending: after `inbound` the connection reads EOF.
    private var sendingFinished = false
    /// True once the test reset the connection: its next read or write fails.
    private var isReset = false
    /// Bytes the connection wrote that the test has not read yet.
    private var unread: [UInt8] = []
    /// True when a write met a full window: reading makes room and announces it.
    private var writerWaiting = false
    /// The other end of an in-memory socket pair (`EmbeddedNetwork` dialling
    /// one of its own listeners): what this peer's connection writes is sent
    /// on to it (within its `receiveWindow`), and its FIN and reset too.
    /// Dropped once the connection is released and what it buffered went on.
    private var linked: EmbeddedPeer?

    /// Most bytes the connection's writes may leave unread before they meet
    /// `EAGAIN`; nil: no limit. Lower it to make the connection's peer a slow reader.
    public var receiveWindow: Int?
    /// True once the connection sent its FIN (`shutdownWrite`, `close`).
    public private(set) var receivedEOF = false
    /// True once the connection is closed (its descriptor would be released).
    public private(set) var isClosed = false
    /// True once the connection reset (`abort()`): RST instead of FIN.
    public private(set) var receivedReset = false

    init(loop: EventLoop, address: SocketAddress) {
        self.loop = loop
        self.address = address
    }

    public var description: String { "EmbeddedPeer(\(address))" }

    // MARK: The test's side

    /// Sends `bytes` to the connection (it reads them on the loop's next run).
    /// Dropped once the connection is closed or after `finishSending()`.
    public func send(_ bytes: [UInt8]) {
        loop.preconditionOnLoop()
        guard !bytes.isEmpty, !isClosed, !sendingFinished, !isReset else { return }
        inbound += bytes
        announce(input: true)
    }

    /// Sends `text`'s UTF-8.
    public func send(_ text: String) {
        send(Array(text.utf8))
    }

    /// Half-closes the test's side: once it has read what was sent, the connection reads EOF.
    public func finishSending() {
        loop.preconditionOnLoop()
        guard !sendingFinished else { return }
        sendingFinished = true
        announce(input: true)
    }

    /// Resets the connection: its next read or write fails with `ECONNRESET`.
    public func reset() {
        loop.preconditionOnLoop()
        guard !isReset else { return }
        isReset = true
        announce(input: true)
    }

    /// Takes every byte the connection wrote so far; announces room to a
    /// writer that met the `receiveWindow`.
    public func read() -> [UInt8] {
        loop.preconditionOnLoop()
        let bytes = unread
        unread = []
        if writerWaiting, !bytes.isEmpty {
            writerWaiting = false
            announce(input: false, output: true)
        }
        return bytes
    }

    /// Takes what the connection wrote, as text (UTF-8, invalid bytes replaced).
    public func readText() -> String {
        String(decoding: read(), as: UTF8.self)
    }

    /// Bytes the connection wrote that the test has not read.
    public var unreadByteCount: Int { unread.count }

    /// Bytes the test sent that the connection has not read (kernel-buffered, held back by a paused reader).
    public var unconsumedByteCount: Int { inbound.count - inboundStart }

    private func announce(input: Bool, output: Bool = false) {
        guard let connection else { return }
        loop.executeAfterOthers { connection.ready(input: input, output: output) }
    }

    // MARK: The connection's side (Connection+Backend)

    /// Makes `self` and `other` the two ends of one socket pair.
    func link(to other: EmbeddedPeer) {
        linked = other
        other.linked = self
    }

    /// A linked peer passes what its connection wrote on to the other end,
    /// as much as the other end's `receiveWindow` leaves room for (its
    /// socket buffer); the rest waits in `unread`, so the writer meets
    /// `EAGAIN` at its own window, until the other end's connection reads.
    private func forward() {
        guard let linked, !unread.isEmpty else { return }
        let room = linked.receiveWindow.map { max(0, $0 - linked.unconsumedByteCount) } ?? unread.count
        let taken = min(room, unread.count)
        guard taken > 0 else { return }
        linked.send(Array(unread.prefix(taken)))
        unread.removeFirst(taken)
        if writerWaiting {
            writerWaiting = false
            announce(input: false, output: true)
        }
        if receivedEOF, unread.isEmpty { passFIN() }
    }

    /// The connection's FIN reaches the other end once what it wrote before has.
    private func passFIN() {
        linked?.finishSending()
        if isClosed { linked = nil }
    }

    /// The connection started: announces what waits already.
    func attach(_ connection: Connection) {
        self.connection = connection
        if unconsumedByteCount > 0 || sendingFinished || isReset { announce(input: true) }
    }

    func connectionReads(into buffer: UnsafeMutableRawPointer, count: Int) -> Int {
        if isReset {
            errno = ECONNRESET
            return -1
        }
        let available = inbound.count - inboundStart
        guard available > 0 else {
            if sendingFinished { return 0 }
            errno = EAGAIN
            return -1
        }
        let taken = min(available, count)
        inbound.withUnsafeBytes { raw in
            buffer.copyMemory(from: raw.baseAddress! + inboundStart, byteCount: taken)
        }
        inboundStart += taken
        if inboundStart == inbound.count {
            inbound = []
            inboundStart = 0
        }
        // Room in this end's buffer: the other end of a socket pair may pass more on.
        linked?.forward()
        return taken
    }

    func connectionWrites(_ vectors: UnsafeBufferPointer<iovec>) -> Int {
        if isReset {
            errno = ECONNRESET
            return -1
        }
        var room = receiveWindow.map { max(0, $0 - unread.count) } ?? Int.max
        guard room > 0 else {
            writerWaiting = true
            errno = EAGAIN
            return -1
        }
        var taken = 0
        for vector in vectors where room > 0 {
            let count = min(vector.iov_len, room)
            unread.append(contentsOf: UnsafeRawBufferPointer(start: vector.iov_base, count: count))
            taken += count
            room -= count
        }
        forward()
        return taken
    }

    func connectionFinishedWriting() {
        receivedEOF = true
        if unread.isEmpty { passFIN() }
    }

    func connectionReset() {
        receivedReset = true
        linked?.reset()
    }

    func connectionReleased() {
        isClosed = true
        connection = nil
        // Closed without a FIN (a failure's teardown): the other end sees a reset, as over TCP.
        if !receivedEOF { linked?.reset() }
        // After a FIN, bytes still buffered for the other end go on to it, then the FIN (`forward`).
        if !receivedEOF || unread.isEmpty { linked = nil }
    }
}
