import HTTP

extension HTTPClientPool {
    /// The pool's decisions, as a value: it takes events (a request queued,
    /// a dial done or failed, a stream opened, a connection available,
    /// going away or closed, an idle timer, the pool closing) and returns
    /// the `Action` the pool carries out. It does no I/O, holds no
    /// connection, timer or closure, and reads no clock: `HTTPClientPool`
    /// is its driver, and its model test drives it with no socket.
    ///
    /// What a connection can take is the connection's to know (its engine
    /// reads the server's SETTINGS, GOAWAY and keep-alive): events that may
    /// hand out streams take `facts`, a look at each connection as it is
    /// now, called during the event only, never kept.
    ///
    /// Serving is stepwise: `.open` names one request and one connection;
    /// the driver opens the stream and reports `streamOpened`, which serves
    /// the next waiting request (each open changes what the connection can
    /// take). When serving stops, a connection that was to be checked is
    /// given an idle deadline.
    ///
    /// Invariants: a request waits in exactly one endpoint's queue until it
    /// is opened, failed or withdrawn; a connection is in its endpoint's
    /// list from its dial's success until it closes or is retired; a dial in
    /// flight is counted in `dialing` until it succeeds or fails; once
    /// closed, nothing is handed out and every dial that succeeds is closed.
    struct StateMachine {
        /// One request, numbered by the pool.
        struct RequestID: Hashable {
            let number: UInt64
        }

        /// One endpoint's index in `endpoints`, given by `addEndpoint`.
        struct EndpointID: Hashable {
            let index: Int
        }

        /// One connection (or its dial), numbered by the machine (each number
        /// once, over all endpoints); it names its endpoint.
        struct ConnectionID: Hashable, CustomStringConvertible {
            let endpoint: EndpointID
            let number: UInt64
            var description: String { "connection \(number)" }

            /// The number alone tells connections apart: one hash combine, not two.
            func hash(into hasher: inout Hasher) {
                hasher.combine(number)
            }
        }

        /// What a connection can take now, as it says itself.
        struct Facts: Equatable {
            /// Ready, and (HTTP/1.1) idle and kept alive, or (HTTP/2) not going away.
            var canOpenStream: Bool
            var activeStreams: Int

            /// A connection the driver no longer holds.
            static let gone = Facts(canOpenStream: false, activeStreams: 0)
        }

        /// Why requests fail without a stream.
        enum Failure: Equatable {
            case poolClosed
            /// The endpoint's last dial failed with no connection left to serve them.
            case dialFailed(TransportError)
        }

        /// What happens to requests.
        enum RequestAction: Equatable {
            case none
            /// Open `request`'s stream on the connection, then report `streamOpened`.
            case open(RequestID, on: ConnectionID)
            case fail([RequestID], Failure)
        }

        /// What happens to connections.
        enum ConnectionAction: Equatable {
            case none
            /// Close it gracefully (retired, idle too long, or dialled after the pool closed).
            case close(ConnectionID)
            /// The pool closed: close every connection (reset them when
            /// `resetting`) and cancel every idle timer.
            case closeAll(resetting: Bool)
            /// Fire `idleTimerFired` for it after this long.
            case armIdleTimer(ConnectionID, after: Duration)
        }

        /// What the driver does after an event, in this order: the
        /// connection action, the dial, then the request action.
        struct Action: Equatable {
            var connection = ConnectionAction.none
            /// Dial the endpoint; the connection will carry this id.
            var dial: ConnectionID?
            var request = RequestAction.none

            static let none = Action()
        }

        /// What an endpoint speaks: the HTTP version decides how many
        /// connections it gets and how many streams each carries.
        enum VersionState: Equatable {
            /// TLS with ALPN, no connection ready yet: one dial at a time, as it may be HTTP/2.
            case negotiating
            /// One exchange per connection, up to `maxConnectionsPerEndpoint` connections.
            case http1
            /// Every stream on one connection. `streamBudget`: how many streams
            /// the server serves on a connection, once a GOAWAY refused streams
            /// beyond that many (nginx `keepalive_requests`); nil while unknown.
            case http2(streamBudget: Int?)
        }

        /// Whether a pooled connection is watched for idleness.
        enum IdleWatch: Equatable {
            case unwatched
            /// A timer is armed; `deadline` is when the connection may close
            /// (nil while it serves, so the timer's firing forgets the watch).
            case watched(deadline: ContinuousClock.Instant?)
        }

        /// One connection of an endpoint.
        struct Pooled {
            let id: ConnectionID
            let isHTTP2: Bool
            /// HTTP/2: the streams it has carried so far.
            var streamsOpened = 0
            var idle = IdleWatch.unwatched
        }

        /// One endpoint's connections, dials and queue.
        struct Endpoint {
            var versionState: VersionState
            var connections: [Pooled] = []
            var dialing = 0
            var waiting: [RequestID] = []
            /// The connection to give an idle deadline once serving stops.
            var idleCheck: ConnectionID?

            /// Whether `connection` may carry another stream within the learnt budget.
            func hasBudget(_ connection: Pooled) -> Bool {
                guard connection.isHTTP2, case .http2(let budget?) = versionState else { return true }
                return connection.streamsOpened < budget
            }

            func index(of id: ConnectionID) -> Int? {
                connections.firstIndex { $0.id == id }
            }

            /// `StateMachine.serve`, on this endpoint in place.
            mutating func serve(_ endpoint: EndpointID, now: ContinuousClock.Instant, facts: (ConnectionID) -> Facts,
                                limits: Limits, nextConnection: inout UInt64) -> Action {
                if let request = waiting.first {
                    if let index = connections.firstIndex(where: { facts($0.id).canOpenStream && hasBudget($0) }) {
                        waiting.removeFirst()
                        if case .watched = connections[index].idle { connections[index].idle = .watched(deadline: nil) }
                        return Action(request: .open(request, on: connections[index].id))
                    }
                    if mayDial(limits) {
                        dialing += 1
                        nextConnection += 1
                        return Action(connection: checkIdle(now: now, facts: facts, limits: limits),
                                      dial: ConnectionID(endpoint: endpoint, number: nextConnection))
                    }
                }
                return Action(connection: checkIdle(now: now, facts: facts, limits: limits))
            }

            private func mayDial(_ limits: Limits) -> Bool {
                switch versionState {
                case .http2:
                    // One connection carries every stream; a new one only when none can (all going away).
                    return dialing == 0
                case .negotiating:
                    return dialing == 0 && connections.isEmpty
                case .http1:
                    return connections.count + dialing < limits.maxConnectionsPerEndpoint && dialing < waiting.count
                }
            }

            /// Gives the connection to check, if idle, a deadline: updating the
            /// watch it has, or arming a timer for a new one.
            private mutating func checkIdle(now: ContinuousClock.Instant, facts: (ConnectionID) -> Facts,
                                            limits: Limits) -> ConnectionAction {
                guard let id = idleCheck else { return .none }
                idleCheck = nil
                let current = facts(id)
                guard current.activeStreams == 0, current.canOpenStream, let index = index(of: id) else { return .none }
                let deadline = now + limits.idleTimeout
                if case .watched = connections[index].idle {
                    connections[index].idle = .watched(deadline: deadline)
                    return .none
                }
                connections[index].idle = .watched(deadline: deadline)
                return .armIdleTimer(id, after: limits.idleTimeout)
            }
        }

        /// The pool's configuration, as far as decisions go.
        struct Limits {
            /// HTTP/1.1 connections per endpoint at most.
            var maxConnectionsPerEndpoint: Int
            /// How long a connection may stay idle.
            var idleTimeout: Duration
        }

        enum Lifecycle: Equatable {
            case running
            case closed
        }

        let limits: Limits
        private(set) var endpoints: [Endpoint] = []
        private(set) var lifecycle = Lifecycle.running
        private var nextConnection: UInt64 = 0

        /// The smallest per-connection stream budget learnt: a GOAWAY after
        /// fewer streams is taken for a one-off (a restart), not a limit.
        static let minimumStreamBudget = 8

        init(maxConnectionsPerEndpoint: Int, idleTimeout: Duration) {
            limits = Limits(maxConnectionsPerEndpoint: maxConnectionsPerEndpoint, idleTimeout: idleTimeout)
        }

        /// A new endpoint, speaking `versionState` until a connection says otherwise.
        mutating func addEndpoint(_ versionState: VersionState) -> EndpointID {
            endpoints.append(Endpoint(versionState: versionState))
            return EndpointID(index: endpoints.count - 1)
        }

        /// Connections open, over all endpoints, and dials in flight.
        var connectionCount: Int {
            endpoints.reduce(0) { $0 + $1.connections.count + $1.dialing }
        }

        /// Every pooled connection, over all endpoints.
        var connectionIDs: [ConnectionID] {
            endpoints.flatMap { $0.connections.map(\.id) }
        }

        // MARK: Requests

        /// A request for `endpoint`: it waits (the driver calls `serve` on a
        /// later turn) or, once the pool is closed, fails.
        mutating func enqueue(_ request: RequestID, for endpoint: EndpointID) -> Action {
            guard case .running = lifecycle else { return Action(request: .fail([request], .poolClosed)) }
            endpoints[endpoint.index].waiting.append(request)
            return .none
        }

        /// Takes a waiting request out of its queue; false when it waits no more.
        mutating func withdraw(_ request: RequestID, for endpoint: EndpointID) -> Bool {
            guard let index = endpoints[endpoint.index].waiting.firstIndex(of: request) else { return false }
            endpoints[endpoint.index].waiting.remove(at: index)
            return true
        }

        /// Hands the oldest waiting request to a connection that can take
        /// it, else dials when allowed; when nothing is waiting or nothing
        /// can take it, gives the connection to check an idle deadline.
        mutating func serve(_ endpoint: EndpointID, now: ContinuousClock.Instant,
                            facts: (ConnectionID) -> Facts) -> Action {
            guard case .running = lifecycle else { return .none }
            // In place: a copy of the endpoint would copy its queue and list on the first change.
            return endpoints[endpoint.index].serve(endpoint, now: now, facts: facts, limits: limits,
                                                   nextConnection: &nextConnection)
        }

        /// The driver carried out `.open`: the connection took the stream
        /// (`succeeded`; HTTP/2 counts it against the budget) or refused it
        /// (the request failed). Serves the next request.
        mutating func streamOpened(on connection: ConnectionID, succeeded: Bool, now: ContinuousClock.Instant,
                                   facts: (ConnectionID) -> Facts) -> Action {
            let endpoint = connection.endpoint
            if succeeded, let index = endpoints[endpoint.index].index(of: connection),
               endpoints[endpoint.index].connections[index].isHTTP2 {
                endpoints[endpoint.index].connections[index].streamsOpened += 1
            }
            return serve(endpoint, now: now, facts: facts)
        }

        // MARK: Dials

        /// A dial made a ready connection speaking `version`: it joins the
        /// pool and serves; once the pool is closed it is closed.
        mutating func dialSucceeded(_ connection: ConnectionID, version: HTTPVersion, now: ContinuousClock.Instant,
                                    facts: (ConnectionID) -> Facts) -> Action {
            let endpoint = connection.endpoint
            endpoints[endpoint.index].dialing -= 1
            guard case .running = lifecycle else { return Action(connection: .close(connection)) }
            let isHTTP2 = version == .http2
            switch (endpoints[endpoint.index].versionState, isHTTP2) {
            case (.http2, true): break
            case (_, true): endpoints[endpoint.index].versionState = .http2(streamBudget: nil)
            case (_, false): endpoints[endpoint.index].versionState = .http1
            }
            endpoints[endpoint.index].connections.append(Pooled(id: connection, isHTTP2: isHTTP2))
            endpoints[endpoint.index].idleCheck = connection
            return serve(endpoint, now: now, facts: facts)
        }

        /// A dial failed: the requests waiting fail with its error when no
        /// other connection or dial of the endpoint could serve them.
        mutating func dialFailed(_ connection: ConnectionID, error: TransportError) -> Action {
            let endpoint = connection.endpoint
            endpoints[endpoint.index].dialing -= 1
            let state = endpoints[endpoint.index]
            guard state.connections.isEmpty, state.dialing == 0, !state.waiting.isEmpty else { return .none }
            endpoints[endpoint.index].waiting.removeAll()
            return Action(request: .fail(state.waiting, .dialFailed(error)))
        }

        // MARK: Connection events

        /// A stream finished on `connection`: it is retired if spent, then
        /// the endpoint serves, and the connection, if idle, gets a deadline.
        mutating func available(_ connection: ConnectionID, now: ContinuousClock.Instant,
                                facts: (ConnectionID) -> Facts) -> Action {
            let retired = retireIfSpent(connection, facts: facts(connection))
            endpoints[connection.endpoint.index].idleCheck = retired ? nil : connection
            var action = serve(connection.endpoint, now: now, facts: facts)
            if retired { action.connection = .close(connection) }
            return action
        }

        /// HTTP/2: the server sent GOAWAY on `connection`. Learns the
        /// endpoint's stream budget when it refused streams, retires the
        /// connection if spent, then serves.
        mutating func goAway(_ connection: ConnectionID, lastStreamID: Int, code: HTTP2ErrorCode,
                             now: ContinuousClock.Instant, facts: (ConnectionID) -> Facts) -> Action {
            learnBudget(goAwayAfter: lastStreamID, code: code, on: connection)
            let retired = retireIfSpent(connection, facts: facts(connection))
            var action = serve(connection.endpoint, now: now, facts: facts)
            if retired { action.connection = .close(connection) }
            return action
        }

        /// `connection` closed: it leaves the pool, and the endpoint serves.
        mutating func closed(_ connection: ConnectionID, now: ContinuousClock.Instant,
                             facts: (ConnectionID) -> Facts) -> Action {
            let endpoint = connection.endpoint
            if let index = endpoints[endpoint.index].index(of: connection) {
                endpoints[endpoint.index].connections.remove(at: index)
            }
            if endpoints[endpoint.index].idleCheck == connection { endpoints[endpoint.index].idleCheck = nil }
            return serve(endpoint, now: now, facts: facts)
        }

        /// `connection`'s idle timer fired: closes it once its deadline
        /// passed while idle, re-arms when the deadline moved, forgets the
        /// watch while it is busy.
        mutating func idleTimerFired(_ connection: ConnectionID, now: ContinuousClock.Instant,
                                     facts: Facts) -> Action {
            let endpoint = connection.endpoint
            guard let index = endpoints[endpoint.index].index(of: connection),
                  case .watched(let deadline) = endpoints[endpoint.index].connections[index].idle else { return .none }
            guard let deadline, facts.activeStreams == 0 else {
                endpoints[endpoint.index].connections[index].idle = .unwatched
                return .none
            }
            guard now >= deadline else { return Action(connection: .armIdleTimer(connection, after: deadline - now)) }
            endpoints[endpoint.index].connections[index].idle = .unwatched
            return Action(connection: .close(connection))
        }

        /// The pool closes: every waiting request fails, every connection
        /// closes (reset when `resetting`), and no more is handed out.
        mutating func close(resetting: Bool) -> Action {
            lifecycle = .closed
            var failed: [RequestID] = []
            for index in endpoints.indices {
                failed += endpoints[index].waiting
                endpoints[index].waiting.removeAll()
                endpoints[index].idleCheck = nil
                for connection in endpoints[index].connections.indices {
                    endpoints[index].connections[connection].idle = .unwatched
                }
            }
            return Action(connection: .closeAll(resetting: resetting),
                          request: failed.isEmpty ? .none : .fail(failed, .poolClosed))
        }

        /// An HTTP/2 connection that can take no new stream (the server's
        /// GOAWAY, a close under way, its stream budget spent) leaves the pool
        /// once its last stream ended (the caller closes it): nothing would use it
        /// again, and it would hold its descriptor until the server closed.
        /// (An HTTP/1.1 connection closes itself when it cannot be reused.)
        private mutating func retireIfSpent(_ connection: ConnectionID, facts: Facts) -> Bool {
            let endpoint = connection.endpoint
            guard let index = endpoints[endpoint.index].index(of: connection) else { return false }
            let pooled = endpoints[endpoint.index].connections[index]
            guard pooled.isHTTP2, facts.activeStreams == 0,
                  !(facts.canOpenStream && endpoints[endpoint.index].hasBudget(pooled)) else { return false }
            endpoints[endpoint.index].connections.remove(at: index)
            return true
        }

        /// Learns the budget from the server's GOAWAY on `connection`: it
        /// served the streams up to `lastStreamID` (client streams are odd:
        /// (last + 1) / 2 of them) and refused others the connection carried.
        /// A GOAWAY that refused nothing (idle timeout, shutdown) teaches nothing.
        private mutating func learnBudget(goAwayAfter lastStreamID: Int, code: HTTP2ErrorCode, on connection: ConnectionID) {
            let endpoint = connection.endpoint
            let served = (lastStreamID + 1) / 2
            guard code == .noError, served >= Self.minimumStreamBudget,
                  let index = endpoints[endpoint.index].index(of: connection),
                  endpoints[endpoint.index].connections[index].isHTTP2,
                  endpoints[endpoint.index].connections[index].streamsOpened > served else { return }
            let known: Int?
            if case .http2(let budget) = endpoints[endpoint.index].versionState { known = budget } else { known = nil }
            endpoints[endpoint.index].versionState = .http2(streamBudget: min(known ?? served, served))
        }
    }
}
