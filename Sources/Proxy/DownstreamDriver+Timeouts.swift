import Evidence
import Transport
import Wire

/// The client connection's timeouts: the driver keeps one timer and does
/// what its `ConnectionDeadline` finds due.
extension DownstreamDriver {
    /// Asks the deadline what is due now; re-arms the timer or acts on an expiry.
    func checkDeadline() {
        loop.preconditionOnLoop()
        deadlineTimer?.cancel()
        deadlineTimer = nil
        if case .finished = phase { return }
        let now = ContinuousClock.Instant.now
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
            let seconds = Int(deadline.timeouts.head.components.seconds)
            if case .serving(let server) = phase { server.requestHeadTimedOut(after: seconds) } else { close() }
        case .expired(.idle):
            close()
        case .expired(.body):
            feed(.connectionClosed(bodyTimedOut))
            for streams in exchanges.values { streams.abandon() }
            switch phase {
            case .serving(let server), .handshaking(let server), .openingTunnel(let server): server.abort()
            case .peeking, .tunnelling: channel.abort()
            case .finished: break
            }
        }
    }

    private func rearmDeadline(at instant: ContinuousClock.Instant, now: ContinuousClock.Instant) {
        deadlineTimer = loop.schedule(after: max(.milliseconds(1), instant - now)) { [weak self] in
            self?.checkDeadline()
        }
    }

    /// Why an exchange that moved no body byte for `--body-timeout` broke.
    private var bodyTimedOut: ProxyError {
        ProxyError(.timeout, at: "downstream",
                   "no body byte moved for \(deadline.timeouts.body.components.seconds) s (--body-timeout)",
                   status: .connectionTimeout)
    }
}
