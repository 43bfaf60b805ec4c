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
/// The pool is the thin driver of `StateMachine`, which makes every one of
/// these decisions as a value (events in, actions out, no I/O): the pool
/// holds what the machine cannot — the connections, their timers, the
/// callers' callbacks — feeds it their events, and carries out its actions.
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
    /// Every decision: which connection serves a request, when to dial,
    /// retire, close or time out. The pool carries out what it returns.
    private var machine: StateMachine
    /// The machine's endpoint for each endpoint asked for.
    private var endpointIDs: [HTTPEndpoint: StateMachine.EndpointID] = [:]
    /// The endpoint each machine endpoint dials, by index.
    private var endpointList: [HTTPEndpoint] = []
    /// The endpoint the last stream was asked for: a loop's requests mostly
    /// go to one endpoint (always, in reverse mode), and comparing it is
    /// far cheaper than hashing it (its host, TLS setup and proxy) to look
    /// it up per request.
    private var lastEndpoint: (HTTPEndpoint, StateMachine.EndpointID)?
    /// The connections the machine pools (and those it closed, until their
    /// `.closed`), each with its idle timer. A list searched from the front:
    /// a loop holds a few connections, and comparing ids is cheaper than
    /// hashing them (several lookups per request).
    private var held: [Held] = []
    /// The requests waiting, oldest first, with what the caller gave (the
    /// machine opens the oldest first, so the one asked for is nearly always
    /// at the front).
    private var waiters: [(request: StateMachine.RequestID, waiter: Waiter)] = []

    /// One connection the pool holds.
    private struct Held {
        let id: StateMachine.ConnectionID
        let connection: HTTPClientConnection
        /// Armed while the machine watches the connection for idleness.
        var idleTimer: LoopTimer?
    }
    private var nextTicket: UInt64 = 0

    /// Names one request waiting for a connection, so its owner can withdraw
    /// it (`withdraw`) while the pool has not handed it a stream yet.
    public struct Ticket: Hashable, Sendable {
        let request: StateMachine.RequestID
        let endpoint: StateMachine.EndpointID
    }

    /// A request waiting for a connection: what the caller gave.
    private struct Waiter {
        let head: HTTPRequestHead
        let framing: HTTP1Framing?
        let handler: (HTTPStreamEvent) -> Void
        let completion: (Result<HTTPClientStream, TransportError>) -> Void
    }

    public init(loop: EventLoop, configuration: Configuration = Configuration()) {
        self.loop = loop
        self.configuration = configuration
        machine = StateMachine(maxConnectionsPerEndpoint: configuration.maxConnectionsPerEndpoint,
                               idleTimeout: configuration.idleTimeout)
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
        let id = endpointID(for: endpoint)
        let ticket = Ticket(request: StateMachine.RequestID(number: nextTicket), endpoint: id)
        waiters.append((ticket.request, Waiter(head: head, framing: framing, handler: handler, completion: completion)))
        let action = machine.enqueue(ticket.request, for: id)
        loop.execute { [self] in
            perform(action)
            perform(machine.serve(id, now: loop.now, facts: facts))
        }
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
        guard machine.withdraw(ticket.request, for: ticket.endpoint) else { return false }
        _ = takeWaiter(ticket.request)
        return true
    }

    /// Connections open or being dialled, over all endpoints. Read only on the loop.
    public var connectionCount: Int {
        loop.preconditionOnLoop()
        return machine.connectionCount
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
        return machine.connectionIDs.compactMap { id in heldIndex(id).map { Self.state(of: held[$0].connection) } }
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
        perform(machine.close(resetting: resetting))
    }

    private func endpointID(for endpoint: HTTPEndpoint) -> StateMachine.EndpointID {
        if let (last, id) = lastEndpoint, last == endpoint { return id }
        if let id = endpointIDs[endpoint] {
            lastEndpoint = (endpoint, id)
            return id
        }
        let versionState: StateMachine.VersionState
        switch endpoint.protocolChoice {
        case .http1: versionState = .http1
        case .http2: versionState = .http2(streamBudget: nil)
        case .negotiated: versionState = endpoint.tls == nil ? .http1 : .negotiating
        }
        let id = machine.addEndpoint(versionState)
        endpointIDs[endpoint] = id
        endpointList.append(endpoint)
        lastEndpoint = (endpoint, id)
        return id
    }

    private func heldIndex(_ id: StateMachine.ConnectionID) -> Int? {
        held.firstIndex { $0.id == id }
    }

    /// Takes the request's callbacks out of the queue.
    private func takeWaiter(_ request: StateMachine.RequestID) -> Waiter? {
        if let first = waiters.first, first.request == request {
            waiters.removeFirst()
            return first.waiter
        }
        guard let index = waiters.firstIndex(where: { $0.request == request }) else { return nil }
        return waiters.remove(at: index).waiter
    }

    /// What a connection can take now, for the machine's decisions.
    private func facts(_ id: StateMachine.ConnectionID) -> StateMachine.Facts {
        guard let index = heldIndex(id) else { return .gone }
        let connection = held[index].connection
        return StateMachine.Facts(canOpenStream: connection.canOpenStream, activeStreams: connection.activeStreamCount)
    }

    // MARK: Carrying out the machine's actions

    /// Carries out `action`: the connection action, the dial, then the
    /// request action (an open reports back to the machine, which may ask
    /// for the next one).
    private func perform(_ action: StateMachine.Action) {
        var action = action
        while true {
            perform(action.connection)
            if let dial = action.dial { self.dial(dial) }
            switch action.request {
            case .none:
                return
            case .fail(let requests, let failure):
                let error: TransportError
                switch failure {
                case .poolClosed: error = .invalidState("the connection pool is closed")
                case .dialFailed(let dialError): error = dialError
                }
                for request in requests { takeWaiter(request)?.completion(.failure(error)) }
                return
            case .open(let request, let id):
                let succeeded = open(request, on: id)
                action = machine.streamOpened(on: id, succeeded: succeeded, now: loop.now, facts: facts)
            }
        }
    }

    private func perform(_ action: StateMachine.ConnectionAction) {
        switch action {
        case .none:
            return
        case .close(let id):
            guard let index = heldIndex(id) else { return }
            held[index].idleTimer?.cancel()
            held[index].idleTimer = nil
            held[index].connection.close()
        case .closeAll(let resetting):
            for index in held.indices {
                held[index].idleTimer?.cancel()
                held[index].idleTimer = nil
            }
            for entry in held {
                if resetting { entry.connection.abort() } else { entry.connection.close() }
            }
        case .armIdleTimer(let id, let delay):
            guard let index = heldIndex(id) else { return }
            held[index].idleTimer = loop.schedule(after: delay) { [self] in
                if let index = heldIndex(id) { held[index].idleTimer = nil }
                perform(machine.idleTimerFired(id, now: loop.now, facts: facts(id)))
            }
        }
    }

    /// Opens the request's stream on the connection and completes it; false
    /// when the connection refused it (the request failed).
    private func open(_ request: StateMachine.RequestID, on id: StateMachine.ConnectionID) -> Bool {
        guard let waiter = takeWaiter(request) else { return false }
        guard let index = heldIndex(id) else {
            waiter.completion(.failure(.invalidState("the connection is not ready")))
            return false
        }
        do {
            let stream = try held[index].connection.openStream(waiter.head, framing: waiter.framing, handler: waiter.handler)
            waiter.completion(.success(stream))
            return true
        } catch {
            waiter.completion(.failure(error))
            return false
        }
    }

    private func dial(_ id: StateMachine.ConnectionID) {
        HTTPClientConnection.connect(
            to: endpointList[id.endpoint.index], on: loop, configuration: configuration.connection,
            connectTimeout: configuration.connectTimeout,
            events: { [self] event in connectionEvent(event, id) },
            completion: { [self] result in
                switch result {
                case .success(let connection):
                    held.append(Held(id: id, connection: connection))
                    perform(machine.dialSucceeded(id, version: connection.version ?? .http1_1, now: loop.now,
                                                  facts: facts))
                case .failure(let error):
                    perform(machine.dialFailed(id, error: error))
                }
            })
    }

    /// A pooled connection's event (the dialer forwards them once the dial
    /// succeeded, so `held` has it; the machine ignores connections
    /// it no longer pools).
    private func connectionEvent(_ event: HTTPClientConnectionEvent, _ id: StateMachine.ConnectionID) {
        switch event {
        case .available:
            perform(machine.available(id, now: loop.now, facts: facts))
        case .goAway(let lastStreamID, let code):
            perform(machine.goAway(id, lastStreamID: lastStreamID, code: code, now: loop.now, facts: facts))
        case .closed:
            if let index = heldIndex(id) { held.remove(at: index).idleTimer?.cancel() }
            perform(machine.closed(id, now: loop.now, facts: facts))
        case .ready:
            break
        }
    }
}
