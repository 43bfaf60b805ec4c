import Glibc
import XCTest
@testable import Scenarios

final class ScenarioPortsTests: XCTestCase {
    /// A socket listening on 127.0.0.1 at an ephemeral port, closed when the test ends.
    private func listeningSocket() throws -> Int {
        let descriptor = try LoopbackSocket.bound(port: 0)
        addTeardownBlock { close(descriptor) }
        XCTAssertEqual(listen(descriptor, 1), 0)
        return try LoopbackSocket.localPort(descriptor)
    }

    func testEphemeralPortsAreFiveDistinctFreePorts() throws {
        let ports = try ScenarioPorts.ephemeral()
        XCTAssertEqual(Set(ports.listeners.map(\.port)).count, 5)
        XCTAssertNoThrow(try ports.checkFree())
    }

    func testABasePortGivesFiveConsecutivePortsInPathOrder() {
        let ports = ScenarioPorts(base: 9440)
        XCTAssertEqual(ports, ScenarioPorts(tapA: 9440, loadBalancer: 9441, tapB: 9442, server: 9443, inner: 9444))
        XCTAssertEqual(ports.listeners.map(\.role), [.server, .tapB, .innerIntermediary, .loadBalancer, .tapA])
    }

    func testAPortInUseIsNamedWithItsRole() throws {
        let taken = try listeningSocket()
        let free = try ScenarioPorts.ephemeral()
        let check = ScenarioPorts(tapA: taken, loadBalancer: free.loadBalancer, tapB: free.tapB, server: free.server,
                                  inner: free.inner)
        assertThrows(.portInUse(port: taken, role: "tap A")) { try check.checkFree() }
        let message = ScenarioError.portInUse(port: taken, role: "tap A").description
        XCTAssertEqual(message, "port 127.0.0.1:\(taken) (for tap A) is already in use; choose another --base-port "
                       + "or stop what listens there")
    }

    func testPortsOutsideTheRangeAreRejected() {
        let ports = ScenarioPorts(base: 65534)
        assertThrows(.portsUnavailable(reason: "port 65537 for the mock server is not between 1 and 65535")) {
            try ports.checkFree()
        }
    }

    func testListeningIsSeenWithoutConnecting() throws {
        let port = try listeningSocket()
        XCTAssertTrue(LoopbackSocket.isListening(port: port))
        let bound = try LoopbackSocket.bound(port: 0)
        defer { close(bound) }
        XCTAssertFalse(LoopbackSocket.isListening(port: try LoopbackSocket.localPort(bound)), "bound is not listening")
    }
}
