import Evidence
import Foundation
import HTTP
import XCTest
@testable import Proxy

final class ExchangeLogLineTests: XCTestCase {
    private func finishedRecord(status: Int, body: Int, clock: @escaping @Sendable () -> Timestamp) throws -> ExchangeRecord {
        var script = FlowScript(settings: RecordingSettings(tap: "t", clock: clock))
        script.start(Script.get("/suite/rest/x?y=1"))
        script.send(.requestEnd(trailers: nil))
        script.open()
        let head = HTTPResponseHead(status: HTTPStatus(status), fields: ["Content-Length": String(body)])
        script.send(.responseHead(head, wire: Script.wire(head)))
        if body > 0 { script.send(.responseBody(Script.bytes(body))) }
        script.send(.responseEnd(trailers: nil))
        return try XCTUnwrap(script.record)
    }

    func testTextLinesSayMethodURLStatusBytesAndTime() throws {
        let ticks = TickingClock()
        let record = try finishedRecord(status: 200, body: 1024, clock: { ticks.next() })
        let line = ExchangeLogLine(record).rendered(.text)
        XCTAssertTrue(line.hasPrefix("d1.1 GET https://origin.test:8443/suite/rest/x?y=1 200 1024 B "), line)
        XCTAssertTrue(line.hasSuffix(" ms"), line)
        XCTAssertGreaterThan(ExchangeLogLine(record).ms, 0)
    }

    func testJSONLinesCarryTheSameFieldsAndTheError() throws {
        var script = FlowScript()
        script.start(Script.get())
        script.send(.requestEnd(trailers: nil))
        script.send(.upstreamFailed(ProxyError(.resolution, at: .upstreamConnect, "host name 'x' not found", status: .dnsError)))
        let record = try XCTUnwrap(script.record)
        let json = ExchangeLogLine(record).rendered(.json)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        XCTAssertEqual(object["status"] as? Int, 502)
        XCTAssertEqual(object["method"] as? String, "GET")
        XCTAssertEqual(object["error"] as? String, "upstream connect: host name 'x' not found")
        XCTAssertFalse(json.contains("\n"))
    }
}

/// A clock that moves one millisecond each time it is read.
final class TickingClock: @unchecked Sendable {
    private let lock = NSLock()
    private var now = 1_700_000_000_000.0

    func next() -> Timestamp {
        lock.withLock {
            now += 1
            return Timestamp(millisecondsSince1970: now)
        }
    }
}
