internal import CEpoll
import Dispatch
import Glibc

/// The readiness of every started `Connection` of one loop, gathered in one
/// `epoll` instance whose own readiness is a single Dispatch read source.
///
/// Why: with a Dispatch source per socket, every event of every socket goes
/// through libdispatch's manager thread twice — once to deliver it and once
/// to re-arm the source after its handler ran (an `eventfd` write, a thread
/// wake-up and an `epoll_ctl` each time). Under load that bookkeeping cost
/// more CPU than the proxying. Here a socket is registered once, edge-
/// triggered, for input, output and hang-up, and never modified again: one
/// Dispatch event hands the loop every socket that became ready meanwhile,
/// and the loop serves them all in that wake-up.
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
/// is never reused, so an event still queued for a connection that left
/// during the same wake-up is dropped, even if its descriptor number was
/// reused meanwhile. Loop-confined: every method runs on `loop`.
final class EventPoller {
    private unowned let loop: EventLoop
    private let epoll: Int32
    private let source: SourceGate
    private var registrations: [UInt64: Connection] = [:]
    private var nextToken: UInt64 = 1
    /// A batch of `struct epoll_event`, laid out by C (see CEpoll's shim).
    private let events: UnsafeMutableRawPointer

    /// Events taken per `epoll_wait`; a full batch is followed by another.
    static let batchSize = 64

    /// Makes the epoll instance and its Dispatch source (running at once).
    /// Fails only when the process is out of descriptors or memory.
    init(loop: EventLoop) throws(WireError) {
        let epoll = epoll_create1(Int32(O_CLOEXEC))
        guard epoll >= 0 else { throw WireError.fromErrno(errno, call: "epoll_create1") }
        self.loop = loop
        self.epoll = epoll
        events = .allocate(byteCount: intact_epoll_event_size() * EventPoller.batchSize, alignment: 16)
        let read = DispatchSource.makeReadSource(fileDescriptor: epoll, queue: loop.queue)
        source = SourceGate(read)
        read.setEventHandler { [unowned self] in self.serveReadySockets() }
        read.setCancelHandler { Glibc.close(epoll) }
        source.resume()
    }

    deinit {
        source.cancel()
        events.deallocate()
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
    /// each in its own loop turn (so each one's writes are flushed before the
    /// next is served), until `epoll_wait` comes back short of a full batch.
    private func serveReadySockets() {
        while true {
            let count = intact_epoll_wait(epoll, events, Int32(EventPoller.batchSize), 0)
            if count < 0 {
                if errno == EINTR { continue }
                return
            }
            for index in 0..<count {
                guard let connection = registrations[intact_epoll_token_at(events, index)] else { continue }
                let bits = intact_epoll_events_at(events, index)
                loop.runTurn { connection.pollEvent(bits) }
            }
            if Int(count) < EventPoller.batchSize { return }
        }
    }
}
