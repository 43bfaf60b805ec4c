/// How long a client connection may take over each thing it owes the proxy.
public struct ClientTimeouts: Hashable, Sendable {
    /// From the first byte of a request head to its end (`--head-timeout`); answered 408.
    public var head: Duration = .seconds(30)
    /// A keep-alive connection with no request in progress (`--idle-timeout`);
    /// closed (HTTP/2 with GOAWAY).
    public var idle: Duration = .seconds(120)
    /// No byte of any request or response body moved while an exchange is in
    /// progress (`--body-timeout`); the connection is cut and its exchanges
    /// recorded as broken.
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
/// arrived), `busy` (exchanges in progress: the body timeout measures time
/// since the last progress), `expired` (reported once; nothing after).
struct ConnectionDeadline {
    typealias Instant = ContinuousClock.Instant

    /// Which timeout ran out.
    enum Expiry: Hashable {
        case head, idle, body
    }

    /// What `check` found.
    enum Verdict: Hashable {
        /// Nothing is due; check again at this instant.
        case checkAgain(at: Instant)
        case expired(Expiry)
    }

    private enum State {
        /// No exchange since `since`; `bytesAtStart` were received by then;
        /// `headStarted` once more bytes were seen (a head is under way).
        case waiting(since: Instant, bytesAtStart: Int, headStarted: Instant?)
        case busy(exchanges: Int, lastProgress: Instant)
        case expired
    }

    let timeouts: ClientTimeouts
    private var state: State
    /// Whether bytes with no exchange start the head timeout: only once the
    /// connection serves HTTP/1.1 (before, a TLS handshake has its own timeout;
    /// HTTP/2 sends frames between requests, so only the idle timeout applies).
    private var watchesHeads = false

    init(timeouts: ClientTimeouts, now: Instant, receivedBytes: Int) {
        self.timeouts = timeouts
        state = .waiting(since: now, bytesAtStart: receivedBytes, headStarted: nil)
    }

    /// The connection serves HTTP (after its TLS handshake, if any): the idle
    /// wait starts again from here, and heads are watched when `watchHeads`.
    /// Bytes counted since the wait began still start a head (the first ones
    /// may arrive with the connection, before it is announced ready).
    mutating func connectionReady(at now: Instant, watchHeads: Bool) {
        watchesHeads = watchHeads
        if case .waiting(_, let bytesAtStart, _) = state {
            state = .waiting(since: now, bytesAtStart: bytesAtStart, headStarted: nil)
        }
    }

    /// A request head arrived complete: an exchange is in progress.
    mutating func exchangeStarted(at now: Instant) {
        switch state {
        case .waiting: state = .busy(exchanges: 1, lastProgress: now)
        case .busy(let count, _): state = .busy(exchanges: count + 1, lastProgress: now)
        case .expired: break
        }
    }

    /// Body bytes moved on some exchange (either direction).
    mutating func progress(at now: Instant) {
        if case .busy(let count, _) = state { state = .busy(exchanges: count, lastProgress: now) }
    }

    /// An exchange finished; with none left the connection waits again.
    mutating func exchangeFinished(at now: Instant, receivedBytes: Int) {
        guard case .busy(let count, _) = state else { return }
        state = count > 1 ? .busy(exchanges: count - 1, lastProgress: now)
                          : .waiting(since: now, bytesAtStart: receivedBytes, headStarted: nil)
    }

    /// What is due at `now`, given every byte received so far.
    mutating func check(at now: Instant, receivedBytes: Int) -> Verdict {
        switch state {
        case .expired:
            return .checkAgain(at: now + timeouts.idle)
        case .busy(_, let lastProgress):
            let due = lastProgress + timeouts.body
            return now >= due ? expire(.body) : .checkAgain(at: due)
        case .waiting(let since, let bytesAtStart, var headStarted):
            if watchesHeads, headStarted == nil, receivedBytes > bytesAtStart {
                // The bytes came at some point since the last check; counting from
                // now gives the client the benefit of the doubt.
                headStarted = now
                state = .waiting(since: since, bytesAtStart: bytesAtStart, headStarted: now)
            }
            if let headStarted {
                let due = headStarted + timeouts.head
                return now >= due ? expire(.head) : .checkAgain(at: min(due, now + checkInterval))
            }
            let due = since + timeouts.idle
            return now >= due ? expire(.idle) : .checkAgain(at: min(due, now + checkInterval))
        }
    }

    /// While waiting, how often to look for a head's first bytes: a quarter
    /// of the head timeout, so a head is cut at most 25% late.
    private var checkInterval: Duration { timeouts.head / 4 }

    private mutating func expire(_ expiry: Expiry) -> Verdict {
        state = .expired
        return .expired(expiry)
    }
}
