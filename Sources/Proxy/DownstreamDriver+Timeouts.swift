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
            deadlineTimer = loop.schedule(after: max(.milliseconds(1), instant - now)) { [weak self] in
                self?.checkDeadline()
            }
        case .expired(.head):
            let seconds = Int(deadline.timeouts.head.components.seconds)
            if case .serving(let server) = phase { server.requestHeadTimedOut(after: seconds) } else { close() }
        case .expired(.idle):
            close()
        case .expired(.body):
            let seconds = deadline.timeouts.body.components.seconds
            feed(.connectionClosed(ProxyError(.timeout, at: "downstream",
                                              "no body byte moved for \(seconds) s (--body-timeout)",
                                              status: .connectionTimeout)))
            for streams in exchanges.values { streams.abandon() }
            switch phase {
            case .serving(let server), .handshaking(let server), .openingTunnel(let server): server.abort()
            case .peeking, .tunnelling: channel.abort()
            case .finished: break
            }
        }
    }
}
