import Glibc

extension Connection {
    /// Stops `.received` events, so unread bytes stay in the kernel and TCP
    /// flow control slows the peer. Balanced with `resumeReading()`; repeated
    /// calls are harmless. Takes effect at once, even in the middle of
    /// delivering a burst. While paused, EOF and a reset by the peer are
    /// noticed only on resuming (or, for a reset, on the next write).
    /// Called only on the loop.
    ///
    /// No system call either way: input announced while paused is only
    /// remembered (`readStoppedEarly`) and read on resuming. An HTTP/1.1
    /// server pauses after each request and resumes after each response.
    public func pauseReading() {
        loop.preconditionOnLoop()
        guard case .reading = readSide else { return }
        readSide = .paused
    }

    /// Undoes `pauseReading()`. No-op after EOF or close. Called only on the loop.
    public func resumeReading() {
        loop.preconditionOnLoop()
        guard case .paused = readSide else { return }
        readSide = .reading
        guard case .open = lifecycle else { return }
        // The last read met EAGAIN and no input was announced since: nothing
        // is waiting, and the poller announces what comes.
        guard readStoppedEarly else { return }
        // Bytes may be waiting that the edge-triggered poller will not
        // announce again: the read stopped before EAGAIN, or input (or a
        // hang-up) was announced while paused. Fetch them once this turn ends.
        scheduleRead(afterOthers: false)
    }

    /// True between `pauseReading()` and `resumeReading()`. Read only on the loop.
    public var isReadingPaused: Bool {
        if case .paused = readSide { return true }
        return false
    }

    /// Stops reading for good (used by `close()`).
    func endReading() {
        readSide = .ended
    }

    /// What one `read(2)` gave.
    private enum ReadOutcome {
        case bytes([UInt8])
        /// This many bytes went to the lending receiver.
        case lent(Int)
        case endOfFile
        case failed(Int32)
    }

    private var isReadingActive: Bool {
        guard case .open = lifecycle, case .reading = readSide else { return false }
        return true
    }

    /// Reads on a later loop turn, without waiting for the poller: right
    /// after the current turn, or, with `afterOthers`, behind the sockets and
    /// timers already waiting (a burst that spent its budget yields).
    private func scheduleRead(afterOthers: Bool) {
        guard !readScheduled else { return }
        readScheduled = true
        if afterOthers {
            loop.executeAfterOthers { self.runOnLoop() }
        } else {
            // The connection itself, not a closure: resumed once per request.
            loop.execute(self)
        }
    }

    /// Input was announced: reads until the socket would block or reports
    /// EOF, delivering each chunk as it comes; stops early when the handler
    /// pauses or closes.
    ///
    /// Reading goes on to `EAGAIN` or EOF, and a burst that spends
    /// `readBudgetPerEvent` continues on a later turn by itself, because the
    /// poller is edge-triggered: input left unread is not announced again.
    /// With `shortReadDrains` (the poller's event carried no half-close,
    /// hang-up or error), a read that returns less than it asked for has
    /// emptied the socket's receive queue and ends there, without the read
    /// that would only say `EAGAIN` (one system call per request less):
    /// bytes or a FIN arriving after it are a new edge, announced again.
    /// Runs on the loop.
    func readable(shortReadDrains: Bool = false) {
        if case .paused = readSide {
            // Announced while paused: read it on resuming (see `pauseReading`).
            readStoppedEarly = true
            return
        }
        var budget = Connection.readBudgetPerEvent
        readStoppedEarly = true
        while isReadingActive {
            guard budget > 0 else {
                scheduleRead(afterOthers: true)
                return
            }
            let request = min(EventLoop.readSize, budget)
            let outcome: ReadOutcome = loop.withReadScratch { scratch in
                let count = readBackend(into: scratch.baseAddress!, count: request)
                guard count > 0 else { return count == 0 ? .endOfFile : .failed(errno) }
                let bytes = UnsafeRawBufferPointer(rebasing: scratch[..<count])
                guard let receiver = lendingReceiver else { return .bytes(Array(bytes)) }
                receiver(bytes)
                return .lent(count)
            }
            let read: Int
            switch outcome {
            case .bytes(let chunk):
                budget -= chunk.count
                read = chunk.count
                deliver(.received(chunk))
            case .lent(let count):
                budget -= count
                read = count
            case .endOfFile:
                readSide = .ended
                deliver(.readEOF)
                closeIfBothDirectionsFinished()
                return
            case .failed(EINTR):
                continue
            case .failed(EAGAIN), .failed(EWOULDBLOCK):
                readStoppedEarly = false
                return
            case .failed(let code):
                teardown(WireError.fromErrno(code, call: "read", address: remoteAddress))
                return
            }
            if shortReadDrains, read < request, isReadingActive {
                readStoppedEarly = false
                return
            }
        }
    }
}

/// A read scheduled by `scheduleRead` (the one piece of `LoopWork` a connection has).
extension Connection: LoopWork {
    public func runOnLoop() {
        readScheduled = false
        readable()
    }
}
