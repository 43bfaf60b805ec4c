import Glibc

extension Connection {
    /// Stops `.received` events, so unread bytes stay in the kernel and TCP
    /// flow control slows the peer. Balanced with `resumeReading()`; repeated
    /// calls are harmless. Takes effect at once, even in the middle of
    /// delivering a burst. While paused, EOF and a reset by the peer are
    /// noticed only on resuming (or, for a reset, on the next write).
    /// Called only on the loop.
    ///
    /// The read source is suspended lazily: only when it fires while reading
    /// is paused. An HTTP/1.1 server pauses after each request and resumes
    /// after each response; suspending and resuming the source each time
    /// would wake Dispatch's manager thread twice per request.
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
        if readGate?.isRunning == false {
            readGate?.resume()
        } else if !readStoppedEarly {
            // The last read met EAGAIN and the source never fired since:
            // nothing is waiting, and the running source reports what comes.
            return
        }
        // Bytes may be waiting that the source will not announce again: the
        // read stopped before EAGAIN, or the source fired while paused (after
        // a hang-up it fires no more, see `readable()`). Fetch them without it.
        scheduleRead()
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

    /// Reads on a later loop turn, independent of the read source.
    private func scheduleRead() {
        guard !readScheduled else { return }
        readScheduled = true
        loop.execute {
            self.readScheduled = false
            self.readable()
        }
    }

    /// The read source's handler: reads until the socket would block or
    /// reports EOF, delivering each chunk as it comes; stops early when the
    /// handler pauses or closes.
    ///
    /// Reading always goes on to `EAGAIN` or EOF, and a burst that spends
    /// `readBudgetPerEvent` continues on a later turn by itself, because
    /// libdispatch on Linux fires a read source one last time on `EPOLLHUP`
    /// (both directions shut, or a reset) and then deletes its registration:
    /// anything not read in that call would never be announced again.
    /// Runs on the loop.
    func readable() {
        if case .paused = readSide {
            // Fired while paused: now hold the source back (see `pauseReading`).
            readGate?.suspend()
            readStoppedEarly = true
            return
        }
        var budget = Connection.readBudgetPerEvent
        readStoppedEarly = true
        while isReadingActive {
            guard budget > 0 else {
                scheduleRead()
                return
            }
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
            case .endOfFile:
                readSide = .ended
                readGate?.suspend()
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
        }
    }
}
