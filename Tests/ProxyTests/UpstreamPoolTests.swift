import XCTest
@testable import Proxy

/// `UpstreamPool` decisions, scripted.
final class UpstreamPoolTests: XCTestCase {
    let a = UpstreamTarget(scheme: .https, host: "a.test", port: 443)!
    let b = UpstreamTarget(scheme: .https, host: "b.test", port: 443)!
    func u(_ n: UInt64) -> ConnectionID { ConnectionID(.upstream, n) }

    func testHTTP1ConnectionsAreMadePerWaiterThenReused() {
        var pool = UpstreamPool<String>(numbering: ConnectionNumbering())
        XCTAssertEqual(pool.acquire(a, for: "x"), [.connect(u(1), a)])
        XCTAssertEqual(pool.acquire(a, for: "y"), [.connect(u(2), a)])
        XCTAssertEqual(pool.connected(u(1), capacity: 1), [.assign("x", u(1))])
        XCTAssertEqual(pool.connected(u(2), capacity: 1), [.assign("y", u(2))])
        XCTAssertEqual(pool.released(u(1)), [])
        XCTAssertEqual(pool.idleCount(a), 1)
        XCTAssertEqual(pool.acquire(a, for: "z"), [.assign("z", u(1))], "kept alive and reused")
        XCTAssertEqual(pool.acquire(b, for: "w"), [.connect(u(3), b)], "another target gets its own")
    }

    func testHTTP2ConnectionsCarryManyExchanges() {
        var pool = UpstreamPool<Int>(numbering: ConnectionNumbering())
        XCTAssertEqual(pool.acquire(a, for: 1), [.connect(u(1), a)])
        XCTAssertEqual(pool.acquire(a, for: 2), [.connect(u(2), a)])
        XCTAssertEqual(pool.connected(u(1), capacity: 100), [.assign(1, u(1)), .assign(2, u(1))])
        XCTAssertEqual(pool.connected(u(2), capacity: 100), [])
        XCTAssertEqual(pool.acquire(a, for: 3), [.assign(3, u(1))], "the busiest connection with room first")
    }

    func testAFailedConnectFailsOneWaiterAndAClosedOneIsReplaced() {
        var pool = UpstreamPool<String>(numbering: ConnectionNumbering())
        _ = pool.acquire(a, for: "x")
        let refused = ProxyError(.connectionRefused, at: "upstream connect", "refused", status: .connectionRefused)
        XCTAssertEqual(pool.connectFailed(u(1), refused), [.fail("x", refused)])
        XCTAssertEqual(pool.connectionCount, 0)
        _ = pool.acquire(a, for: "y")
        _ = pool.acquire(a, for: "z")
        XCTAssertEqual(pool.closed(u(2)), [.connect(u(4), a)], "z still waits: a new connection replaces the lost one")
    }

    func testCancelledWaitersLeaveTheConnectionIdleAndExtraIdleOnesClose() {
        var pool = UpstreamPool<String>(numbering: ConnectionNumbering(), maxIdlePerTarget: 1)
        _ = pool.acquire(a, for: "x")
        pool.cancel("x")
        XCTAssertEqual(pool.connected(u(1), capacity: 1), [])
        XCTAssertEqual(pool.idleCount(a), 1)
        _ = pool.acquire(a, for: "y")
        _ = pool.acquire(a, for: "z")
        XCTAssertEqual(pool.connected(u(2), capacity: 1), [.assign("z", u(2))])
        XCTAssertEqual(pool.released(u(1)), [])
        XCTAssertEqual(pool.released(u(2)), [.close(u(2))])
    }
}
