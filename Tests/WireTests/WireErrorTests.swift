import Glibc
import XCTest
@testable import Wire

final class WireErrorTests: XCTestCase {
    func testSystemErrorNamesTheCallAndTheErrno() {
        let text = WireError.system(call: "bind", errno: EACCES).description
        XCTAssertTrue(text.hasPrefix("bind failed: EACCES ("), text)
        XCTAssertTrue(text.contains(WireError.errnoText(EACCES)), text)
        XCTAssertEqual(WireError.errnoName(99_999), "errno 99999")
    }

    func testErrnoMapsToTheSpecificCase() {
        let address = SocketAddress.loopbackIPv4(port: 9)
        XCTAssertEqual(WireError.fromErrno(ECONNREFUSED, call: "connect", address: address), .connectionRefused(address))
        XCTAssertEqual(WireError.fromErrno(EADDRINUSE, call: "bind", address: address), .addressInUse(address))
        XCTAssertEqual(WireError.fromErrno(EHOSTUNREACH, call: "connect", address: address), .unreachable(address))
        XCTAssertEqual(WireError.fromErrno(ECONNRESET, call: "read"), .connectionReset)
        XCTAssertEqual(WireError.fromErrno(EPIPE, call: "writev"), .brokenPipe)
        XCTAssertEqual(WireError.fromErrno(ETIMEDOUT, call: "read"), .timedOut)
        XCTAssertEqual(WireError.fromErrno(ECONNREFUSED, call: "read"), .system(call: "read", errno: ECONNREFUSED))
        XCTAssertTrue(WireError.addressInUse(address).description.contains("EADDRINUSE"))
    }
}
