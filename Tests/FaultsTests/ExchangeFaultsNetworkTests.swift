import HTTP
import XCTest
@testable import Faults

/// Network actions: what the proxy is told to do, and where in the message.
final class ExchangeFaultsNetworkTests: XCTestCase {
    private func engine(_ actions: String, leg: String = "response", seed: UInt64 = 1) -> FaultEngine {
        Fixture.engine("{\"rules\": [{\"name\": \"n\", \"match\": {\"leg\": \"\(leg)\"}, \"actions\": [\(actions)]}]}", seed: seed)
    }

    private func respond(_ engine: FaultEngine, _ chunks: [String] = ["0123456789"]) -> Exchange {
        Exchange(engine, request: Fixture.request("POST", "/suite/mobileAuthTokenConsumer"),
                 response: Fixture.response(200, [("Content-Length", String(chunks.joined().utf8.count))]),
                 responseBody: chunks.map { Array($0.utf8) })
    }

    func testDelayAndThrottleComeBeforeTheHead() {
        let x = respond(engine(#"{"action": "delay", "ms": 250}, {"action": "throttle", "bytesPerSecond": 1000}"#))
        XCTAssertEqual(Array(x.responseOut.prefix(2)), [.network(.delay(.milliseconds(250))), .network(.throttle(bytesPerSecond: 1000))])
        if case .forward(.head) = x.responseOut[2] {} else { XCTFail("\(x.responseOut)") }
        XCTAssertTrue(x.responseOut.ended())
        XCTAssertEqual(x.faults.applied.map(\.change), ["delayed 250 ms", "limited to 1000 bytes/s"])
    }

    func testJitterStaysInRangeAndFollowsTheSeed() {
        func delays(seed: UInt64) -> [NetworkCommand] {
            let e = engine(#"{"action": "delay", "ms": 100, "jitter": 30}"#, seed: seed)
            return (0..<40).flatMap { _ in respond(e).responseOut.commands() }
        }
        let first = delays(seed: 7)
        XCTAssertEqual(first, delays(seed: 7))
        XCTAssertNotEqual(first, delays(seed: 8))
        var distinct = Set<Int64>()
        for case .delay(let d) in first {
            XCTAssertTrue((70...130).contains(d.milliseconds), "\(d)")
            distinct.insert(d.milliseconds)
        }
        XCTAssertGreaterThan(distinct.count, 5)
    }

    func testResetBeforeHeadersSendsNothing() {
        let x = respond(engine(#"{"action": "reset", "at": "before-headers"}"#))
        XCTAssertEqual(x.responseOut, [.network(.reset(.beforeHeaders))])
        XCTAssertEqual(x.faults.applied.map(\.change), ["connection reset before the headers"])
    }

    func testResetAfterHeaders() {
        let x = respond(engine(#"{"action": "reset", "at": "after-headers"}"#))
        XCTAssertEqual(x.responseOut.count, 2)
        XCTAssertNotNil(x.responseOut.forwardedHead() as HTTPResponseHead?)
        XCTAssertEqual(x.responseOut.last, .network(.reset(.afterHeaders)))
        XCTAssertEqual(x.responseOut.forwardedBody(), [])
    }

    func testResetAfterBodyBytesAcrossChunks() {
        let x = respond(engine(#"{"action": "reset", "at": "after-body-bytes", "bytes": 6}"#), ["0123", "4567", "89"])
        XCTAssertEqual(x.responseOut.forwardedChunks().map { String(decoding: $0, as: UTF8.self) }, ["0123", "45"])
        XCTAssertEqual(x.responseOut.last, .network(.reset(.afterBodyBytes(6))))
        XCTAssertFalse(x.responseOut.ended())
        XCTAssertEqual(x.faults.applied.map(\.change), ["connection reset after 6 body bytes"])
    }

    func testResetAfterMoreBytesThanTheBodyHappensInsteadOfTheEnd() {
        let x = respond(engine(#"{"action": "reset", "at": "after-body-bytes", "bytes": 100}"#))
        XCTAssertEqual(x.responseOut.forwardedText(), "0123456789")
        XCTAssertFalse(x.responseOut.ended())
        XCTAssertEqual(x.responseOut.last, .network(.reset(.afterBodyBytes(100))))
    }

    func testResetOnTheRequestLegAfterHeadersDropsTheBody() {
        let e = engine(#"{"action": "reset", "at": "after-headers"}"#, leg: "request")
        let x = Exchange(e, request: Fixture.request("POST", "/t", [("Content-Length", "3")]), requestBody: [[1, 2, 3]])
        XCTAssertEqual(x.requestOut.count, 2)
        XCTAssertEqual(x.requestOut.last, .network(.reset(.afterHeaders)))
    }

    func testCloseAndStall() {
        let close = respond(engine(#"{"action": "close"}"#))
        XCTAssertEqual(close.responseOut, [.network(.closeSilently)])
        let stall = Exchange(engine(#"{"action": "stall"}, {"action": "add-header", "name": "X", "value": "1"}"#, leg: "request"),
                             request: Fixture.request("GET", "/"))
        XCTAssertEqual(stall.requestOut, [.network(.stall)])
        XCTAssertEqual(stall.faults.applied.map(\.action), [.stall])
    }
}
