/// The upstream connections of one event loop, as a sans-io state machine:
/// which are connecting, which are idle, how many streams each carries, and
/// who is waiting for one. Connections are kept alive after an exchange and
/// reused by later exchanges of any client connection on the same loop.
///
/// An HTTP/1.1 connection carries one exchange at a time; an HTTP/2
/// connection as many as its peer's stream limit. A waiter asks with
/// `acquire`; the pool answers with `.assign` (an idle or fresh connection)
/// or `.fail` (the connection made for it could not be). New connections
/// are made only while waiters outnumber the connections being made.
///
/// A value used on its loop only. `Waiter` names whoever waits (an exchange).
public struct UpstreamPool<Waiter: Hashable & Sendable> {
    /// What the pool asks its driver to do.
    public enum Command: Hashable, Sendable {
        /// Open a connection to `target` (resolve, connect, TLS) and report
        /// `connected` or `connectFailed` with this id.
        case connect(ConnectionID, UpstreamTarget)
        /// Hand this connection to the waiter (a new stream on it).
        case assign(Waiter, ConnectionID)
        /// Tell the waiter no connection could be made.
        case fail(Waiter, ProxyError)
        /// Close this idle connection (more idle ones than the pool keeps).
        case close(ConnectionID)
    }

    /// One upstream connection.
    struct Entry {
        let target: UpstreamTarget
        var state: State
    }

    enum State {
        case connecting
        /// Usable: `active` exchanges on it, at most `capacity`.
        case ready(active: Int, capacity: Int)
    }

    private var entries: [ConnectionID: Entry] = [:]
    /// Waiters per target, oldest first.
    private var waiting: [UpstreamTarget: [Waiter]] = [:]
    private let numbering: ConnectionNumbering
    /// Idle connections kept per target; more are closed when released.
    public let maxIdlePerTarget: Int

    /// `numbering` names new connections (shared by every loop of a proxy).
    public init(numbering: ConnectionNumbering, maxIdlePerTarget: Int = 8) {
        self.numbering = numbering
        self.maxIdlePerTarget = max(1, maxIdlePerTarget)
    }

    /// Connections known to the pool (connecting or ready).
    public var connectionCount: Int { entries.count }

    /// Idle connections to `target`.
    public func idleCount(_ target: UpstreamTarget) -> Int {
        entries.values.filter { entry in
            guard entry.target == target, case .ready(let active, _) = entry.state else { return false }
            return active == 0
        }.count
    }

    /// Asks for a stream to `target`.
    public mutating func acquire(_ target: UpstreamTarget, for waiter: Waiter) -> [Command] {
        if let id = spareConnection(to: target) {
            take(id)
            return [.assign(waiter, id)]
        }
        waiting[target, default: []].append(waiter)
        return connectIfShort(target)
    }

    /// The waiter no longer needs a stream (its exchange ended first).
    public mutating func cancel(_ waiter: Waiter) {
        for (target, waiters) in waiting {
            guard let index = waiters.firstIndex(of: waiter) else { continue }
            waiting[target]?.remove(at: index)
            if waiting[target]?.isEmpty == true { waiting[target] = nil }
            return
        }
    }

    /// A connection is ready and carries up to `capacity` exchanges at once
    /// (1 for HTTP/1.1, the peer's stream limit for HTTP/2).
    public mutating func connected(_ id: ConnectionID, capacity: Int) -> [Command] {
        guard let entry = entries[id] else { return [.close(id)] }
        entries[id]?.state = .ready(active: 0, capacity: max(1, capacity))
        return serveWaiters(entry.target)
    }

    /// A connection could not be made: the oldest waiter it was made for fails.
    public mutating func connectFailed(_ id: ConnectionID, _ error: ProxyError) -> [Command] {
        guard let entry = entries.removeValue(forKey: id) else { return [] }
        var commands: [Command] = []
        if var waiters = waiting[entry.target], !waiters.isEmpty {
            commands.append(.fail(waiters.removeFirst(), error))
            waiting[entry.target] = waiters.isEmpty ? nil : waiters
        }
        return commands + connectIfShort(entry.target)
    }

    /// An exchange is done with its stream on `id`; the connection stays.
    public mutating func released(_ id: ConnectionID) -> [Command] {
        guard let entry = entries[id], case .ready(let active, let capacity) = entry.state else { return [] }
        entries[id]?.state = .ready(active: max(0, active - 1), capacity: capacity)
        let commands = serveWaiters(entry.target)
        if active - 1 == 0, commands.isEmpty, idleCount(entry.target) > maxIdlePerTarget {
            entries[id] = nil
            return [.close(id)]
        }
        return commands
    }

    /// A connection closed (the server's keep-alive ended, a failure, or the
    /// driver closed it). Exchanges on it were told by the driver.
    public mutating func closed(_ id: ConnectionID) -> [Command] {
        guard let entry = entries.removeValue(forKey: id) else { return [] }
        return connectIfShort(entry.target)
    }

    /// The peer's stream limit changed (HTTP/2 SETTINGS).
    public mutating func capacityChanged(_ id: ConnectionID, to capacity: Int) -> [Command] {
        guard let entry = entries[id], case .ready(let active, _) = entry.state else { return [] }
        entries[id]?.state = .ready(active: active, capacity: max(1, capacity))
        return serveWaiters(entry.target)
    }

    // MARK: Helpers

    /// A ready connection to `target` with room for one more exchange; the busiest first (HTTP/2 reuse).
    private func spareConnection(to target: UpstreamTarget) -> ConnectionID? {
        var best: (id: ConnectionID, active: Int)?
        for (id, entry) in entries where entry.target == target {
            guard case .ready(let active, let capacity) = entry.state, active < capacity else { continue }
            if best == nil || active > best!.active || (active == best!.active && id < best!.id) {
                best = (id, active)
            }
        }
        return best?.id
    }

    private mutating func take(_ id: ConnectionID) {
        guard case .ready(let active, let capacity) = entries[id]?.state else { return }
        entries[id]?.state = .ready(active: active + 1, capacity: capacity)
    }

    /// Assigns spare streams to waiters of `target`, oldest first.
    private mutating func serveWaiters(_ target: UpstreamTarget) -> [Command] {
        var commands: [Command] = []
        while var waiters = waiting[target], !waiters.isEmpty, let id = spareConnection(to: target) {
            take(id)
            commands.append(.assign(waiters.removeFirst(), id))
            waiting[target] = waiters.isEmpty ? nil : waiters
        }
        return commands
    }

    /// Starts connections while waiters outnumber those being made.
    private mutating func connectIfShort(_ target: UpstreamTarget) -> [Command] {
        let waiters = waiting[target]?.count ?? 0
        var connecting = entries.values.filter { entry in
            guard entry.target == target, case .connecting = entry.state else { return false }
            return true
        }.count
        var commands: [Command] = []
        while connecting < waiters {
            let id = numbering.next(.upstream)
            entries[id] = Entry(target: target, state: .connecting)
            commands.append(.connect(id, target))
            connecting += 1
        }
        return commands
    }
}
