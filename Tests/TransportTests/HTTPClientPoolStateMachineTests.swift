import HTTP
import IntactTestSupport
import XCTest
@testable import Transport

/// The pool's decisions with no socket, no loop and no clock: events in,
/// actions out. Connections are a model here (what each can take, as its
/// engine would say), so every rule is checked step by step, and a seeded
/// random run checks the invariants over thousands of events.
final class HTTPClientPoolStateMachineTests: XCTestCase {
    typealias Machine = HTTPClientPool.StateMachine
    typealias RequestID = Machine.RequestID
    typealias ConnectionID = Machine.ConnectionID

    private let start = ContinuousClock.now

    /// Model connections: what each can take.
    private var model: [ConnectionID: Machine.Facts] = [:]

    private func facts(_ id: ConnectionID) -> Machine.Facts { model[id] ?? .gone }

    private func request(_ number: UInt64) -> RequestID { RequestID(number: number) }

    func testAnHTTP1RequestDialsThenOpensOnTheNewConnectionWhichGoesIdleAfterwards() throws {
        var machine = Machine(maxConnectionsPerEndpoint: 2, idleTimeout: .seconds(60))
        let endpoint = machine.addEndpoint(.http1)
        XCTAssertEqual(machine.enqueue(request(1), for: endpoint), .none)
        let dial = try XCTUnwrap(machine.serve(endpoint, now: start, facts: facts).dial)
        XCTAssertEqual(machine.connectionCount, 1, "the dial counts")
        model[dial] = Machine.Facts(canOpenStream: true, activeStreams: 0)
        XCTAssertEqual(machine.dialSucceeded(dial, version: .http1_1, now: start, facts: facts),
                       Machine.Action(request: .open(request(1), on: dial)))
        model[dial] = Machine.Facts(canOpenStream: false, activeStreams: 1)
        XCTAssertEqual(machine.streamOpened(on: dial, succeeded: true, now: start, facts: facts), .none,
                       "busy: no idle deadline")
        model[dial] = Machine.Facts(canOpenStream: true, activeStreams: 0)
        XCTAssertEqual(machine.available(dial, now: start, facts: facts),
                       Machine.Action(connection: .armIdleTimer(dial, after: .seconds(60))))
        // Fired early (the deadline moved with a later request): re-armed for what is left.
        XCTAssertEqual(machine.enqueue(request(2), for: endpoint), .none)
        XCTAssertEqual(machine.serve(endpoint, now: start + .seconds(10), facts: facts),
                       Machine.Action(request: .open(request(2), on: dial)))
        model[dial] = Machine.Facts(canOpenStream: false, activeStreams: 1)
        XCTAssertEqual(machine.streamOpened(on: dial, succeeded: true, now: start + .seconds(10), facts: facts), .none)
        model[dial] = Machine.Facts(canOpenStream: true, activeStreams: 0)
        XCTAssertEqual(machine.available(dial, now: start + .seconds(20), facts: facts), .none, "the timer is armed already")
        XCTAssertEqual(machine.idleTimerFired(dial, now: start + .seconds(60), facts: facts(dial)),
                       Machine.Action(connection: .armIdleTimer(dial, after: .seconds(20))))
        XCTAssertEqual(machine.idleTimerFired(dial, now: start + .seconds(80), facts: facts(dial)),
                       Machine.Action(connection: .close(dial)))
        XCTAssertEqual(machine.closed(dial, now: start + .seconds(80), facts: facts), .none)
        XCTAssertEqual(machine.connectionCount, 0)
    }

    func testHTTP1DialsOnePerWaitingRequestUpToTheLimit() {
        var machine = Machine(maxConnectionsPerEndpoint: 2, idleTimeout: .seconds(60))
        let endpoint = machine.addEndpoint(.http1)
        for number: UInt64 in 1...3 { _ = machine.enqueue(request(number), for: endpoint) }
        XCTAssertNotNil(machine.serve(endpoint, now: start, facts: facts).dial)
        XCTAssertNotNil(machine.serve(endpoint, now: start, facts: facts).dial)
        XCTAssertNil(machine.serve(endpoint, now: start, facts: facts).dial, "two connections at most")
        XCTAssertEqual(machine.connectionCount, 2)
    }

    func testAnEndpointOfUnknownVersionDialsOnceAndHTTP2ServesEveryWaiterOnOneConnection() throws {
        var machine = Machine(maxConnectionsPerEndpoint: 8, idleTimeout: .seconds(60))
        let endpoint = machine.addEndpoint(.negotiating)
        for number: UInt64 in 1...3 { _ = machine.enqueue(request(number), for: endpoint) }
        let dial = try XCTUnwrap(machine.serve(endpoint, now: start, facts: facts).dial)
        XCTAssertNil(machine.serve(endpoint, now: start, facts: facts).dial, "it may be HTTP/2: one dial")
        model[dial] = Machine.Facts(canOpenStream: true, activeStreams: 0)
        var action = machine.dialSucceeded(dial, version: .http2, now: start, facts: facts)
        var opened: [RequestID] = []
        while case .open(let request, let connection) = action.request {
            XCTAssertEqual(connection, dial)
            opened.append(request)
            model[dial]?.activeStreams += 1
            action = machine.streamOpened(on: dial, succeeded: true, now: start, facts: facts)
        }
        XCTAssertEqual(opened, [request(1), request(2), request(3)], "in order")
        XCTAssertEqual(machine.endpoints[endpoint.index].versionState, .http2(streamBudget: nil))
    }

    func testAGoAwayThatRefusedStreamsTeachesTheBudgetAndRetiresTheSpentConnection() throws {
        var machine = Machine(maxConnectionsPerEndpoint: 8, idleTimeout: .seconds(60))
        let endpoint = machine.addEndpoint(.http2(streamBudget: nil))
        for number: UInt64 in 1...12 { _ = machine.enqueue(request(number), for: endpoint) }
        let first = try XCTUnwrap(machine.serve(endpoint, now: start, facts: facts).dial)
        model[first] = Machine.Facts(canOpenStream: true, activeStreams: 0)
        var action = machine.dialSucceeded(first, version: .http2, now: start, facts: facts)
        while case .open = action.request {
            model[first]?.activeStreams += 1
            action = machine.streamOpened(on: first, succeeded: true, now: start, facts: facts)
        }
        // The server served streams 1…19 (ten) and refused the two above; two more requests come.
        model[first] = Machine.Facts(canOpenStream: false, activeStreams: 0)
        _ = machine.enqueue(request(13), for: endpoint)
        let goAway = machine.goAway(first, lastStreamID: 19, code: .noError, now: start, facts: facts)
        XCTAssertEqual(goAway.connection, .close(first), "spent: retired")
        XCTAssertNotNil(goAway.dial, "a fresh connection for the request waiting")
        XCTAssertEqual(machine.endpoints[endpoint.index].versionState, .http2(streamBudget: 10))
        // The fresh connection takes ten streams, no more.
        let second = try XCTUnwrap(goAway.dial)
        for number: UInt64 in 14...24 { _ = machine.enqueue(request(number), for: endpoint) }
        model[second] = Machine.Facts(canOpenStream: true, activeStreams: 0)
        action = machine.dialSucceeded(second, version: .http2, now: start, facts: facts)
        var opened = 0
        while case .open = action.request {
            opened += 1
            model[second]?.activeStreams += 1
            action = machine.streamOpened(on: second, succeeded: true, now: start, facts: facts)
        }
        XCTAssertEqual(opened, 10)
        XCTAssertNotNil(action.dial, "the rest go to a further connection")
    }

    /// An HTTP/1.1 endpoint (two connections at most) with two requests waiting and two dials for them.
    private func twoDials() throws -> (Machine, Machine.EndpointID, ConnectionID, ConnectionID) {
        var machine = Machine(maxConnectionsPerEndpoint: 2, idleTimeout: .seconds(60))
        let endpoint = machine.addEndpoint(.http1)
        for number: UInt64 in 1...2 { _ = machine.enqueue(request(number), for: endpoint) }
        let first = try XCTUnwrap(machine.serve(endpoint, now: start, facts: facts).dial)
        let second = try XCTUnwrap(machine.serve(endpoint, now: start, facts: facts).dial)
        return (machine, endpoint, first, second)
    }

    func testAFailedDialFailsTheWaitersOnlyWhenNothingElseCouldServeThem() throws {
        var (machine, _, first, second) = try twoDials()
        XCTAssertEqual(machine.dialFailed(first, error: .connect(.timedOut)), .none, "the other dial may serve them")
        XCTAssertEqual(machine.dialFailed(second, error: .connect(.timedOut)),
                       Machine.Action(request: .fail([request(1), request(2)], .dialFailed(.connect(.timedOut)))))
    }

    func testAWithdrawnRequestIsNeverOpened() throws {
        var machine = Machine(maxConnectionsPerEndpoint: 2, idleTimeout: .seconds(60))
        let endpoint = machine.addEndpoint(.http1)
        _ = machine.enqueue(request(1), for: endpoint)
        let dial = try XCTUnwrap(machine.serve(endpoint, now: start, facts: facts).dial)
        XCTAssertTrue(machine.withdraw(request(1), for: endpoint))
        XCTAssertFalse(machine.withdraw(request(1), for: endpoint))
        model[dial] = Machine.Facts(canOpenStream: true, activeStreams: 0)
        XCTAssertEqual(machine.dialSucceeded(dial, version: .http1_1, now: start, facts: facts),
                       Machine.Action(connection: .armIdleTimer(dial, after: .seconds(60))), "joins idle")
    }

    func testClosingFailsTheWaitersClosesEveryConnectionAndClosesLateDials() throws {
        var (machine, endpoint, first, second) = try twoDials()
        model[first] = Machine.Facts(canOpenStream: true, activeStreams: 0)
        _ = machine.dialSucceeded(first, version: .http1_1, now: start, facts: facts)
        XCTAssertEqual(machine.close(resetting: true),
                       Machine.Action(connection: .closeAll(resetting: true), request: .fail([request(2)], .poolClosed)))
        XCTAssertEqual(machine.dialSucceeded(second, version: .http1_1, now: start, facts: facts),
                       Machine.Action(connection: .close(second)))
        XCTAssertEqual(machine.enqueue(request(3), for: endpoint), Machine.Action(request: .fail([request(3)], .poolClosed)))
    }

    /// Random requests, withdrawals, dial outcomes, stream ends and closes
    /// against model HTTP/1.1 and HTTP/2 connections. Invariants: every
    /// request ends exactly once (opened, failed or withdrawn); a request is
    /// opened only on a connection that can take it; HTTP/1.1 never exceeds
    /// its connections; nothing is left waiting while a connection could take it.
    func testRandomEventsKeepTheInvariants() {
        for http2 in [false, true] {
            for seed: UInt64 in 1...20 {
                runModel(http2: http2, seed: seed)
            }
        }
    }

    private func runModel(http2: Bool, seed: UInt64) {
        var random = SeededGenerator(state: seed)
        var machine = Machine(maxConnectionsPerEndpoint: 3, idleTimeout: .seconds(60))
        let endpoint = machine.addEndpoint(http2 ? .negotiating : .http1)
        model = [:]
        var dials: [ConnectionID] = []
        var waiting: Set<RequestID> = []
        var ended: Set<RequestID> = []
        var streams: [ConnectionID: [RequestID]] = [:]
        var nextRequest: UInt64 = 0
        let context = "\(http2 ? "h2" : "h1") seed \(seed)"

        func apply(_ first: Machine.Action) {
            var action = first
            while true {
                switch action.connection {
                case .close(let id): model[id]?.canOpenStream = false
                case .closeAll: model.keys.forEach { model[$0]?.canOpenStream = false }
                case .none, .armIdleTimer: break
                }
                if let dial = action.dial { dials.append(dial) }
                switch action.request {
                case .none:
                    return
                case .fail(let requests, _):
                    for request in requests {
                        XCTAssertTrue(waiting.remove(request) != nil, "\(context): failed \(request) not waiting")
                        ended.insert(request)
                    }
                    return
                case .open(let request, let id):
                    XCTAssertTrue(model[id]?.canOpenStream == true, "\(context): opened on \(id), which cannot take it")
                    XCTAssertTrue(waiting.remove(request) != nil, "\(context): opened \(request) not waiting")
                    ended.insert(request)
                    streams[id, default: []].append(request)
                    model[id]?.activeStreams += 1
                    if !http2 { model[id]?.canOpenStream = false }
                    action = machine.streamOpened(on: id, succeeded: true, now: start, facts: facts)
                }
            }
        }

        for _ in 0..<400 {
            switch Int.random(in: 0..<8, using: &random) {
            case 0, 1:
                nextRequest += 1
                let request = RequestID(number: nextRequest)
                waiting.insert(request)
                apply(machine.enqueue(request, for: endpoint))
                apply(machine.serve(endpoint, now: start, facts: facts))
            case 2:
                guard let request = waiting.randomElement(using: &random) else { continue }
                if machine.withdraw(request, for: endpoint) {
                    waiting.remove(request)
                    ended.insert(request)
                }
            case 3:
                guard !dials.isEmpty else { continue }
                let dial = dials.remove(at: Int.random(in: 0..<dials.count, using: &random))
                if Int.random(in: 0..<4, using: &random) == 0 {
                    apply(machine.dialFailed(dial, error: .connect(.timedOut)))
                } else {
                    model[dial] = Machine.Facts(canOpenStream: true, activeStreams: 0)
                    apply(machine.dialSucceeded(dial, version: http2 ? .http2 : .http1_1, now: start, facts: facts))
                }
            case 4, 5:
                // A stream ends.
                guard let id = streams.keys.filter({ !(streams[$0] ?? []).isEmpty }).randomElement(using: &random) else { continue }
                streams[id]?.removeFirst()
                model[id]?.activeStreams -= 1
                if !http2, model[id]?.activeStreams == 0 { model[id]?.canOpenStream = true }
                apply(machine.available(id, now: start, facts: facts))
            case 6:
                // A connection closes (its streams fail with it).
                guard let id = model.keys.randomElement(using: &random) else { continue }
                model[id] = nil
                streams[id] = nil
                apply(machine.closed(id, now: start, facts: facts))
            default:
                // HTTP/2: the server goes away on a connection.
                guard http2, let id = model.keys.randomElement(using: &random) else { continue }
                model[id]?.canOpenStream = false
                apply(machine.goAway(id, lastStreamID: 1, code: .noError, now: start, facts: facts))
            }
            if !http2 {
                XCTAssertLessThanOrEqual(machine.connectionCount, 3, context)
            }
            XCTAssertTrue(ended.isDisjoint(with: waiting), context)
            let couldTake = machine.endpoints[endpoint.index].connections.contains { facts($0.id).canOpenStream }
            XCTAssertFalse(couldTake && !machine.endpoints[endpoint.index].waiting.isEmpty,
                           "\(context): requests wait while a connection could take them")
        }
        XCTAssertEqual(Set(machine.endpoints[endpoint.index].waiting), waiting, "\(context): the machine's queue is the model's")
    }
}
