import TLS

extension ChannelSecurityLayer {
    /// What one call asks the driver to do. The caller makes a fresh value
    /// (on its stack) per call and carries its fields out in the order they
    /// are declared: deadline, updateReading, send, shutdownWrite, close,
    /// event, later, then. An empty value asks for nothing.
    ///
    /// The order matters where the owner or the loop can see it: reading is
    /// shut before the owner hears of a ClientHello (a decision made inside
    /// that event must not reopen it early), and work for the next turn is
    /// queued after whatever the owner queued while handling the event.
    ///
    /// A call fills each field at most once in a way that matters: bytes to
    /// send accumulate in one buffer (the socket sees the same stream), and
    /// at most one owner event comes per call; what follows an event waits
    /// in `then`, because the owner may change the channel while handling it.
    public struct Output {
        /// Arm or cancel the handshake deadline.
        public var deadline: DeadlineChange?
        /// Apply `readGate` again, as it is after the whole call (with the owner's pause and the hold).
        public var updateReading = false
        /// Bytes for the socket (ciphertext under TLS). `nil`: nothing to
        /// write; an empty array still counts as a write (a plaintext
        /// `write([])` reaches the socket, as before).
        public var send: [UInt8]?
        /// Shut the socket's write side once the bytes queued are out.
        public var shutdownWrite = false
        /// Close or reset the socket, and stop the handshake deadline.
        public var close: Close?
        /// Tell the owner: `.clientHello`, `.established`, `.received` or `.readEOF`.
        public var event: ChannelEvent?
        /// Call `step(_:into:)` with this on the next loop turn.
        public var later: Step?
        /// Call `step(_:into:)` with this right after carrying out the rest.
        public var then: Step?

        public init() {}

        /// Adds bytes to send after those already there.
        mutating func appendSend(_ bytes: [UInt8]) {
            if send == nil { send = bytes } else { send! += bytes }
        }
    }

    /// A change to the handshake deadline.
    public enum DeadlineChange: Hashable, Sendable {
        /// (Re)start it: `handshakeDeadlinePassed` is due after this long.
        case arm(Duration)
        case cancel
    }

    /// How the socket ends.
    public enum Close: Hashable, Sendable {
        /// After the bytes queued; `reason` is nil for a clean close.
        case close(reason: TransportError?)
        /// At once, with a TCP reset.
        case reset(reason: TransportError?)

        /// The failure to report with `.closed` (the first one wins).
        public var reason: TransportError? {
            switch self {
            case .close(let reason), .reset(let reason): return reason
            }
        }
    }

    /// What happened to bytes the owner wrote.
    public enum WriteOutcome: Hashable, Sendable {
        /// Passed on: their bytes are in `Output.send` (under TLS, nothing may
        /// be there yet when no record is complete). The owner may write on
        /// while the socket is writable.
        case accepted
        /// Held until the channel is established.
        case queued
        /// Dropped: the channel is closing, shut for writing, or just failed.
        case refused
    }

    /// A piece of work that continues an earlier call; hand it back to `step(_:into:)`.
    public enum Step: Hashable, Sendable {
        /// Next turn after a plaintext start: report `.established(nil)`, then replay.
        case announcePlaintext
        /// Right after `.established(nil)`: report the bytes held back.
        case replay([UInt8])
        /// Right after the replay: reading follows the owner again.
        case reopenReading
        /// Next turn after a server `start`/`startTLS` with leftover: peek at it.
        case peekLeftover
        /// Next turn after a client `start`/`startTLS`: send the ClientHello.
        case startClientHandshake
        /// Next turn after `continueHandshake`: reopen reading and go on with the handshake.
        case resumeHandshakeAfterDecision
        /// Right after `.established` under TLS: application data that came with the last flight.
        case readAfterHandshake
        /// Right after decrypted bytes were reported: a failure or close_notify behind them.
        case checkReadEnd
    }
}
