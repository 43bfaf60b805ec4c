import Glibc

extension Connection {
    /// Queues `bytes` to send after everything queued before, and returns
    /// `isWritable`: false means "stop producing until `.writable`". Never
    /// blocks and never calls back; the bytes go out on the next loop turn.
    /// After `shutdownWrite()`, `close()` or teardown the bytes are dropped
    /// and false is returned. Called only on the loop.
    @discardableResult
    public func write(_ bytes: [UInt8]) -> Bool {
        loop.preconditionOnLoop()
        guard case .open = writeSide, isOpen else { return false }
        pending.append(bytes)
        if isWritable && pending.byteCount >= writeWatermarks.high {
            isWritable = false
        }
        // While awaiting the output event, the kernel is full: that event flushes.
        if case .open = lifecycle, !awaitingWritable {
            scheduleFlush()
        }
        return isWritable
    }

    /// Half-close: sends FIN once the queued bytes are out; reading goes on.
    /// Later writes are dropped. When the peer's EOF has arrived too, the
    /// connection closes (`.closed(nil)`). Called only on the loop.
    public func shutdownWrite() {
        loop.preconditionOnLoop()
        guard case .open = writeSide else { return }
        writeSide = .shutdownAfterDrain
        if case .open = lifecycle { scheduleFlush() }
    }

    /// Flushes at the end of the current loop turn, so writes made in one
    /// turn go out together in one `writev` with no work item queued; outside
    /// a turn (not expected: every handler runs in one) queues a flush instead.
    func scheduleFlush() {
        guard !flushScheduled else { return }
        flushScheduled = true
        if loop.isInTurn {
            loop.flushAtEndOfTurn(self)
        } else {
            loop.execute { self.endOfTurnFlush() }
        }
    }

    /// Flushes when the current turn ends (at once outside a turn) though
    /// nothing may be queued yet: for an owner holding bytes back until then,
    /// which `beforeFlush` writes. No-op once closing. Called only on the loop.
    public func flushAtEndOfTurn() {
        loop.preconditionOnLoop()
        guard case .open = lifecycle else { return }
        scheduleFlush()
    }

    /// The flush `scheduleFlush` promised. Runs on the loop.
    func endOfTurnFlush() {
        // Still marked scheduled: what `beforeFlush` writes joins this flush
        // instead of scheduling another.
        beforeFlush?()
        flushScheduled = false
        flush()
    }

    /// Sends the queued bytes (and what `beforeFlush` writes) now instead of
    /// when the turn ends: for a message that is complete, so the bookkeeping its turn still does
    /// (records, digests, the next request's setup) does not hold it back.
    /// Never calls back: a `.writable` it makes due, the shutdown after the
    /// drain and a failure's `.closed` come when the turn ends or later, as
    /// after `write(_:)`. No-op when nothing is queued or the kernel buffer
    /// is full (the output event sends the rest). Called only on the loop.
    public func flushNow() {
        loop.preconditionOnLoop()
        guard case .open = lifecycle, !awaitingWritable else { return }
        beforeFlush?()
        guard case .open = lifecycle, !pending.isEmpty else { return }
        guard writePending() else { return }
        if !pending.isEmpty { awaitingWritable = true }
    }

    /// Writes pending bytes until done or the kernel says `EAGAIN` (then the
    /// poller's output event calls again: `awaitingWritable`); sends FIN when
    /// a shutdown waits for the drain; announces `.writable` on crossing the
    /// low watermark. Runs on the loop, from a scheduled flush or `pollEvent`.
    func flush() {
        guard case .open = lifecycle else { return }
        guard writePending() else { return }
        guard pending.isEmpty else {
            awaitingWritable = true
            announceWritabilityIfRecovered()
            return
        }
        awaitingWritable = false
        if case .shutdownAfterDrain = writeSide {
            shutdownBackendWrite()
            writeSide = .shutDown
            closeIfBothDirectionsFinished()
        }
        announceWritabilityIfRecovered()
    }

    /// `writev`s pending bytes until none is left or the kernel says
    /// `EAGAIN`; false when a failure tore the connection down.
    private func writePending() -> Bool {
        while !pending.isEmpty {
            let written = pending.withIOVecs { vectors, _ in
                writevBackend(vectors)
            }
            if written >= 0 {
                // A short write goes round once more: only `EAGAIN` makes
                // sure the edge-triggered poller announces the room to come.
                pending.consume(written)
                continue
            }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { break }
            teardown(WireError.fromErrno(code, call: "writev", address: remoteAddress))
            return false
        }
        return true
    }

    /// Delivers `.writable` when the pending bytes fell to the low watermark
    /// after having reached the high one, while writing is still possible.
    private func announceWritabilityIfRecovered() {
        guard !isWritable, pending.byteCount <= writeWatermarks.low else { return }
        isWritable = true
        if case .open = lifecycle, case .open = writeSide {
            deliver(.writable)
        }
    }
}
