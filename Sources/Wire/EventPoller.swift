internal import CEpoll
import Dispatch
import Glibc
import Synchronization

/// The readiness of every started `Connection` of one loop, gathered in one
/// `epoll` instance, waited for in one of two ways (`EventLoop.Waiting`): a
/// single Dispatch read source over the epoll descriptor, or a thread of the
/// loop's own blocking in `epoll_wait` (`PollerThread`).
///
/// Why one epoll: with a Dispatch source per socket, every event of every
/// socket goes through libdispatch's manager thread twice — once to deliver
/// it and once to re-arm the source after its handler ran (an `eventfd`
/// write, a thread wake-up and an `epoll_ctl` each time). Under load that
/// bookkeeping cost more CPU than the proxying. Here a socket is registered
/// once, edge-triggered, for input, output and hang-up, and never modified
/// again: one wake-up hands the loop every socket that became ready
/// meanwhile, and the loop serves them all in it.
///
/// Edge-triggered registration means an event announces a *change*. A
/// connection therefore always reads until `EAGAIN` or EOF, or remembers that
/// it stopped early (`Connection.readStoppedEarly`) and reads again by itself;
/// and it writes until `EAGAIN` before waiting for an output event. Pausing
/// and resuming reading, and waiting for the kernel to take more bytes, cost
/// no system call at all.
///
/// Invariants: `registrations` holds exactly the connections registered and
/// not yet deregistered (it keeps them alive, as their sources did); a token
/// is never reused (0 is the poller thread's wake-up, never a connection's),
/// so an event still queued for a connection that left during the same
/// wake-up is dropped, even if its descriptor number was reused meanwhile.
/// Loop-confined: every method runs on `loop` (the poller thread's turns run
/// inside `loop.queue.sync`, so they are on the loop too).
final class EventPoller {
    private unowned let loop: EventLoop
    private let epoll: Int32
    private let waiter: Waiter
    private var registrations: [UInt64: Connection] = [:]
    private var nextToken: UInt64 = 1

    /// What wakes the loop for the epoll's events.
    private enum Waiter {
        /// A Dispatch read source on the epoll descriptor (its cancel handler
        /// closes it), and the batch `serveReadySockets` reads events into.
        case source(SourceGate, events: UnsafeMutableRawPointer)
        /// A thread of the loop's own (it closes the descriptor when it ends).
        case thread(PollerThread)
    }

    /// Events taken per `epoll_wait`; a full batch is followed by another.
    static let batchSize = 64

    /// Makes the epoll instance and starts waiting on it as `waiting` says.
    /// Fails only when the process is out of descriptors, memory or threads.
    init(loop: EventLoop, waiting: EventLoop.Waiting) throws(WireError) {
        let epoll = epoll_create1(Int32(O_CLOEXEC))
        guard epoll >= 0 else { throw WireError.fromErrno(errno, call: "epoll_create1") }
        self.loop = loop
        self.epoll = epoll
        switch waiting {
        case .dispatchSource:
            let read = DispatchSource.makeReadSource(fileDescriptor: epoll, queue: loop.queue)
            read.setCancelHandler { Glibc.close(epoll) }
            waiter = .source(SourceGate(read),
                             events: .allocate(byteCount: intact_epoll_event_size() * EventPoller.batchSize, alignment: 16))
            read.setEventHandler { [unowned self] in self.serveReadySockets() }
            if case .source(let gate, _) = waiter { gate.resume() }
        case .thread:
            let thread: PollerThread
            do {
                thread = try PollerThread(epoll: epoll, queue: loop.queue, label: loop.label)
            } catch {
                Glibc.close(epoll)
                throw error
            }
            waiter = .thread(thread)
            do {
                try thread.start(serving: self, of: loop)
            } catch {
                thread.abandon()
                throw error
            }
        }
    }

    deinit {
        switch waiter {
        case .source(let gate, let events):
            gate.cancel()
            events.deallocate()
        case .thread(let thread):
            thread.stop()
        }
    }

    /// Registers `connection`'s socket `descriptor` for input, output and hang-up,
    /// edge-triggered; returns the token `deregister` takes. Already-pending
    /// input is announced at once.
    func register(_ connection: Connection, descriptor: Int32) throws(WireError) -> UInt64 {
        let token = nextToken
        nextToken += 1
        guard intact_epoll_add(epoll, descriptor, intact_epoll_socket_events, token) == 0 else {
            throw WireError.fromErrno(errno, call: "epoll_ctl")
        }
        registrations[token] = connection
        return token
    }

    /// Stops announcing `descriptor` (still open) and lets go of its connection.
    func deregister(_ token: UInt64, descriptor: Int32) {
        guard registrations.removeValue(forKey: token) != nil else { return }
        _ = intact_epoll_delete(epoll, descriptor)
    }

    /// The Dispatch source's handler: serves every socket that became ready,
    /// as one round, until `epoll_wait` comes back short of a full batch.
    private func serveReadySockets() {
        guard case .source(_, let events) = waiter else { return }
        loop.runRound {
            while true {
                let count = intact_epoll_wait(epoll, events, Int32(EventPoller.batchSize), 0)
                if count < 0 {
                    if errno == EINTR { continue }
                    return
                }
                serve(events, count: count)
                if Int(count) < EventPoller.batchSize { return }
            }
        }
    }

    /// Serves the `count` events of `events`, each ready socket in its own
    /// loop turn (so each one's writes are flushed before the next is
    /// served). Events of connections gone meanwhile, and the poller
    /// thread's wake-up, are skipped. Called only on the loop.
    func serve(_ events: UnsafeRawPointer, count: Int32) {
        for index in 0..<count {
            guard let connection = registrations[intact_epoll_token_at(events, index)] else { continue }
            let bits = intact_epoll_events_at(events, index)
            loop.runTurn { connection.pollEvent(bits) }
        }
    }

    /// One round (`EventLoop.runRound`) of `serve` over `count` events. Called only on the loop.
    func serveRound(_ events: UnsafeRawPointer, count: Int32) {
        loop.runRound { serve(events, count: count) }
    }
}

/// The thread of a loop made with `EventLoop.Waiting.thread`: it blocks in
/// `epoll_wait` on the loop's epoll and serves what comes inside
/// `loop.queue.sync`, so the serving runs on the loop (the serial queue's
/// ownership rule holds: work `execute`d from elsewhere and the loop's timers
/// still run on the queue, never at the same time) but on this thread, with
/// no Dispatch worker woken per event.
///
/// Life: `start(serving:of:)` spawns it (detached); `stop()` (the poller's
/// deinit) raises `stopping` and signals the wake-up eventfd (token 0 in the
/// epoll); the thread then leaves its loop, closes the epoll descriptor and
/// the eventfd, and ends: only then, so `stop()` never signals a closed
/// descriptor. It holds the poller and its loop only weakly: a wake-up that
/// finds either gone or going (released on another thread meanwhile) is not
/// served, and a round holds the loop, which the poller reaches unowned.
///
/// `@unchecked Sendable`: the descriptors and the queue are immutable;
/// `poller` and `loop` are written once before the thread starts and read only by it;
/// `stopping` is atomic.
final class PollerThread: @unchecked Sendable {
    private let epoll: Int32
    private let wake: Int32
    private let queue: DispatchQueue
    private let name: String
    private weak var poller: EventPoller?
    /// The poller's loop, held only while a round is served: the poller
    /// reaches it unowned, and a loop being released on another thread
    /// while a wake-up was on its way must not be served (a weak load of an
    /// object already deinitialising gives nil).
    private weak var loop: EventLoop?
    private let stopping = Atomic<Bool>(false)

    /// Adds the wake-up eventfd to `epoll`. On a throw the caller still owns `epoll`.
    init(epoll: Int32, queue: DispatchQueue, label: String) throws(WireError) {
        let wake = intact_epoll_add_wake(epoll, 0)
        guard wake >= 0 else { throw WireError.fromErrno(errno, call: "eventfd") }
        self.epoll = epoll
        self.wake = wake
        self.queue = queue
        // The kernel keeps 15 bytes of a thread's name: the loop label's tail tells loops apart.
        self.name = String(decoding: label.utf8.suffix(15), as: UTF8.self)
    }

    /// Spawns the thread, which serves `poller` until `stop()`. Once.
    func start(serving poller: EventPoller, of loop: EventLoop) throws(WireError) {
        self.poller = poller
        self.loop = loop
        let context = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { context in
            let me = Unmanaged<PollerThread>.fromOpaque(context!).takeRetainedValue()
            me.run()
            return nil
        }, context)
        guard status == 0 else {
            Unmanaged<PollerThread>.fromOpaque(context).release()
            throw WireError.system(call: "pthread_create", errno: status)
        }
        pthread_detach(thread)
    }

    /// Undoes `init` when `start` failed: closes both descriptors.
    func abandon() {
        Glibc.close(wake)
        Glibc.close(epoll)
    }

    /// Asks the thread to end; it closes the descriptors on its way out. Any thread, once.
    func stop() {
        stopping.store(true, ordering: .releasing)
        _ = intact_eventfd_signal(wake)
    }

    /// The thread's body: wait, serve on the loop, until stopped.
    private func run() {
        _ = intact_thread_set_name(name)
        let events = UnsafeMutableRawPointer.allocate(byteCount: intact_epoll_event_size() * EventPoller.batchSize,
                                                      alignment: 16)
        // One work item for every round, made once: `queue.sync` with a
        // closure turned it into a block and copied it to the heap on each
        // wake-up (1.8 mallocs per proxied request at one connection). It
        // reads the round from `round`, which only this thread writes, each
        // time just before the item runs on it.
        var round = Round(events: events)
        let serve = DispatchWorkItem { [unowned self] in
            // Gone, or going (its deinit is about to call `stop()`): nothing
            // to serve. The thread waits for `stop()` rather than leaving at
            // once, so the eventfd `stop()` signals is still open then.
            guard let loop = self.loop, let poller = self.poller else { return }
            withExtendedLifetime(loop) { poller.serveRound(round.events, count: round.count) }
        }
        defer {
            events.deallocate()
            Glibc.close(wake)
            Glibc.close(epoll)
        }
        while !stopping.load(ordering: .acquiring) {
            let count = intact_epoll_wait(epoll, events, Int32(EventPoller.batchSize), -1)
            if count < 0 {
                if errno == EINTR { continue }
                return
            }
            if stopping.load(ordering: .acquiring) { return }
            round.count = count
            queue.sync(execute: serve)
        }
    }

    /// What one wake-up found: the events `epoll_wait` wrote, and how many.
    private struct Round {
        let events: UnsafeMutableRawPointer
        var count: Int32 = 0
    }
}
