import Glibc

extension Connection {
    /// Stops `.received` events: suspends the read source, so unread bytes
    /// stay in the kernel and TCP flow control slows the peer. Balanced with
    /// `resumeReading()`; repeated calls are harmless. Takes effect at once,
    /// even in the middle of delivering a burst. Called only on the loop.
    public func pauseReading() {
        loop.preconditionOnLoop()
        guard case .reading = readSide else { return }
        readSide = .paused
        readGate?.suspend()
    }

    /// Undoes `pauseReading()`. No-op after EOF or close. Called only on the loop.
    public func resumeReading() {
        loop.preconditionOnLoop()
        guard case .paused = readSide else { return }
        readSide = .reading
        if case .open = lifecycle { readGate?.resume() }
    }

    /// True between `pauseReading()` and `resumeReading()`. Read only on the loop.
    public var isReadingPaused: Bool {
        if case .paused = readSide { return true }
        return false
    }

    /// Stops reading for good (used by `close()`).
    func endReading() {
        readSide = .ended
        readGate?.suspend()
    }

    /// What one `read(2)` gave.
    private enum ReadOutcome {
        case bytes([UInt8])
        case endOfFile
        case failed(Int32)
    }

    private var isReadingActive: Bool {
        guard case .open = lifecycle, case .reading = readSide else { return false }
        return true
    }

    /// The read source's handler: reads until the socket would block, up to
    /// `readBudgetPerEvent` bytes, delivering each chunk as it comes. Stops
    /// early when the handler pauses or closes. Runs on the loop.
    func readable() {
        var budget = Connection.readBudgetPerEvent
        while budget > 0, isReadingActive {
            let request = min(EventLoop.readSize, budget)
            let outcome: ReadOutcome = loop.withReadScratch { scratch in
                let count = Glibc.read(descriptor, scratch.baseAddress, request)
                if count > 0 { return .bytes(Array(UnsafeRawBufferPointer(rebasing: scratch[..<count]))) }
                return count == 0 ? .endOfFile : .failed(errno)
            }
            switch outcome {
            case .bytes(let chunk):
                budget -= chunk.count
                deliver(.received(chunk))
                // A short read emptied the socket; the source fires again on more.
                if chunk.count < request { return }
            case .endOfFile:
                readSide = .ended
                readGate?.suspend()
                deliver(.readEOF)
                closeIfBothDirectionsFinished()
                return
            case .failed(EINTR):
                continue
            case .failed(EAGAIN), .failed(EWOULDBLOCK):
                return
            case .failed(let code):
                teardown(WireError.fromErrno(code, call: "read", address: remoteAddress))
                return
            }
        }
    }
}
