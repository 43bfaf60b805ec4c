import Dispatch
import Glibc
import Synchronization

/// A serial Dispatch queue that owns a set of connections, listeners and timers.
///
/// Everything `Wire` does for a connection happens on its loop's queue: socket
/// readiness (one `EventPoller` per loop), callbacks, timers. State confined to a loop needs no lock; code
/// that touches it from elsewhere hops over with `execute(_:)`.
///
/// ## Waiting for sockets
/// A loop's sockets share one epoll (`EventPoller`), waited for as `Waiting`
/// says: by one Dispatch read source over it (`.dispatchSource`: a Dispatch
/// worker runs each wake-up), or by a thread of the loop's own blocking in
/// `epoll_wait` and running each wake-up's turns itself inside
/// `queue.sync` (`.thread`: no Dispatch thread woken per socket event). Either
/// way the turns run on `queue`, one at a time with the loop's timers and the
/// work `execute`d from elsewhere, so the ownership rule below is the same.
///
/// ## Turns
/// Every piece of work the loop runs (a source handler, a timer, an
/// `execute` item) is one *turn* (`runTurn`). Connections written to during a
/// turn are flushed together when it ends (`flushAtEndOfTurn`): a response
/// head and body written one after the other leave in one `writev`, with no
/// extra work item queued per write.
///
/// Work handed to `execute` on the loop during a turn runs when that turn
/// ends, after its flush, each piece as a turn of its own (`deferredWork`),
/// before the loop goes back to Dispatch. A request that crosses several
/// "later" hops (engine pump, stream drain, pool dispatch) is thus carried
/// to the upstream write within the Dispatch work item whose socket event
/// began it, instead of one queued item per hop, each behind the source
/// re-arm Dispatch does when a handler returns. At most
/// `deferredWorkPerDrain` pieces run in a row; the rest waits for a later
/// Dispatch item, so a chain of work that keeps executing more cannot starve
/// sockets and timers. `executeAfterOthers` queues behind them on purpose.
///
/// ## Rounds
/// The sockets one wake-up of the poller found ready are served as a *round*
/// (`runRound`), each socket a turn. Work handed to `executeAtEndOfRound`
/// during a round runs once its last turn is over, each piece a turn of its
/// own, before the loop waits again: for acting once on what a whole round
/// produced (a recording batch handed to the writer) without queueing a
/// Dispatch work item, which on a loop with its own thread would wake a
/// Dispatch worker for each.
///
/// ## Timers
/// The loop's pending `LoopTimer`s wait in one `DeadlineHeap`, behind one
/// Dispatch timer source armed for the earliest (made with the first timer).
/// A timer sooner than the one armed re-arms the source; a cancelled timer
/// leaves the source as it is (firing early, it finds nothing due and re-arms
/// for what is). When the source fires, every timer due by then runs, earliest
/// first, each as a turn of its own. An idle connection's timer is thus a
/// small object in the heap instead of a Dispatch source (~0.4 KiB) per
/// connection, and arming or cancelling one usually wakes no Dispatch thread.
///
/// ## Embedded loops
/// `EventLoop.embedded()` makes a loop that no Dispatch queue runs: the
/// thread that made it is the loop, and a test steps it by hand (`run()`
/// does the work waiting, `advanceTime(by:)` moves its clock and fires the
/// timers due). Its connections are in memory (`EmbeddedNetwork`,
/// `EmbeddedPeer`), so a whole proxy runs inside one test, deterministic,
/// with no socket, thread or wall-clock wait. Everything else (turns,
/// end-of-turn flushes, deferred work, the timer heap) is the same code.
///
/// ## Sendable
/// A loop is shared freely between threads. Its only mutable state (the read
/// scratch buffer, the turn depth, the end-of-turn flush list, the
/// deferred work and the timers) is touched only on `queue`, so `@unchecked Sendable` holds.
///
/// Loop-confined classes in `Wire` (`Connection`, `Listener`) follow the same
/// rule: they are `@unchecked Sendable` so they can be handed to another
/// thread and hopped back, and every method that touches their mutable state
/// states "called only on the loop" and checks it with `preconditionOnLoop()`.
public final class EventLoop: @unchecked Sendable {
    /// The queue's label, for debugging.
    public let label: String
    /// The serial queue every source and timer of this loop targets.
    let queue: DispatchQueue
    /// Marks `queue` so `isOnLoop` can ask "am I on this loop?" cheaply.
    private let key = DispatchSpecificKey<UInt8>()
    /// Reused read buffer; touched only on `queue` (see `withReadScratch`).
    private let scratch: UnsafeMutableRawBufferPointer
    /// True while `scratch` is lent; touched only on `queue`.
    private var scratchLent = false
    /// How many `runTurn` calls are on the stack; touched only on `queue`.
    private var turnDepth = 0
    /// The thread running the outermost `runTurn` (with the flushes and the
    /// deferred work after it), or 0 between turns. Invariant: non-zero only
    /// while that thread runs a turn of this loop, so a thread reading its
    /// own identity here is on the loop; any other thread reads 0 or another
    /// thread's identity, never its own.
    private let turnThread = Atomic<UInt>(0)
    /// Connections to flush when the current turn ends, each once (the
    /// connection's `flushScheduled` guards against duplicates); touched only on `queue`.
    private var endOfTurnFlushes: [Connection] = []
    /// The readiness of this loop's connections, made with the first one
    /// started; touched only on `queue`.
    private var poller: EventPoller?
    /// Work `execute` was given on the loop during a turn, first in first
    /// out, run when the outermost turn ends; touched only on `queue`.
    private var deferredWork: [DeferredWork] = []
    /// True while `runRound` serves a round of ready sockets; touched only on `queue`.
    private var inRound = false
    /// Work `executeAtEndOfRound` was given during the round, first in first
    /// out, run when it ends; touched only on `queue`.
    private var endOfRoundWork: [@Sendable () -> Void] = []
    /// The pending timers, earliest first; touched only on `queue`.
    private var timers = DeadlineHeap<LoopTimer>()
    /// The one Dispatch source that wakes the loop for `timers`, made with
    /// the first timer; touched only on `queue`.
    private var timerSource: DispatchSourceTimer?
    /// The deadline `timerSource` is armed for; nil when it is not armed.
    /// Touched only on `queue`.
    private var timerSourceDue: UInt64?
    /// Set for an embedded loop (`EventLoop.embedded()`): its clock, its
    /// work queue and its thread. nil for a loop Dispatch runs.
    let embedded: EmbeddedLoopState?
    /// The in-memory network an embedded loop's connections dial into;
    /// nil otherwise (dials go to sockets). Set once by `EmbeddedNetwork`.
    var network: EmbeddedNetwork?
    /// How the loop waits for its sockets (see "Waiting for sockets").
    public let waiting: Waiting

    /// How a loop waits for socket readiness (see "Waiting for sockets").
    /// Its raw values are how `intact proxy --loop-wait` spells it.
    public enum Waiting: String, Sendable, CaseIterable {
        /// One Dispatch read source over the loop's epoll.
        case dispatchSource = "dispatch"
        /// A thread of the loop's own blocking in `epoll_wait`, made with the
        /// loop's first connection and ended when the loop is released.
        case thread

        /// How loops wait unless told otherwise: on a thread of their own
        /// (Docs/performance.md#one-epoll-per-loop: fewer context switches
        /// per request, lower latency at one connection).
        public static let `default` = Waiting.thread
    }

    /// Most pieces of deferred work run one after the other before the loop
    /// lets Dispatch serve its sockets and timers.
    static let deferredWorkPerDrain = 64

    /// Bytes one `read(2)` asks for; connections read into the loop's scratch
    /// buffer of this size and copy out exactly what arrived (or lend it).
    static let readSize = 64 * 1024

    /// Makes a loop with its own serial queue.
    ///
    /// Every socket write of `Wire` happens on a loop, so making one turns
    /// SIGPIPE off for the process (`Signals.ignoreSIGPIPE`): a peer that
    /// closed its end then makes a write fail with `EPIPE`, a value the
    /// connection reports, instead of killing the process.
    public convenience init(label: String = "intact.wire.loop", waiting: Waiting = .default) {
        self.init(label: label, waiting: waiting, embedded: nil)
    }

    private init(label: String, waiting: Waiting, embedded: EmbeddedLoopState?) {
        Signals.ignoreSIGPIPE()
        self.label = label
        self.waiting = waiting
        self.queue = DispatchQueue(label: label)
        self.scratch = .allocate(byteCount: EventLoop.readSize, alignment: 16)
        self.embedded = embedded
        queue.setSpecific(key: key, value: 1)
    }

    /// A loop stepped by hand on the calling thread, for tests (see
    /// "Embedded loops"): nothing it is given runs until `run()` or
    /// `advanceTime(by:)`; its clock starts at an arbitrary instant and
    /// moves only with `advanceTime(by:)`. Use it only from the thread
    /// that made it.
    public static func embedded(label: String = "intact.wire.embedded") -> EventLoop {
        EventLoop(label: label, waiting: .dispatchSource, embedded: EmbeddedLoopState(thread: currentThread))
    }

    deinit {
        timerSource?.cancel()
        scratch.deallocate()
    }

    /// True when the caller runs on this loop's queue.
    ///
    /// Asked about twenty times per proxied request (by every loop-confined
    /// method's check), so a turn's own thread is answered with one atomic
    /// load and compare (`turnThread`); anywhere else, and on the loop
    /// outside a turn, Dispatch's queue-specific value decides (an embedded
    /// loop: whether the caller is its thread).
    public var isOnLoop: Bool {
        if turnThread.load(ordering: .relaxed) == EventLoop.currentThread { return true }
        // An embedded loop's turns run on its thread too: outside a turn, that thread is the loop.
        if let embedded { return embedded.thread == EventLoop.currentThread }
        return DispatchQueue.getSpecific(key: key) != nil
    }

    /// The calling thread's identity, as `turnThread` stores it (never 0).
    private static var currentThread: UInt { UInt(pthread_self()) }

    /// Runs `work` on the loop, later: never inline, even when called on the
    /// loop. Called on the loop during a turn, `work` runs as soon as that
    /// turn has ended and flushed (see "Turns"); from anywhere else it is
    /// queued on the loop's Dispatch queue. Work executed on the loop runs in
    /// the order it was handed over.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        if isOnLoop, turnDepth > 0 {
            deferredWork.append(.closure(work))
        } else {
            executeAfterOthers(work)
        }
    }

    /// Runs `work.runOnLoop()` on the loop, later, exactly as
    /// `execute(_:)` runs a closure (the same order, the same turns), with
    /// no closure made: during a turn the loop only holds `work` until then.
    public func execute(_ work: some LoopWork) {
        if isOnLoop, turnDepth > 0 {
            deferredWork.append(.object(work))
        } else {
            executeAfterOthers { work.runOnLoop() }
        }
    }

    /// Runs `work` on the loop in a Dispatch work item of its own, after the
    /// socket events, timers and work already waiting for the queue: for
    /// going on with a long job without starving the others, or (called
    /// during a turn) for acting once on what a whole round of ready
    /// sockets produced.
    public func executeAfterOthers(_ work: @escaping @Sendable () -> Void) {
        if let embedded { return embedded.enqueue(work) }
        queue.async { self.runTurn(work) }
    }

    /// Runs `work` on the loop once the round of ready sockets being served
    /// is over (see "Rounds"), as a turn of its own, in the order handed
    /// over. Called anywhere else (outside a round: a timer, executed work,
    /// another thread, an embedded loop) it is `executeAfterOthers`.
    public func executeAtEndOfRound(_ work: @escaping @Sendable () -> Void) {
        if isOnLoop, inRound {
            endOfRoundWork.append(work)
        } else {
            executeAfterOthers(work)
        }
    }

    /// Serves one round: `body` runs the turns of the sockets found ready;
    /// then the work handed to `executeAtEndOfRound` meanwhile runs, each
    /// piece a turn (what those pieces hand over waits for a later Dispatch
    /// item). Called only on the loop, by the poller, never nested.
    func runRound(_ body: () -> Void) {
        inRound = true
        body()
        inRound = false
        guard !endOfRoundWork.isEmpty else { return }
        let work = endOfRoundWork
        endOfRoundWork.removeAll(keepingCapacity: true)
        for piece in work { runTurn(piece) }
    }

    /// The loop's clock, in nanoseconds: Dispatch's uptime clock, or an
    /// embedded loop's hand-moved one. Timers are due on it.
    var uptimeNanoseconds: UInt64 {
        embedded?.now ?? DispatchTime.now().uptimeNanoseconds
    }

    /// The loop's clock as an instant, for deadlines that timers of this
    /// loop check: `ContinuousClock.now`, or on an embedded loop the instant
    /// its hand-moved clock shows.
    public var now: ContinuousClock.Instant {
        guard let embedded else { return .now }
        return embedded.origin + .nanoseconds(Int64(embedded.now - EmbeddedLoopState.start))
    }

    /// Embedded loops only: runs the work waiting (each piece a turn, and
    /// what it executes in turn) until none is left. Timers wait for
    /// `advanceTime(by:)`. Stops the program after a million pieces: work
    /// that keeps queueing more would never let a test go on.
    public func run() {
        guard let embedded else { preconditionFailure("run() steps only an embedded loop") }
        preconditionOnLoop()
        var budget = 1_000_000
        while let work = embedded.dequeue() {
            budget -= 1
            precondition(budget > 0, "embedded loop \(label): work keeps queueing more work")
            runTurn(work)
        }
    }

    /// Embedded loops only: moves the clock on by `delay`, firing every
    /// timer due on the way (earliest first, each as a turn, with the work
    /// each one leads to run before the clock moves past the next).
    public func advanceTime(by delay: Duration) {
        guard let embedded else { preconditionFailure("advanceTime(by:) steps only an embedded loop") }
        preconditionOnLoop()
        run()
        let target = delay.deadline(after: embedded.now)
        while let earliest = timers.earliestDeadline, earliest <= target {
            embedded.now = max(embedded.now, earliest)
            for timer in timers.popDue(at: embedded.now) {
                runTurn { timer.fire() }
            }
            run()
        }
        embedded.now = target
        run()
    }

    /// Runs `body` as a turn: connections written to meanwhile are flushed
    /// when the outermost turn ends, and then the work executed meanwhile
    /// runs, each piece as a turn of its own. Every handler Wire installs on
    /// `queue` runs through here (the poller's, once per ready socket).
    /// Called only on the loop.
    func runTurn(_ body: () -> Void) {
        let outermost = turnDepth == 0
        if outermost { turnThread.store(EventLoop.currentThread, ordering: .relaxed) }
        defer { if outermost { turnThread.store(0, ordering: .relaxed) } }
        turnDepth += 1
        body()
        turnDepth -= 1
        guard turnDepth == 0 else { return }
        flushEndOfTurn()
        // Pieces run by index (work they execute appends behind them); the
        // ones run are removed once, at the end, not one shift per piece.
        var ran = 0
        defer { deferredWork.removeFirst(ran) }
        while ran < deferredWork.count {
            guard ran < EventLoop.deferredWorkPerDrain else {
                // An empty turn on a later Dispatch item goes on with the rest.
                executeAfterOthers {}
                return
            }
            let work = deferredWork[ran]
            ran += 1
            turnDepth = 1
            work.run()
            turnDepth = 0
            flushEndOfTurn()
        }
    }

    /// Flushes the connections written to during the turn that just ended.
    private func flushEndOfTurn() {
        guard !endOfTurnFlushes.isEmpty else { return }
        // A flush may deliver `.writable`, whose handler writes again and
        // appends: walk by index until the list stops growing. Work it
        // executes joins `deferredWork`.
        turnDepth = 1
        var index = 0
        while index < endOfTurnFlushes.count {
            let connection = endOfTurnFlushes[index]
            index += 1
            connection.endOfTurnFlush()
        }
        endOfTurnFlushes.removeAll(keepingCapacity: true)
        turnDepth = 0
    }

    /// True while a turn runs: a write may then wait for its end. Called only on the loop.
    var isInTurn: Bool { turnDepth > 0 }

    /// Flushes `connection` when the current turn ends. Called only on the
    /// loop, during a turn, at most once per connection per turn.
    func flushAtEndOfTurn(_ connection: Connection) {
        endOfTurnFlushes.append(connection)
    }

    /// Runs `work` on the loop once, after `delay`, unless the returned timer is
    /// cancelled first. Keeping the returned timer is needed only to cancel it.
    @discardableResult
    public func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> LoopTimer {
        LoopTimer(on: self, after: delay, work)
    }

    /// How many timers wait (tests read it). Called only on the loop.
    var pendingTimerCount: Int { timers.count }

    /// Adds a pending timer to the heap, re-arming the source when it is the
    /// soonest. Called only on the loop, once per timer.
    func addTimer(_ timer: LoopTimer) {
        timers.insert(timer, deadline: timer.deadline)
        armTimerSource()
    }

    /// Takes a cancelled timer out of the heap (nothing when it fired or was
    /// taken out already). The source stays armed. Called only on the loop.
    func removeTimer(_ timer: LoopTimer) {
        timers.remove(timer)
    }

    /// Arms the source for the earliest timer unless it is armed for then or sooner.
    private func armTimerSource() {
        if embedded != nil { return }  // `advanceTime(by:)` fires them
        guard let earliest = timers.earliestDeadline else { return }
        if let armed = timerSourceDue, armed <= earliest { return }
        let source: DispatchSourceTimer
        if let timerSource {
            source = timerSource
        } else {
            source = DispatchSource.makeTimerSource(queue: queue)
            source.setEventHandler { [weak self] in self?.timerSourceFired() }
            timerSource = source
            source.activate()
        }
        timerSourceDue = earliest
        source.schedule(deadline: DispatchTime(uptimeNanoseconds: earliest), leeway: .milliseconds(1))
    }

    /// Runs every timer due now, each as a turn, then arms the source for the next.
    private func timerSourceFired() {
        timerSourceDue = nil
        // Taken out before any runs: a timer one of them cancels has then no
        // work left to run (`fire` checks), and one they add waits its turn.
        for timer in timers.popDue(at: uptimeNanoseconds) {
            runTurn { timer.fire() }
        }
        armTimerSource()
    }

    /// Stops a debug build when the caller is not on this loop.
    public func assertOnLoop(file: StaticString = #fileID, line: UInt = #line) {
        assert(isOnLoop, "not on event loop \(label)", file: file, line: line)
    }

    /// Stops any build when the caller is not on this loop. Used at the entry
    /// of every loop-confined method: a call from elsewhere would be a data race.
    public func preconditionOnLoop(file: StaticString = #fileID, line: UInt = #line) {
        precondition(isOnLoop, "not on event loop \(label)", file: file, line: line)
    }

    /// Registers a starting connection with the loop's `EventPoller` (made
    /// on first use). Called only on the loop.
    func register(_ connection: Connection, descriptor: Int32) throws(WireError) -> UInt64 {
        if let poller { return try poller.register(connection, descriptor: descriptor) }
        let made = try EventPoller(loop: self, waiting: waiting)
        poller = made
        return try made.register(connection, descriptor: descriptor)
    }

    /// Undoes `register`. Called only on the loop.
    func deregister(_ token: UInt64, descriptor: Int32) {
        poller?.deregister(token, descriptor: descriptor)
    }

    /// Lends the loop's read buffer to `body`, which must not let the pointer
    /// escape. Called only on the loop. `body` may hand the bytes read to a
    /// receiver that runs user code (`Connection`'s lending receiver): should
    /// that code read a socket of the loop in turn, the nested call gets a
    /// buffer of its own for its duration, so nothing lent is overwritten.
    func withReadScratch<Result>(_ body: (UnsafeMutableRawBufferPointer) -> Result) -> Result {
        assertOnLoop()
        guard !scratchLent else {
            let own = UnsafeMutableRawBufferPointer.allocate(byteCount: scratch.count, alignment: 16)
            defer { own.deallocate() }
            return body(own)
        }
        scratchLent = true
        defer { scratchLent = false }
        return body(scratch)
    }
}

/// What an embedded loop (`EventLoop.embedded()`) has instead of a
/// Dispatch queue: the thread that is the loop, its hand-moved clock, and
/// the work queued for `run()`.
///
/// `@unchecked Sendable`: `now` is touched only on the loop's thread; the
/// queue is behind a mutex, so work may be queued from any thread (it runs
/// only when the loop's thread calls `run()`).
final class EmbeddedLoopState: @unchecked Sendable {
    /// The thread that made the loop, as `EventLoop.currentThread` gives it.
    let thread: UInt
    /// Where the clock starts: far from 0, so deadlines before it do not wrap.
    static let start: UInt64 = 1_000_000_000_000
    /// The clock, in nanoseconds; moved only by `advanceTime(by:)`.
    var now: UInt64 = EmbeddedLoopState.start
    /// The `ContinuousClock` instant the clock's `start` stands for.
    let origin = ContinuousClock.now
    private let queue = Mutex<[@Sendable () -> Void]>([])

    init(thread: UInt) {
        self.thread = thread
    }

    func enqueue(_ work: @escaping @Sendable () -> Void) {
        queue.withLock { $0.append(work) }
    }

    func dequeue() -> (@Sendable () -> Void)? {
        queue.withLock { $0.isEmpty ? nil : $0.removeFirst() }
    }
}

extension Duration {
    /// The instant this long after `now`, in nanoseconds of the same clock:
    /// a negative duration gives `now`; one that overflows gives `UInt64.max`,
    /// a deadline never reached.
    func deadline(after now: UInt64) -> UInt64 {
        let (seconds, attoseconds) = components
        // Both components carry the duration's sign.
        guard seconds >= 0, attoseconds >= 0 else { return now }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        let (nanoseconds, carry) = whole.addingReportingOverflow(UInt64(attoseconds / 1_000_000_000))
        let (sum, late) = now.addingReportingOverflow(nanoseconds)
        return overflow || carry || late ? .max : sum
    }
}

/// An object with a piece of work of its own to run on its loop, handed to
/// `EventLoop.execute(_:)` as itself: for work an object schedules on a hot
/// path (a read to resume, a layer to run), where a closure would be one
/// allocation each time. The loop holds the object (a retain) until the
/// work runs; an object has one such piece (its flags say what is due).
public protocol LoopWork: AnyObject, Sendable {
    /// The work; runs on the loop, as a closure given to `execute` would.
    func runOnLoop()
}

/// One piece of `EventLoop.execute`'s work: a closure, or an object's own.
private enum DeferredWork {
    case closure(@Sendable () -> Void)
    case object(any LoopWork)

    func run() {
        switch self {
        case .closure(let work): work()
        case .object(let work): work.runOnLoop()
        }
    }
}
