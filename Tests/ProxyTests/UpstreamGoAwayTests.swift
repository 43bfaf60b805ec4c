import Evidence
import HTTP
import IntactTestSupport
import Proxy
import XCTest

/// An HTTP/2 origin that serves a fixed number of requests per connection
/// and then sends GOAWAY (nginx `keepalive_requests`), on the playbook: each
/// connection it retires is let go and closed by the proxy once its last
/// stream ended, so descriptors do not pile up; a burst wider than the budget is
/// all answered, the budget learnt from the first GOAWAY.
final class UpstreamGoAwayTests: XCTestCase {
    private func reverse() throws -> ProxyPlaybook {
        let target = try XCTUnwrap(UpstreamTarget(scheme: .https, host: "origin.test", port: 443))
        return try ProxyPlaybook(mode: .reverse(target))
    }

    private static func get(_ path: String) -> HTTPRequestHead {
        HTTPRequestHead(method: "GET", authority: "origin.test", path: path)
    }

    func testConnectionsRetiredByGoAwayAreClosedAndDescriptorsDoNotAccumulate() throws {
        let playbook = try reverse()
        let origin = BudgetedHTTP2Origin(playbook, budget: 3, bodySize: 1000)
        let client = try playbook.connectHTTP2Client(tls: "origin.test")
        // Ten requests one after the other on one client connection: the origin retires its connection every 3.
        let rounds = 10
        for n in 0..<rounds {
            let stream = try XCTUnwrap(client.request(Self.get("/file")))
            try origin.serve()
            let events = client.takeEvents()
            XCTAssertEqual(events.statuses[stream], 200, "request \(n): \(events)")
            XCTAssertEqual(events.bodies[stream]?.count, 1000, "request \(n)")
        }
        XCTAssertEqual(origin.connections.count, 4, "a new upstream connection after each GOAWAY")
        // The proxy lets go of each retired connection once its last stream ended (its FIN;
        // the origin closes nothing itself) and closes it at the linger timer; the live one stays.
        let live = try XCTUnwrap(origin.connections.last)
        for (n, retired) in origin.connections.dropLast().enumerated() {
            XCTAssertTrue(retired.peer.receivedEOF, "retired connection \(n) is still in use")
        }
        XCTAssertFalse(live.peer.receivedEOF, "the live connection stays pooled")
        playbook.advance(by: .seconds(2))
        for (n, retired) in origin.connections.dropLast().enumerated() {
            XCTAssertTrue(retired.peer.isClosed, "retired connection \(n) is still open")
        }
        XCTAssertFalse(live.peer.isClosed, "the live connection stays pooled")

        let records = playbook.records
        XCTAssertEqual(records.count, rounds)
        XCTAssertEqual(Set(records.compactMap { $0.leg(.upstream)?.connectionID }).count, 4)
        for record in records { assertCleanHop(record) }
    }

    /// A burst three times as wide as the origin's requests per connection
    /// (ten, thirty streams at once): the first GOAWAY refuses streams, the
    /// pool learns the budget from it and spreads later streams over
    /// connections of at most ten, so a second burst has none refused, and
    /// every request is answered.
    func testABurstWiderThanTheOriginsRequestsPerConnectionIsAllAnswered() throws {
        let playbook = try reverse()
        let origin = BudgetedHTTP2Origin(playbook, budget: 10, bodySize: 100)
        let client = try playbook.connectHTTP2Client(tls: "origin.test")
        let burst = 30
        var retriesBefore = 0
        for round in 0..<2 {
            let streams = (0..<burst).compactMap { _ in client.request(Self.get("/file")) }
            XCTAssertEqual(streams.count, burst)
            try origin.serve()
            let events = client.takeEvents()
            XCTAssertEqual(streams.filter { events.statuses[$0] == 200 }.count, burst, "round \(round): \(events.resets)")
            let records = playbook.records.filter { $0.connection == nil }
            XCTAssertEqual(records.count, burst * (round + 1))
            XCTAssertTrue(records.allSatisfy { $0.error == nil }, "\(records.compactMap(\.error).prefix(3))")
            let retries = records.reduce(0) { $0 + ($1.retries?.count ?? 0) }
            if round == 0 {
                XCTAssertGreaterThan(retries, 0, "the first burst met the budget unknown")
                retriesBefore = retries
            } else {
                XCTAssertEqual(retries, retriesBefore, "streams refused by GOAWAY once the budget was known")
            }
        }
        // At most ten streams per upstream connection.
        XCTAssertTrue(origin.served.allSatisfy { $0 <= 10 }, "\(origin.served)")
        let perConnection = Dictionary(grouping: playbook.records.compactMap { $0.leg(.upstream)?.connectionID }, by: { $0 })
        XCTAssertLessThanOrEqual(perConnection.values.map(\.count).max() ?? 0, 10)
    }
}

/// HTTP/2 origins on a playbook (`origin.test:443`) that serve `budget`
/// requests per connection, as nginx's `keepalive_requests` does: each
/// request is answered with `bodySize` bytes; the one that spends the budget
/// is answered, then GOAWAY names it the last stream processed, and later
/// streams on that connection are never answered (the proxy must send them
/// again elsewhere).
final class BudgetedHTTP2Origin {
    let playbook: ProxyPlaybook
    let budget: Int
    let body: [UInt8]
    /// Every connection the proxy dialled, in order.
    private(set) var connections: [PlaybookHTTP2] = []
    /// Requests answered per connection.
    private(set) var served: [Int] = []

    init(_ playbook: ProxyPlaybook, budget: Int, bodySize: Int) {
        self.playbook = playbook
        self.budget = budget
        body = [UInt8](repeating: 0x62, count: bodySize)
    }

    /// Answers dials and requests until nothing moves.
    func serve() throws {
        for _ in 0..<1000 {
            playbook.run()
            var moved = false
            while !playbook.network.dials.isEmpty {
                connections.append(try playbook.acceptHTTP2Dial(host: "origin.test", port: 443))
                served.append(0)
                moved = true
            }
            for (index, connection) in connections.enumerated() {
                for request in connection.takeEvents().requests where served[index] < budget {
                    served[index] += 1
                    connection.respond(request.stream, body: body)
                    if served[index] == budget {
                        connection.sendRaw(PlaybookHTTP2.goAwayFrame(lastStreamID: request.stream))
                    }
                    moved = true
                }
            }
            if !moved { return }
        }
        XCTFail("the origin never went quiet")
    }
}
