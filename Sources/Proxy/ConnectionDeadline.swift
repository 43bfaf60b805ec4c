/// How long a client connection may take over each thing it owes the proxy.
public struct ClientTimeouts: Hashable, Sendable {
    /// From the first byte of a request head to its end (`--head-timeout`); answered 408.
    public var head: Duration = .seconds(30)
    /// A keep-alive connection with no request in progress (`--idle-timeout`);
    /// closed (HTTP/2 with GOAWAY).
    public var idle: Duration = .seconds(120)
    /// No byte of any request or response body moved while an exchange is in
    /// progress (`--body-timeout`); HTTP/1.1 cuts the connection, HTTP/2
    /// resets the stalled stream; the exchange is recorded as broken.
    public var body: Duration = .seconds(60)

    public init(head: Duration = .seconds(30), idle: Duration = .seconds(120), body: Duration = .seconds(60)) {
        self.head = head
        self.idle = idle
        self.body = body
    }
}

/// The timer logic of one client connection, with no clock and no timer of
/// its own (sans-io): the driver reports what happened, with the time, and
/// asks `check(at:receivedBytes:)` what is due when the one timer it keeps
/// fires, re-arming it for the instant returned.
///
/// States: `waiting` (no exchange: idle, or a head under way once bytes
/// arrived), `busy` (exchanges in progress, each with the instant of its last
/// body progress), `expired` (reported once; nothing after). Over HTTP/1.1
/// progress counts for the connection (one exchange at a time) and a stall
/// expires it; over HTTP/2 each stream's progress is its own, and a stalled
/// stream is reported (`stalled`) and forgotten while its siblings go on.
///
/// Instants are kept as `Time`, the `Duration` since `origin`, a type of
/// fixed layout (not the resilient `ContinuousClock.Instant`:
/// Docs/performance.md#one-timer-source-per-loop).
struct ConnectionDeadline {
    typealias Instant = ContinuousClock.Instant
    /// An instant as the time since `origin`.
    private typealias Time = Duration

    /// Which timeout ran out.
    enum Expiry: Hashable {
        case head, idle, body
    }

    /// What `check` found.
    enum Verdict: Hashable {
        /// Nothing is due; check again at this instant.
        case checkAgain(at: Instant)
        case expired(Expiry)
        /// HTTP/2: these exchanges moved no body byte for the body timeout
        /// (reset them); the rest goes on, check again at `at`.
        case stalled([ExchangeID], checkAgainAt: Instant)
    }

    private enum State {
        /// No exchange since `since`; `bytesAtStart` were received by then;
        /// `headStarted` once more bytes were seen (a head is under way).
        case waiting(since: Time, bytesAtStart: Int, headStarted: Time?)
        /// Exchanges in progress: `lastProgress` is not empty.
        case busy
        case expired
    }

    let timeouts: ClientTimeouts
    /// The instant `Time` counts from: when the connection was accepted.
    private let origin: Instant
    private var state: State
    /// The last progress of each exchange in progress: not empty exactly
    /// while `state` is `busy` (emptied when it leaves it). Its storage is
    /// kept from one exchange to the next (a few words), so a keep-alive
    /// connection makes no table per request.
    private var lastProgress = ExchangeTable<Time>()
    /// Whether bytes with no exchange start the head timeout: only once the
    /// connection serves HTTP/1.1 (before, a TLS handshake has its own timeout;
    /// HTTP/2 sends frames between requests, so only the idle timeout applies).
    private var watchesHeads = false
    /// HTTP/2: each exchange's body timeout is its own.
    private var timesStreams = false

    init(timeouts: ClientTimeouts, now: Instant, receivedBytes: Int) {
        self.timeouts = timeouts
        origin = now
        state = .waiting(since: .zero, bytesAtStart: receivedBytes, headStarted: nil)
    }

    private func time(_ instant: Instant) -> Time { instant - origin }
    private func instant(_ time: Time) -> Instant { origin + time }

    /// The connection serves HTTP (after its TLS handshake, if any): the idle
    /// wait starts again from here; HTTP/1.1 (`http2` false) watches heads,
    /// HTTP/2 times each stream. Bytes counted since the wait began still
    /// start a head (the first ones may arrive with the connection, before it
    /// is announced ready).
    mutating func connectionReady(at now: Instant, http2: Bool) {
        watchesHeads = !http2
        timesStreams = http2
        if case .waiting(_, let bytesAtStart, _) = state {
            state = .waiting(since: time(now), bytesAtStart: bytesAtStart, headStarted: nil)
        }
    }

    /// A request head arrived complete: an exchange is in progress.
    mutating func exchangeStarted(_ exchange: ExchangeID, at now: Instant) {
        switch state {
        case .waiting, .busy:
            state = .busy
            lastProgress[exchange] = time(now)
        case .expired: break
        }
    }

    /// Body bytes moved on `exchange` (either direction); over HTTP/1.1 on the connection.
    mutating func progress(_ exchange: ExchangeID, at now: Instant) {
        guard case .busy = state else { return }
        if timesStreams {
            guard let index = lastProgress.index(forKey: exchange) else { return }
            lastProgress.values[index] = time(now)
        } else {
            touchAll(at: time(now))
        }
    }

    /// An exchange finished; with none left the connection waits again.
    mutating func exchangeFinished(_ exchange: ExchangeID, at now: Instant, receivedBytes: Int) {
        guard case .busy = state, let index = lastProgress.index(forKey: exchange) else { return }
        lastProgress.remove(at: index)
        if lastProgress.isEmpty {
            state = .waiting(since: time(now), bytesAtStart: receivedBytes, headStarted: nil)
        } else if !timesStreams {
            // HTTP/1.1: an exchange ending is progress on the connection.
            touchAll(at: time(now))
        }
    }

    /// What is due at `now`, given every byte received so far.
    mutating func check(at now: Instant, receivedBytes: Int) -> Verdict {
        let current = time(now)
        switch state {
        case .expired:
            return .checkAgain(at: now + timeouts.idle)
        case .busy:
            let oldest = lastProgress.values.min()!
            guard current >= oldest + timeouts.body else { return .checkAgain(at: instant(oldest + timeouts.body)) }
            guard timesStreams else { return expire(.body) }
            var stalled: [ExchangeID] = []
            var index = 0
            while index < lastProgress.count {
                if current >= lastProgress.values[index] + timeouts.body {
                    stalled.append(lastProgress.keys[index])
                    lastProgress.remove(at: index)
                } else {
                    index += 1
                }
            }
            if lastProgress.isEmpty {
                state = .waiting(since: current, bytesAtStart: receivedBytes, headStarted: nil)
                return .stalled(stalled, checkAgainAt: now + timeouts.idle)
            }
            return .stalled(stalled, checkAgainAt: instant(lastProgress.values.min()! + timeouts.body))
        case .waiting(let since, let bytesAtStart, var headStarted):
            if watchesHeads, headStarted == nil, receivedBytes > bytesAtStart {
                // The bytes came at some point since the last check; counting from
                // now gives the client the benefit of the doubt.
                headStarted = current
                state = .waiting(since: since, bytesAtStart: bytesAtStart, headStarted: current)
            }
            if let headStarted {
                let due = instant(headStarted + timeouts.head)
                return now >= due ? expire(.head) : .checkAgain(at: min(due, now + checkInterval))
            }
            let due = instant(since + timeouts.idle)
            return now >= due ? expire(.idle) : .checkAgain(at: min(due, now + checkInterval))
        }
    }

    /// Sets every exchange's last progress to `time`, in place.
    private mutating func touchAll(at time: Time) {
        for index in 0..<lastProgress.count { lastProgress.values[index] = time }
    }

    /// While waiting, how often to look for a head's first bytes: a quarter
    /// of the head timeout, so a head is cut at most 25% late.
    private var checkInterval: Duration { timeouts.head / 4 }

    private mutating func expire(_ expiry: Expiry) -> Verdict {
        state = .expired
        lastProgress.removeAll()
        return .expired(expiry)
    }
}
