import HTTP

/// Paces one message's hook outputs: a `.delay` holds every later output
/// back until its timer fires; after a `.throttle` each body chunk goes out
/// in slices of a tenth of a second's worth of bytes, each followed by a
/// pause as long as the slice takes at that rate. Everything else passes
/// through in order.
///
/// A value inside its `ExchangeFlow`, on the exchange's loop only.
/// Invariant: at most one timer runs (`isWaiting`); while it does, `next()`
/// gives nothing.
struct MessagePacer<Head: Sendable & Hashable> {
    typealias Output = HookOutput<HTTPPart<Head>>

    /// What the flow does next.
    enum Step: Equatable {
        /// Carry out this output now.
        case act(Output)
        /// Start the message's timer; nothing more until it fires.
        case wait(Duration)
        /// Carry out this output, then start the timer.
        case actThenWait(Output, Duration)
    }

    /// Outputs not carried out yet, in order.
    private(set) var held: [Output] = []
    /// A timer runs; outputs wait for it.
    private(set) var isWaiting = false
    /// The rate set by a `.throttle`, for the rest of the message.
    private(set) var bytesPerSecond: Int?

    /// True while outputs wait or a timer runs: reading this message pauses.
    var isHolding: Bool { isWaiting || !held.isEmpty }

    /// Queues a hook chain's outputs behind the ones already held.
    mutating func hold(_ outputs: [Output]) {
        // Usually nothing is held: take the array as it is rather than copy it.
        if held.isEmpty { held = outputs } else { held += outputs }
    }

    /// The message's timer ran out.
    mutating func timerFired() {
        isWaiting = false
    }

    /// Drops what is held (the message was answered, cut or abandoned).
    mutating func discard() {
        held = []
    }

    /// The next step, or nil while a timer runs or nothing is held.
    mutating func next() -> Step? {
        while !isWaiting, !held.isEmpty {
            let output = held.removeFirst()
            switch output {
            case .delay(let duration):
                isWaiting = true
                return .wait(duration)
            case .throttle(let rate):
                bytesPerSecond = max(1, rate)
            case .forward(.body(let chunk)) where bytesPerSecond != nil && !chunk.isEmpty:
                let rate = bytesPerSecond ?? 1
                let slice = min(chunk.count, max(1, rate / 10))
                if slice < chunk.count { held.insert(.forward(.body(Array(chunk[slice...]))), at: 0) }
                isWaiting = true
                return .actThenWait(.forward(.body(Array(chunk.prefix(slice)))),
                                    .nanoseconds(Int64(slice) * 1_000_000_000 / Int64(rate)))
            default:
                return .act(output)
            }
        }
        return nil
    }
}

extension MessagePacer.Step {
    /// The output to carry out now, if any.
    var output: HookOutput<HTTPPart<Head>>? {
        switch self {
        case .act(let output), .actThenWait(let output, _): return output
        case .wait: return nil
        }
    }

    /// The timer to start after it, if any.
    var wait: Duration? {
        switch self {
        case .wait(let duration), .actThenWait(_, let duration): return duration
        case .act: return nil
        }
    }
}
