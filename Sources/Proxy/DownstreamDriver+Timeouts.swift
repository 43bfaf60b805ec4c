import Evidence
import Transport
import Wire

/// The client connection's timeouts: the driver keeps one timer and does
/// what its `ConnectionDeadline` finds due.
///
/// The timer is made again only when it must fire sooner than it would: a
/// timer that fires early just checks again and re-arms for what is due
/// then. A keep-alive connection's exchanges move the instant due later
/// (start: the body timeout; end: the head check a quarter of the head
/// timeout on), so a busy connection keeps one timer for seconds instead
/// of making and cancelling a Dispatch timer (a manager-thread wake-up
/// each) twice per exchange.
extension DownstreamDriver {
    /// Asks the deadline what is due now; re-arms the timer or acts on an expiry.
    /// Called twice per exchange, only from the driver's own event handlers
    /// and its timer, which run on the loop (`start` checks that once), so it
    /// asks Dispatch nothing more.
    func checkDeadline() {
        if case .finished = owner { return cancelDeadlineTimer() }
        let now = loop.now
        switch deadline.check(at: now, receivedBytes: channel.receivedByteCount) {
        case .checkAgain(let instant):
            rearmDeadline(at: instant, now: now)
        case let .stalled(stalled, instant):
            // HTTP/2: only the stalled streams are reset; their siblings go on. Armed
            // first: an exchange finishing meanwhile re-checks (and re-arms) itself.
            rearmDeadline(at: instant, now: now)
            for exchange in stalled {
                exchanges[exchange]?.client.reset(code: .cancel)
                feed(.exchange(exchange, .clientGone(bodyTimedOut)))
            }
        case .expired(.head):
            cancelDeadlineTimer()
            let seconds = Int(deadline.timeouts.head.components.seconds)
            if let server = httpConnection { server.requestHeadTimedOut(after: seconds) } else { close() }
        case .expired(.idle):
            cancelDeadlineTimer()
            close()
        case .expired(.body):
            cancelDeadlineTimer()
            feed(.connectionClosed(bodyTimedOut))
            for streams in exchanges.values { streams.abandon() }
            abort()
        }
    }

    /// Makes sure the timer fires by `instant`: one already armed for then
    /// or sooner stays.
    private func rearmDeadline(at instant: ContinuousClock.Instant, now: ContinuousClock.Instant) {
        if let armed = deadlineTimer, armed.due <= instant { return }
        deadlineTimer?.timer.cancel()
        let delay = max(.milliseconds(1), instant - now)
        let timer = loop.schedule(after: delay) { [weak self] in
            guard let self else { return }
            deadlineTimer = nil
            checkDeadline()
        }
        deadlineTimer = (timer, now + delay)
    }

    /// Stops the timer: the connection expired or is finished.
    func cancelDeadlineTimer() {
        deadlineTimer?.timer.cancel()
        deadlineTimer = nil
    }

    /// Why an exchange that moved no body byte for `--body-timeout` broke.
    private var bodyTimedOut: ProxyError {
        ProxyError(.timeout, at: .downstream,
                   "no body byte moved for \(deadline.timeouts.body.components.seconds) s (--body-timeout)",
                   status: .connectionTimeout)
    }
}
