import Wire
import XCTest
@testable import Proxy

/// The client connection's timer logic with no clock: instants in, verdicts out.
final class ConnectionDeadlineTests: XCTestCase {
    let start = ContinuousClock.Instant.now
    let timeouts = ClientTimeouts(head: .seconds(4), idle: .seconds(10), body: .seconds(6))

    let first = ExchangeID(connection: ConnectionID(.downstream, 1), sequence: 1)
    let second = ExchangeID(connection: ConnectionID(.downstream, 1), sequence: 2)

    private func at(_ seconds: Double) -> ContinuousClock.Instant { start + .milliseconds(Int(seconds * 1000)) }

    private func ready() -> ConnectionDeadline {
        var deadline = ConnectionDeadline(timeouts: timeouts, now: start, receivedBytes: 500)
        deadline.connectionReady(at: start, http2: false)
        return deadline
    }

    func testAnIdleConnectionExpiresAfterTheIdleTimeout() {
        var deadline = ready()
        XCTAssertEqual(deadline.check(at: at(0), receivedBytes: 500), .checkAgain(at: at(1)), "checked every head/4")
        XCTAssertEqual(deadline.check(at: at(9.9), receivedBytes: 500), .checkAgain(at: at(10)))
        XCTAssertEqual(deadline.check(at: at(10), receivedBytes: 500), .expired(.idle))
        XCTAssertEqual(deadline.check(at: at(11), receivedBytes: 600), .checkAgain(at: at(21)), "reported once")
    }

    func testAHeadUnderWayExpiresAfterTheHeadTimeoutFromItsFirstSeenByte() {
        var deadline = ready()
        XCTAssertEqual(deadline.check(at: at(3), receivedBytes: 501), .checkAgain(at: at(4)))
        XCTAssertEqual(deadline.check(at: at(6.9), receivedBytes: 600), .checkAgain(at: at(7)))
        XCTAssertEqual(deadline.check(at: at(7), receivedBytes: 700), .expired(.head))
    }

    func testAHeadThatCompletesStartsAnExchangeWithTheBodyTimeout() {
        var deadline = ready()
        _ = deadline.check(at: at(1), receivedBytes: 520)
        deadline.exchangeStarted(first, at: at(2))
        XCTAssertEqual(deadline.check(at: at(3), receivedBytes: 900), .checkAgain(at: at(8)))
        deadline.progress(first, at: at(7))
        XCTAssertEqual(deadline.check(at: at(8), receivedBytes: 900), .checkAgain(at: at(13)))
        XCTAssertEqual(deadline.check(at: at(13), receivedBytes: 900), .expired(.body))
    }

    func testAfterTheLastExchangeTheConnectionWaitsAgain() {
        var deadline = ready()
        deadline.exchangeStarted(first, at: at(1))
        deadline.exchangeStarted(second, at: at(1))
        deadline.exchangeFinished(first, at: at(2), receivedBytes: 800)
        XCTAssertEqual(deadline.check(at: at(3), receivedBytes: 800), .checkAgain(at: at(8)), "one exchange still busy")
        deadline.exchangeFinished(second, at: at(5), receivedBytes: 800)
        XCTAssertEqual(deadline.check(at: at(14.9), receivedBytes: 800), .checkAgain(at: at(15)))
        XCTAssertEqual(deadline.check(at: at(15), receivedBytes: 800), .expired(.idle))
    }

    func testBeforeReadyAndOnHTTP2BytesDoNotStartTheHeadTimeout() {
        var handshaking = ConnectionDeadline(timeouts: timeouts, now: start, receivedBytes: 0)
        XCTAssertEqual(handshaking.check(at: at(5), receivedBytes: 300), .checkAgain(at: at(6)))
        XCTAssertEqual(handshaking.check(at: at(10), receivedBytes: 300), .expired(.idle))
        var http2 = ConnectionDeadline(timeouts: timeouts, now: start, receivedBytes: 500)
        http2.connectionReady(at: start, http2: true)
        XCTAssertEqual(http2.check(at: at(5), receivedBytes: 900), .checkAgain(at: at(6)))
        XCTAssertEqual(http2.check(at: at(10), receivedBytes: 900), .expired(.idle))
    }

    func testOnHTTP2AStalledStreamIsReportedWhileItsSiblingGoesOn() {
        var http2 = ConnectionDeadline(timeouts: timeouts, now: start, receivedBytes: 500)
        http2.connectionReady(at: start, http2: true)
        http2.exchangeStarted(first, at: at(1))
        http2.exchangeStarted(second, at: at(2))
        http2.progress(second, at: at(5))
        XCTAssertEqual(http2.check(at: at(6), receivedBytes: 900), .checkAgain(at: at(7)), "the first stream's own clock")
        XCTAssertEqual(http2.check(at: at(7), receivedBytes: 900), .stalled([first], checkAgainAt: at(11)))
        http2.progress(first, at: at(8))  // a late event of the reset stream changes nothing
        XCTAssertEqual(http2.check(at: at(10), receivedBytes: 900), .checkAgain(at: at(11)))
        http2.exchangeFinished(second, at: at(10), receivedBytes: 900)
        XCTAssertEqual(http2.check(at: at(20), receivedBytes: 900), .expired(.idle), "idle once no stream is open")
    }

    func testClientConnectionsAreCountedPerNormalisedAddress() {
        var limit = ClientConnectionLimit(limit: 2)
        let v4 = SocketAddress(ip: "127.0.0.1", port: 1000)!
        let mapped = SocketAddress(ip: "::ffff:127.0.0.1", port: 2000)!
        let other = SocketAddress(ip: "127.0.0.2", port: 1000)!
        XCTAssertTrue(limit.admit(v4))
        XCTAssertTrue(limit.admit(mapped))
        XCTAssertFalse(limit.admit(v4.withPort(3000)), "the third from one address")
        XCTAssertTrue(limit.admit(other))
        limit.release(mapped)
        XCTAssertTrue(limit.admit(v4))
        limit.release(v4)
        limit.release(v4)
        limit.release(other)
        XCTAssertEqual(limit.counts, [:])
    }
}
