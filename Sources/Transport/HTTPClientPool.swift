import HTTP
import Wire

/// Client connections kept per endpoint on one loop and reused: HTTP/1.1
/// connections one exchange at a time (several per endpoint, up to
/// `maxConnectionsPerEndpoint`), HTTP/2 one connection per endpoint carrying
/// every stream. Idle connections close after `idleTimeout`. The proxy keeps
/// one pool per loop for its upstream connections, so they outlive the
/// client connections that caused them.
///
/// Requests wait in order when no connection can take them; a new
/// connection is dialled while below the limit (for an endpoint whose version
/// is not yet known, one dial at a time, since it may turn out to be HTTP/2).
/// A dial that fails fails the requests waiting for it when no other
/// connection of the endpoint could serve them.
///
/// `@unchecked Sendable`: `loop` and `configuration` are immutable; the rest
/// is touched only on `loop`.
public final class HTTPClientPool: @unchecked Sendable {
    /// Pool limits and connection settings.
    public struct Configuration: Sendable {
        public var connection = HTTPClientConnection.Configuration()
        /// HTTP/1.1 connections per endpoint at most (HTTP/2 uses one).
        public var maxConnectionsPerEndpoint = 8
        /// A connection with no stream for this long is closed.
        public var idleTimeout: Duration = .seconds(60)
        public var connectTimeout: Duration = .seconds(10)

        public init() {}
    }

    public let loop: EventLoop
    public let configuration: Configuration
    private var endpoints: [HTTPEndpoint: EndpointConnections] = [:]
    /// The endpoint the last stream was asked for: a loop's requests mostly
    /// go to one endpoint (always, in reverse mode), and comparing it is
    /// far cheaper than hashing it (its host, TLS setup and proxy) to look
    /// it up in `endpoints` per request. One of `endpoints`' values, which
    /// are never dropped.
    private var lastEndpoint: EndpointConnections?
    private var isClosed = false
    private var nextTicket: UInt64 = 0

    /// Names one request waiting for a connection, so its owner can withdraw
    /// it (`withdraw`) while the pool has not handed it a stream yet.
    /// Holds its endpoint's connections by reference, so keeping and
    /// withdrawing a ticket copies no endpoint and looks nothing up.
    public struct Ticket: Hashable, @unchecked Sendable {
        let number: UInt64
        fileprivate let pool: EndpointConnections

        public static func == (lhs: Ticket, rhs: Ticket) -> Bool {
            lhs.number == rhs.number && lhs.pool === rhs.pool
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(number)
            hasher.combine(ObjectIdentifier(pool))
        }
    }

    /// A request waiting for a connection.
    fileprivate struct Waiter {
        let ticket: Ticket
        let head: HTTPRequestHead
        let framing: HTTP1Framing?
        let handler: (HTTPStreamEvent) -> Void
        let completion: (Result<HTTPClientStream, TransportError>) -> Void
    }

    /// One endpoint's connections, dials and queue. Made once per endpoint
    /// and never dropped from `endpoints`: the per-request path (serving,
    /// connection events, idle timers) holds it directly instead of looking
    /// the endpoint up again, which would copy and hash it each time.
    /// `@unchecked Sendable`: made, read and changed only on the pool's loop.
    fileprivate final class EndpointConnections: @unchecked Sendable {
        let endpoint: HTTPEndpoint
        var connections: [HTTPClientConnection] = []
        var dialing = 0
        var waiters: [Waiter] = []
        /// Learnt from the first connection that became ready (or known from the endpoint).
        var version: HTTPVersion?
        /// Idle watches by connection.
        var idleTimers: [ObjectIdentifier: IdleWatch] = [:]
        /// HTTP/2: how many streams the server serves on one connection, once
        /// a GOAWAY refused streams beyond that many (nginx
        /// `keepalive_requests`); nil while unknown. A connection that has
        /// carried this many takes no more, so bursts wider than it go to a
        /// further connection instead of being refused.
        var streamBudget: Int?
        /// HTTP/2: the streams each connection has carried so far.
        var streamsOpened: [ObjectIdentifier: Int] = [:]

        init(_ endpoint: HTTPEndpoint) {
            self.endpoint = endpoint
        }

        /// Whether `connection` may carry another stream within the learnt budget.
        func hasBudget(_ connection: HTTPClientConnection) -> Bool {
            guard let streamBudget, connection.version == .http2 else { return true }
            return streamsOpened[ObjectIdentifier(connection), default: 0] < streamBudget
        }

        /// Learns the budget from the server's GOAWAY on `connection`: it
        /// served the streams up to `lastStreamID` (client streams are odd:
        /// (last + 1) / 2 of them) and refused others the connection carried.
        /// A GOAWAY that refused nothing (idle timeout, shutdown) teaches nothing.
        func learn(goAwayAfter lastStreamID: Int, code: HTTP2ErrorCode, on connection: HTTPClientConnection) {
            let served = (lastStreamID + 1) / 2
            guard code == .noError, connection.version == .http2, served >= HTTPClientPool.minimumStreamBudget,
                  streamsOpened[ObjectIdentifier(connection), default: 0] > served else { return }
            streamBudget = min(streamBudget ?? served, served)
        }
    }

    /// The smallest per-connection stream budget the pool learns: a GOAWAY
    /// after fewer streams is taken for a one-off (a restart), not a limit.
    static let minimumStreamBudget = 8

    /// One connection's idle deadline and the timer that checks it. The
    /// timer is not remade per request (each new Dispatch timer, and each
    /// cancel, wakes Dispatch's manager thread): a request only clears the
    /// deadline, the next idle moment sets it again, and a timer that fires
    /// early re-arms for what is left.
    ///
    /// `@unchecked Sendable`: made, read and changed only on the pool's loop
    /// (its timer runs there too).
    fileprivate final class IdleWatch: @unchecked Sendable {
        var timer: LoopTimer?
        /// When the connection may be closed; nil while it serves a request.
        var deadline: ContinuousClock.Instant?

        init(deadline: ContinuousClock.Instant) {
            self.deadline = deadline
        }

        func cancel() {
            timer?.cancel()
            timer = nil
        }
    }

    public init(loop: EventLoop, configuration: Configuration = Configuration()) {
        self.loop = loop
        self.configuration = configuration
    }

    /// Opens a stream to `endpoint` on a pooled connection, dialling one when
    /// needed; `completion` gets the stream (send its body, then `sendEnd`,
    /// unless the head ended the request; see `HTTPClientConnection.openStream`)
    /// or why no connection could carry it. `handler` receives the response.
    /// `completion` runs on the loop, never inside this call, and exactly
    /// once unless the request is withdrawn first. Returns the request's
    /// ticket. Called only on the loop.
    @discardableResult
    public func openStream(to endpoint: HTTPEndpoint, _ head: HTTPRequestHead, framing: HTTP1Framing? = nil,
                           handler: @escaping (HTTPStreamEvent) -> Void,
                           completion: @escaping (Result<HTTPClientStream, TransportError>) -> Void) -> Ticket {
        loop.preconditionOnLoop()
        nextTicket += 1
        let pool = connections(for: endpoint)
        let ticket = Ticket(number: nextTicket, pool: pool)
        guard !isClosed else {
            let completion = LoopBound(completion, on: loop)
            loop.execute { completion.value(.failure(.invalidState("the connection pool is closed"))) }
            return ticket
        }
        pool.waiters.append(Waiter(ticket: ticket, head: head, framing: framing, handler: handler, completion: completion))
        loop.execute { [self] in serve(pool) }
        return ticket
    }

    /// Withdraws a request still waiting for a connection: its head is never
    /// sent and its completion never runs. A dial started for it goes on,
    /// and the connection it makes joins the pool idle (or serves the next
    /// waiter). Returns false when the request is no longer waiting (its
    /// completion already ran). Called only on the loop.
    @discardableResult
    public func withdraw(_ ticket: Ticket) -> Bool {
        loop.preconditionOnLoop()
        let pool = ticket.pool
        guard let index = pool.waiters.firstIndex(where: { $0.ticket == ticket }) else { return false }
        pool.waiters.remove(at: index)
        return true
    }

    /// Connections open or being dialled, over all endpoints. Read only on the loop.
    public var connectionCount: Int {
        loop.preconditionOnLoop()
        return endpoints.values.reduce(0) { $0 + $1.connections.count + $1.dialing }
    }

    /// How one pooled connection stands. The pool's invariant: every
    /// connection it holds is `.idle`, `.busy` or `.closed`, never `.stuck`.
    public enum ConnectionState: Sendable, Equatable {
        /// Open, carrying no stream, able to take the next request.
        case idle
        /// Carrying this many live streams (HTTP/1.1: one exchange at a time).
        case busy(streams: Int)
        /// Its channel is closed; the pool forgets it on its `.closed` event.
        case closed
        /// Open, carrying nothing and taking nothing: a connection that would
        /// hold a slot of `maxConnectionsPerEndpoint` forever.
        case stuck
    }

    /// The state of every connection the pool holds, over all endpoints
    /// (dials in progress are not included). Read only on the loop.
    public var connectionStates: [ConnectionState] {
        loop.preconditionOnLoop()
        return endpoints.values.flatMap { $0.connections.map(Self.state(of:)) }
    }

    private static func state(of connection: HTTPClientConnection) -> ConnectionState {
        guard connection.channel.isOpen else { return .closed }
        let streams = connection.activeStreamCount
        if streams > 0 { return .busy(streams: streams) }
        return connection.canOpenStream ? .idle : .stuck
    }

    /// Closes every connection and fails waiting requests; the pool takes no
    /// more. Gracefully (an exchange in progress finishes first) unless
    /// `resetting`: then every connection is reset at once and its open
    /// streams fail. Called only on the loop.
    public func close(resetting: Bool = false) {
        loop.preconditionOnLoop()
        isClosed = true
        for pool in endpoints.values {
            let waiters = pool.waiters
            pool.waiters.removeAll()
            waiters.forEach { $0.completion(.failure(.invalidState("the connection pool is closed"))) }
            pool.idleTimers.values.forEach { $0.cancel() }
            pool.idleTimers.removeAll()
            pool.connections.forEach { resetting ? $0.abort() : $0.close() }
        }
    }

    private func connections(for endpoint: HTTPEndpoint) -> EndpointConnections {
        if let last = lastEndpoint, last.endpoint == endpoint { return last }
        if let pool = endpoints[endpoint] {
            lastEndpoint = pool
            return pool
        }
        let pool = EndpointConnections(endpoint)
        switch endpoint.protocolChoice {
        case .http1: pool.version = .http1_1
        case .http2: pool.version = .http2
        case .negotiated: pool.version = endpoint.tls == nil ? .http1_1 : nil
        }
        endpoints[endpoint] = pool
        lastEndpoint = pool
        return pool
    }

    /// Hands waiting requests to connections that can take them; dials when allowed.
    private func serve(_ pool: EndpointConnections) {
        while !pool.waiters.isEmpty {
            guard let connection = pool.connections.first(where: { $0.canOpenStream && pool.hasBudget($0) }) else {
                if mayDial(pool) { dial(pool) }
                return
            }
            let waiter = pool.waiters.removeFirst()
            pool.idleTimers[ObjectIdentifier(connection)]?.deadline = nil
            do {
                let stream = try connection.openStream(waiter.head, framing: waiter.framing, handler: waiter.handler)
                if connection.version == .http2 { pool.streamsOpened[ObjectIdentifier(connection), default: 0] += 1 }
                waiter.completion(.success(stream))
            } catch {
                waiter.completion(.failure(error))
            }
        }
    }

    private func mayDial(_ pool: EndpointConnections) -> Bool {
        switch pool.version {
        case .http2?:
            // One connection carries every stream; a new one only when none can (all going away).
            return pool.dialing == 0
        case nil:
            return pool.dialing == 0 && pool.connections.isEmpty
        case .http1_0?, .http1_1?:
            return pool.connections.count + pool.dialing < configuration.maxConnectionsPerEndpoint
                && pool.dialing < pool.waiters.count
        }
    }

    private func dial(_ pool: EndpointConnections) {
        pool.dialing += 1
        let box = ConnectionReference()
        HTTPClientConnection.connect(
            to: pool.endpoint, on: loop, configuration: configuration.connection, connectTimeout: configuration.connectTimeout,
            events: { [self] event in
                if let connection = box.connection { connectionEvent(event, connection, pool) }
            },
            completion: { [self] result in
                pool.dialing -= 1
                switch result {
                case .success(let connection):
                    box.connection = connection
                    guard !isClosed else {
                        connection.close()
                        return
                    }
                    pool.version = connection.version
                    pool.connections.append(connection)
                    serve(pool)
                    armIdleTimerIfIdle(connection, pool)
                case .failure(let error):
                    guard pool.connections.isEmpty, pool.dialing == 0 else { return }
                    let waiters = pool.waiters
                    pool.waiters.removeAll()
                    waiters.forEach { $0.completion(.failure(error)) }
                }
            })
    }

    private func connectionEvent(_ event: HTTPClientConnectionEvent, _ connection: HTTPClientConnection,
                                 _ pool: EndpointConnections) {
        switch event {
        case .available:
            retireIfSpent(connection, pool)
            serve(pool)
            armIdleTimerIfIdle(connection, pool)
        case .goAway(let lastStreamID, let code):
            pool.learn(goAwayAfter: lastStreamID, code: code, on: connection)
            retireIfSpent(connection, pool)
            serve(pool)
        case .closed:
            pool.connections.removeAll { $0 === connection }
            pool.idleTimers.removeValue(forKey: ObjectIdentifier(connection))?.cancel()
            pool.streamsOpened.removeValue(forKey: ObjectIdentifier(connection))
            serve(pool)
        case .ready:
            break
        }
    }

    /// An HTTP/2 connection that can take no new stream (the server's
    /// GOAWAY, a close under way, its stream budget spent) is closed and
    /// leaves the pool once its last stream ended: nothing would use it
    /// again, and it would hold its descriptor until the server closed. (An
    /// HTTP/1.1 connection closes itself when it cannot be reused.)
    private func retireIfSpent(_ connection: HTTPClientConnection, _ pool: EndpointConnections) {
        guard connection.version == .http2, connection.activeStreamCount == 0,
              !(connection.canOpenStream && pool.hasBudget(connection)),
              pool.connections.contains(where: { $0 === connection }) else { return }
        pool.connections.removeAll { $0 === connection }
        pool.idleTimers.removeValue(forKey: ObjectIdentifier(connection))?.cancel()
        pool.streamsOpened.removeValue(forKey: ObjectIdentifier(connection))
        connection.close()
    }

    private func armIdleTimerIfIdle(_ connection: HTTPClientConnection, _ pool: EndpointConnections) {
        guard connection.activeStreamCount == 0, connection.canOpenStream else { return }
        let key = ObjectIdentifier(connection)
        let deadline = loop.now + configuration.idleTimeout
        if let watch = pool.idleTimers[key] {
            watch.deadline = deadline
            return
        }
        let watch = IdleWatch(deadline: deadline)
        pool.idleTimers[key] = watch
        scheduleIdleCheck(watch, connection, pool, after: configuration.idleTimeout)
    }

    /// Closes the connection once its deadline passed while idle; re-arms
    /// when the deadline moved; forgets the watch while the connection is busy.
    private func scheduleIdleCheck(_ watch: IdleWatch, _ connection: HTTPClientConnection, _ pool: EndpointConnections,
                                   after delay: Duration) {
        let key = ObjectIdentifier(connection)
        watch.timer = loop.schedule(after: delay) { [self] in
            guard pool.idleTimers[key] === watch else { return }
            guard let deadline = watch.deadline, connection.activeStreamCount == 0 else {
                pool.idleTimers[key] = nil
                return
            }
            let now = loop.now
            guard now >= deadline else {
                scheduleIdleCheck(watch, connection, pool, after: deadline - now)
                return
            }
            pool.idleTimers[key] = nil
            connection.close()
        }
    }
}

/// Lets a connection's event handler, made before the dial completes, find the connection.
private final class ConnectionReference {
    var connection: HTTPClientConnection?
}
