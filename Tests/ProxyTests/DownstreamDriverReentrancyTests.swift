import Evidence
import HTTP
import IntactTestSupport
import XCTest
@testable import Proxy

/// A transport callback that arrives while the driver carries out one of the
/// layer's commands (the layer is being mutated then) waits for the step to
/// end and is handled right after it, in order; nothing traps, and the record
/// is the one the exchange earned. On the playbook: the whole proxy in memory.
final class DownstreamDriverReentrancyTests: XCTestCase {
    /// The proxy refuses a request whose body is still arriving on a
    /// connection that does not persist: sending the refusal's end makes the
    /// HTTP/1.1 engine fail the request stream at once, inside that send, so
    /// the stream's `.failed` re-enters the driver while the flow's first
    /// step still runs.
    func testAStreamThatFailsInsideASendIsHandledAfterTheStep() throws {
        let playbook = try ProxyPlaybook()
        let client = try playbook.connectClient()
        client.send("POST /relative HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                    + "Content-Length: 100000\r\n\r\n" + String(repeating: "x", count: 10))
        playbook.run()
        let answer = client.readText()
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 400 "), answer)
        XCTAssertTrue(answer.contains("absolute-form"), answer)
        XCTAssertTrue(client.receivedEOF, "the connection does not persist")
        XCTAssertTrue(playbook.network.dials.isEmpty, "nothing went upstream")

        // The proxy is still whole: the next connection is answered too.
        let next = try playbook.connectClient()
        next.send("GET /again HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        playbook.run()
        let again = next.readText()
        XCTAssertTrue(again.hasPrefix("HTTP/1.1 400 "), again)

        let records = playbook.records
        XCTAssertEqual(records.count, 2, "\(records.map(\.exchangeID))")
        let refused = try XCTUnwrap(records.first { $0.leg(.downstream)?.request?.path == "/relative" })
        XCTAssertEqual(refused.error?.kind, .protocolError, "the refusal is the first failure, not the stream's end")
        XCTAssertEqual(refused.leg(.downstream)?.response?.status, 400)
        XCTAssertEqual(refused.leg(.downstream)?.response?.complete, true)
        XCTAssertEqual(refused.leg(.downstream)?.request?.complete, false, "the upload was cut")
        XCTAssertNil(refused.leg(.upstream))
    }
}
