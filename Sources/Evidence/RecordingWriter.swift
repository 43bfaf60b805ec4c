import Dispatch
import Foundation
import Glibc
import HTTP
import Synchronization

/// Appends exchange records to a JSON Lines recording at the rate a proxy
/// produces them, in bounded memory, so that a crash or `kill -9` at any
/// moment leaves every complete line readable.
///
/// - The file is opened `O_APPEND`, mode 0600 (recordings may hold secrets),
///   and the header line is written before `init` returns.
/// - **Encoding** happens on the caller's thread (`ExchangeRecord.writeLine`,
///   no `JSONEncoder`), so the queue holds bytes, not records. A busy
///   producer encodes into a `RecordingBatch` of its own and hands it over
///   whole (`offer(_:)`): no allocation per record, one lock per batch.
/// - **Batching.** Lines are gathered in one pending buffer for up to
///   `gatherDelay` (10 ms; less once 256 KiB are pending); the writer then
///   takes the whole buffer at once and hands it to one `write(2)`. A batch
///   holds only whole lines, so whatever the kernel has taken when the
///   process dies ends in a whole line; a torn line can only come from a
///   failed write, and then it is cut off (below).
/// - **Wake-ups.** The first line after a quiet spell starts the writer's
///   loop on its queue (`drainLoop`); while lines keep coming the loop
///   gathers each batch in a timed wait on `lock` and writes it, so under
///   load the writer wakes once per batch, by itself: no timer is armed and
///   no producer makes a system call to wake it (except once per batch that
///   fills early). A gathering interval that brings nothing ends the loop.
/// - **Bound.** `queuedBytes` (pending plus the batch being written) stays
///   under `queueLimit` plus one line per producer: `append` waits while the
///   queue is full, so a slow disk slows the producers and never grows
///   memory without limit, and no record is dropped. A producer that must
///   not block (an event loop that can pause its reading instead) uses
///   `offer`, which never waits and says when to pause, and `whenRoom`.
/// - **Disk full or any write error.** The writer stops: the file is cut
///   back to its last whole line, `onStop` is called once (by default one
///   line on standard error saying recording stopped and how many records
///   were lost), and every later record is counted as lost, never queued.
///   The producers go on (a proxy keeps serving); `flush` and `close`
///   report the total lost.
///
/// `@unchecked Sendable`: the members under "guarded by `lock`" are touched
/// only with `lock` held; `fd` and `fileLength` only on `queue` (and in
/// `init`/`deinit`, when no other reference exists).
public final class RecordingWriter: @unchecked Sendable {
    public let path: String
    /// Queued bytes at which `append` waits and `offer` asks to pause.
    public let queueLimit: Int
    /// The default bound: about 700 two-leg records.
    public static let defaultQueueLimit = 2 * 1024 * 1024

    private let queue: DispatchQueue
    private let onStop: @Sendable (RecordingWriteError) -> Void

    private let lock = NSCondition()
    // Guarded by `lock`:
    private var pending: [UInt8] = []
    private var pendingRecords = 0
    /// A buffer kept from the last batch, swapped in so its capacity is reused.
    private var spare: [UInt8] = []
    /// Pending plus the batch being written.
    private var queuedBytes = 0
    /// The drain loop is running or queued.
    private var drainScheduled = false
    /// The drain loop is in its timed wait, gathering a batch.
    private var gathering = false
    /// The drain loop should end its wait and write at once (a big batch,
    /// a full queue, a flush or a close).
    private var writeNow = false
    /// `flush` and `close` completions, run by the drain loop after it wrote
    /// every line queued before them.
    private var flushes: [@Sendable (RecordingWriteError?) -> Void] = []
    private var closes: [@Sendable (RecordingWriteError?) -> Void] = []
    private var status = Status.open
    private var roomWaiters: [@Sendable () -> Void] = []

    // On `queue` only:
    private var fd: Int32
    /// The length of the whole lines in the file: where a torn write is cut back to.
    private var fileLength: off_t
    /// Which written bytes to give back to the page cache, and when.
    private var pageCache = PageCacheRelease(window: RecordingWriter.pageCacheWindow)

    private enum Status {
        case open
        /// A write failed; nothing more is written and records are counted as lost.
        case stopped(reason: String, lost: Int)
        /// `close` ran; the descriptor is closed.
        case closed(lost: Int)
    }

    /// Creates the recording and writes its header line.
    ///
    /// - Parameters:
    ///   - replacing: truncate an existing file; otherwise an existing file is
    ///     an error, so earlier evidence is never overwritten by accident.
    ///   - queueLimit: the bound on queued bytes (at least one line is always accepted).
    ///   - onStop: called once, on the writer's queue, when a write fails and
    ///     recording stops; by default writes one line to standard error.
    /// - Throws: `RecordingWriteError` (`alreadyExists`, `cannotOpen` with the
    ///   reason — a directory, no permission, a read-only filesystem —, `writeFailed`).
    public init(path: String, header: RecordingHeader, replacing: Bool = false,
                queueLimit: Int = RecordingWriter.defaultQueueLimit,
                onStop: @escaping @Sendable (RecordingWriteError) -> Void = RecordingWriter.reportOnStandardError) throws {
        self.path = path
        self.queueLimit = max(1, queueLimit)
        self.onStop = onStop
        queue = DispatchQueue(label: "intact.recording-writer")
        // A file-size limit (`ulimit -f`) must fail the write with EFBIG, not kill the process.
        signal(SIGXFSZ, SIG_IGN)
        let flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (replacing ? O_TRUNC : O_EXCL)
        let fd = Glibc.open(path, flags, 0o600)
        guard fd >= 0 else {
            var code = errno
            var info = stat()
            // O_EXCL reports a directory as "exists": say what it is.
            if code == EEXIST, stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR { code = EISDIR }
            throw RecordingWriteError(kind: code == EEXIST ? .alreadyExists : .cannotOpen, path: path,
                                      reason: RecordingWriteError.describeOpen(errno: code))
        }
        var info = stat()
        if fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
            Glibc.close(fd)
            throw RecordingWriteError(kind: .cannotOpen, path: path, reason: RecordingWriteError.describeOpen(errno: EISDIR))
        }
        let line: [UInt8]
        do {
            line = try RecordingLine.encode(header, as: .header, with: RecordingLine.makeEncoder())
        } catch {
            Glibc.close(fd)
            throw RecordingWriteError(kind: .encodingFailed, path: path, reason: "\(error)")
        }
        if let failure = RecordingWriter.writeWhole(line, to: fd) {
            Glibc.close(fd)
            throw RecordingWriteError(kind: .writeFailed, path: path, reason: failure.reason)
        }
        self.fd = fd
        fileLength = lseek(fd, 0, SEEK_END)
        pending.reserveCapacity(64 * 1024)
    }

    deinit {
        if case .closed = status { return }
        Glibc.close(fd)
    }

    // MARK: - Producers (any thread)

    /// Queues a record, waiting first while the queue is full (so a slow disk
    /// slows the caller). Must not be called after `close` (a programming
    /// error: the record is counted as lost).
    public func append(_ record: ExchangeRecord) {
        let line = record.lineWriter()
        lock.lock()
        while queuedBytes >= queueLimit, case .open = status {
            lock.wait()
        }
        let start = line.withUnsafeBytes { enqueueLocked($0, records: 1) }
        lock.unlock()
        if start { startDrainLoop() }
    }

    /// Queues every line of `batch` (at once, in order) and empties it,
    /// without ever waiting; returns false when the queue is now full,
    /// asking the producer to stop producing (pause reading) until
    /// `whenRoom` calls back. The lines are queued either way.
    @discardableResult
    public func offer(_ batch: inout RecordingBatch) -> Bool {
        guard !batch.isEmpty else { return hasRoom }
        lock.lock()
        let start = batch.withBytes { enqueueLocked($0, records: batch.records) }
        let room = queuedBytes < queueLimit
        lock.unlock()
        batch.removeAll()
        if start { startDrainLoop() }
        return room
    }

    /// True while the queue is below its bound (or the writer has stopped and
    /// queues nothing more).
    public var hasRoom: Bool {
        lock.lock()
        defer { lock.unlock() }
        return hasRoomLocked
    }

    /// Calls `callback` once the queue is below its bound: at once (on the
    /// caller's thread) if it is now, otherwise on the writer's queue after
    /// the batch that made room. The callback must not block.
    public func whenRoom(_ callback: @escaping @Sendable () -> Void) {
        lock.lock()
        guard !hasRoomLocked else {
            lock.unlock()
            return callback()
        }
        roomWaiters.append(callback)
        lock.unlock()
    }

    /// After every record appended so far is written, syncs the file to disk
    /// and calls `completion` on the writer's queue with the first problem
    /// seen so far, if any.
    public func flush(_ completion: @escaping @Sendable (RecordingWriteError?) -> Void) {
        lock.lock()
        flushes.append(completion)
        let start = requestWriteLocked()
        lock.unlock()
        if start { startDrainLoop() }
    }

    /// After every record appended so far is written, syncs and closes the
    /// file and calls `completion` on the writer's queue with the first
    /// problem seen, if any.
    public func close(_ completion: @escaping @Sendable (RecordingWriteError?) -> Void) {
        lock.lock()
        closes.append(completion)
        let start = requestWriteLocked()
        lock.unlock()
        if start { startDrainLoop() }
    }

    /// `close`, waiting for it. Blocks on disk I/O — never call on a loop
    /// queue (nor on the writer's).
    public func closeAndWait() -> RecordingWriteError? {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<RecordingWriteError?>(nil)
        close { problem in
            result.withLock { $0 = problem }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 }
    }

    /// The default `onStop`: one line on standard error.
    public static let reportOnStandardError: @Sendable (RecordingWriteError) -> Void = { error in
        let message = "intact: recording stopped: \(error); serving continues without recording, "
            + "later records are counted as lost\n"
        FileHandle.standardError.write(Data(message.utf8))
    }

    // MARK: - Under `lock`

    private var hasRoomLocked: Bool {
        if case .open = status { return queuedBytes < queueLimit }
        return true
    }

    /// Adds `records` whole lines to the pending batch, or counts them lost
    /// when the writer stopped; true when the drain loop must be started. A
    /// batch that is already big, or a queue that is now full, ends the
    /// loop's gathering early (once per batch).
    private func enqueueLocked(_ lines: UnsafeRawBufferPointer, records: Int) -> Bool {
        switch status {
        case .open:
            pending.append(contentsOf: lines)
            pendingRecords += records
            queuedBytes += lines.count
            if !writeNow, pending.count >= RecordingWriter.eagerBatchBytes || queuedBytes >= queueLimit {
                writeNow = true
                if gathering { lock.broadcast() }
            }
            guard drainScheduled else {
                drainScheduled = true
                return true
            }
        case .stopped(let reason, let lost):
            status = .stopped(reason: reason, lost: lost + records)
        case .closed(let lost):
            assertionFailure("RecordingWriter.append called after close; a record is lost")
            status = .closed(lost: lost + records)
        }
        return false
    }

    /// Asks the drain loop to write now (for a flush or close); true when it
    /// must be started.
    private func requestWriteLocked() -> Bool {
        writeNow = true
        if gathering { lock.broadcast() }
        guard !drainScheduled else { return false }
        drainScheduled = true
        return true
    }

    /// How long the first line of a batch waits for others: a busy proxy
    /// then writes (and wakes the writer) a few dozen times a second rather
    /// than once per record. After `kill -9`, at most this much is missing.
    /// (Measured under `wrk`: 2 ms and 64 KiB woke the writer ~400 times a
    /// second and tripled the proxy's context switches.)
    static let gatherDelay: TimeInterval = 0.010
    /// A batch this big is written without waiting for more.
    static let eagerBatchBytes = 256 * 1024

    private func startDrainLoop() {
        queue.async { self.drainLoop() }
    }

    // MARK: - On the writer's queue

    /// The writer: gathers a batch (a timed wait of up to `gatherDelay`,
    /// cut short by `writeNow`), writes it with one `write(2)`, runs the
    /// flushes and closes asked for meanwhile, and goes on; returns once a
    /// gathering interval brought nothing (or the file is closed), so an idle
    /// recording holds no thread. Started by the first line after a quiet
    /// spell (`drainScheduled`).
    private func drainLoop() {
        dispatchPrecondition(condition: .onQueue(queue))
        lock.lock()
        while true {
            if !writeNow {
                let deadline = Date(timeIntervalSinceNow: RecordingWriter.gatherDelay)
                gathering = true
                while !writeNow, lock.wait(until: deadline) {}
                gathering = false
            }
            writeNow = false
            let flushes = self.flushes, closes = self.closes
            self.flushes.removeAll()
            self.closes.removeAll()
            let wrote = writeBatchLocked()
            if !flushes.isEmpty || !closes.isEmpty {
                lock.unlock()
                let synced = syncOnQueue()
                flushes.forEach { $0(synced) }
                if !closes.isEmpty {
                    let problem = closeOnQueue(synced: synced)
                    closes.forEach { $0(problem) }
                }
                lock.lock()
            }
            // A flush or close asked for while the lock was released (its
            // caller may even have been called back already) set `writeNow`:
            // go round again for it, closed or not.
            let closed: Bool
            if case .closed = status { closed = true } else { closed = false }
            if !writeNow, closed || (!wrote && pending.isEmpty) {
                drainScheduled = false
                lock.unlock()
                return
            }
        }
    }

    /// Writes the pending batch, if any, with `lock` held on entry and on
    /// return (released around the write); true when there was one. Wakes
    /// the producers waiting for room.
    private func writeBatchLocked() -> Bool {
        guard case .open = status, !pending.isEmpty else { return false }
        var batch = pending
        let records = pendingRecords
        pending = spare
        pendingRecords = 0
        lock.unlock()

        let failure = RecordingWriter.writeWhole(batch, to: fd)
        var stopped: RecordingWriteError?
        if let failure {
            stopped = stop(after: failure, batch: batch, records: records)
        } else {
            fileLength += off_t(batch.count)
            releaseWrittenPages()
        }

        lock.lock()
        queuedBytes = stopped == nil ? queuedBytes - batch.count : 0
        batch.removeAll(keepingCapacity: true)
        if batch.capacity <= 4 * queueLimit { spare = batch }
        let waiters = hasRoomLocked ? roomWaiters : []
        if !waiters.isEmpty { roomWaiters.removeAll() }
        lock.broadcast()
        lock.unlock()

        waiters.forEach { $0() }
        if let stopped { onStop(stopped) }
        lock.lock()
        return true
    }

    /// A batch could not be written whole: cuts the file back to its last
    /// whole line, stops the writer, counts the lost records (the batch's
    /// unwritten lines and everything pending) and returns what to report.
    private func stop(after failure: WriteFailure, batch: [UInt8], records: Int) -> RecordingWriteError {
        let newline = UInt8(ascii: "\n")
        let whole = batch[..<failure.written].lastIndex(of: newline).map { $0 + 1 } ?? 0
        let written = batch[..<whole].reduce(0) { $1 == newline ? $0 + 1 : $0 }
        var reason = failure.reason
        if failure.written > whole, ftruncate(fd, fileLength + off_t(whole)) != 0 {
            reason += "; cutting off the torn line failed: " + RecordingWriteError.describe(errno: errno)
        }
        fileLength += off_t(whole)
        lock.lock()
        let lost = records - written + pendingRecords
        status = .stopped(reason: reason, lost: lost)
        pending.removeAll()
        pendingRecords = 0
        lock.unlock()
        return RecordingWriteError(kind: .writeFailed, path: path, reason: reason, lostRecords: lost)
    }

    private func syncOnQueue() -> RecordingWriteError? {
        dispatchPrecondition(condition: .onQueue(queue))
        lock.lock()
        let status = self.status
        lock.unlock()
        switch status {
        case .open:
            guard fsync(fd) == 0 else {
                return RecordingWriteError(kind: .writeFailed, path: path,
                                           reason: "fsync: " + RecordingWriteError.describe(errno: errno))
            }
            return nil
        case .stopped(let reason, let lost):
            return RecordingWriteError(kind: .writeFailed, path: path, reason: reason, lostRecords: lost)
        case .closed(let lost):
            return RecordingWriteError(kind: .closed, path: path, reason: "the recording is already closed",
                                       lostRecords: lost)
        }
    }

    /// Closes the file after the last batch was written and synced
    /// (`synced`: the problem seen, if any); calls back whoever waits for room.
    private func closeOnQueue(synced problem: RecordingWriteError?) -> RecordingWriteError? {
        dispatchPrecondition(condition: .onQueue(queue))
        lock.lock()
        var waiters: [@Sendable () -> Void] = []
        switch status {
        case .open, .stopped:
            Glibc.close(fd)
            status = .closed(lost: 0)
            waiters = roomWaiters
            roomWaiters.removeAll()
            lock.broadcast()
        case .closed:
            break
        }
        lock.unlock()
        waiters.forEach { $0() }
        return problem
    }

    /// A recording is written once and read later, so its pages need not
    /// stay in the page cache (`PageCacheRelease` decides the ranges). Each
    /// time `pageCacheWindow` more bytes are written, `POSIX_FADV_DONTNEED`
    /// over everything not yet given back starts the writeback of the new
    /// window (Linux starts it for dirty pages) and drops the window before it, whose writeback had a whole
    /// window's time to finish (pages still dirty or under writeback are
    /// left as they are). The recording then holds about two windows of page
    /// cache however long it runs, and its writes reuse pages instead of
    /// taking fresh ones. (Measured: after 2.5 GB recorded on the benchmark
    /// VM, copying each batch into new page-cache pages was a quarter of the
    /// proxy's CPU — first touches of guest memory.) Best effort, and it
    /// never waits: a filesystem that drops nothing (tmpfs) keeps its pages,
    /// and an error is ignored — the data is already written. On `queue` only.
    private func releaseWrittenPages() {
        guard let range = pageCache.advance(to: fileLength) else { return }
        _ = posix_fadvise(fd, range.lowerBound, range.upperBound - range.lowerBound, POSIX_FADV_DONTNEED)
    }

    /// How much is written between two page-cache releases.
    static let pageCacheWindow: off_t = 8 * 1024 * 1024

    /// Where a write stopped and why.
    private struct WriteFailure {
        /// Bytes the kernel took before the failure.
        var written: Int
        var reason: String
    }

    /// Writes all of `bytes`, retrying only the part a short write left and
    /// `EINTR`; the failure, if any.
    private static func writeWhole(_ bytes: [UInt8], to fd: Int32) -> WriteFailure? {
        bytes.withUnsafeBytes { buffer -> WriteFailure? in
            guard let base = buffer.baseAddress else { return nil }
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(fd, base + offset, buffer.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    let reason = written == 0 ? "write made no progress" : RecordingWriteError.describe(errno: errno)
                    return WriteFailure(written: offset, reason: "write after \(offset) of \(buffer.count) bytes: \(reason)")
                }
            }
            return nil
        }
    }
}
