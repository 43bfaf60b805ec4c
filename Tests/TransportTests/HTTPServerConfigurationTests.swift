import XCTest
import HTTP
import Transport

final class HTTPServerConfigurationTests: XCTestCase {
    /// The configuration is a value: a change, nested ones included, reaches
    /// only the copy it was made on, whatever the shared storage underneath.
    func testCopiesAreIndependentValues() {
        var changed = HTTPServerConnection.Configuration()
        let before = changed
        changed.automaticContinue = false
        changed.http2.enableConnectProtocol = true
        changed.streamWriteHighWater = 1234
        changed.lingerTimeout = .milliseconds(5)
        changed.http1Limits.maxStartLineLength = 99
        changed.protocolChoice = .http1
        let after = changed
        changed.streamWriteHighWater = 5678

        XCTAssertTrue(before.automaticContinue)
        XCTAssertFalse(before.http2.enableConnectProtocol)
        XCTAssertEqual(before.streamWriteHighWater, 256 * 1024)
        XCTAssertEqual(before.lingerTimeout, .seconds(2))
        XCTAssertEqual(before.http1Limits.maxStartLineLength, HTTP1ParserLimits.standard.maxStartLineLength)
        XCTAssertEqual(before.protocolChoice, .negotiated)

        XCTAssertFalse(after.automaticContinue)
        XCTAssertTrue(after.http2.enableConnectProtocol)
        XCTAssertEqual(after.streamWriteHighWater, 1234)
        XCTAssertEqual(after.lingerTimeout, .milliseconds(5))
        XCTAssertEqual(after.http1Limits.maxStartLineLength, 99)
        XCTAssertEqual(after.protocolChoice, .http1)
        XCTAssertEqual(changed.streamWriteHighWater, 5678)
    }
}
