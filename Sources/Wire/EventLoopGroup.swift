import Glibc
import Synchronization

/// A fixed set of event loops handed out round-robin, so connections spread
/// over the cores. Each connection stays on the loop it was given.
///
/// `Sendable`: the loops never change and the cursor is an atomic.
public final class EventLoopGroup: Sendable {
    /// The loops, in the order `next()` hands them out.
    public let loops: [EventLoop]
    private let cursor = Atomic<Int>(0)

    /// One loop per online core, at least one.
    public static var defaultLoopCount: Int {
        max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
    }

    /// Makes `loopCount` loops labelled `label-0`, `label-1`, …, each waiting for its sockets as `waiting` says.
    public init(loopCount: Int = EventLoopGroup.defaultLoopCount, label: String = "intact.wire.loop",
                waiting: EventLoop.Waiting = .default) {
        precondition(loopCount > 0, "an event loop group needs at least one loop")
        self.loops = (0..<loopCount).map { EventLoop(label: "\(label)-\($0)", waiting: waiting) }
    }

    /// The next loop, round-robin. Safe from any thread.
    public func next() -> EventLoop {
        let ticket = cursor.wrappingAdd(1, ordering: .relaxed).oldValue
        return loops[Int(UInt(bitPattern: ticket) % UInt(loops.count))]
    }
}
