import Glibc
import XCTest
@testable import Wire

/// A port bound before its server starts stays reserved, and the listener
/// that adopts it accepts what waited in the backlog.
final class ListeningSocketTests: XCTestCase {
    func testTheReservedPortStaysTakenUntilAdoptedAndWaitingConnectionsAreAccepted() throws {
        let loop = EventLoop(label: "test.adopt")
        let socket = try ListeningSocket(bindingTo: .loopbackIPv4(port: 0))
        XCTAssertNotEqual(socket.localAddress.port, 0)
        XCTAssertThrowsError(try ListeningSocket(bindingTo: socket.localAddress)) { error in
            XCTAssertEqual(error as? WireError, .addressInUse(socket.localAddress), "the port is still ours")
        }
        // A client connects before the server runs: it waits in the backlog.
        let client = try connectAndWait(to: socket.localAddress, on: loop).get()
        let accepted = expectation(description: "accepted from the backlog")
        let listener = try Listener(adopting: socket, on: loop) { connection in
            connection.close()
            accepted.fulfill()
        }
        wait(for: [accepted], timeout: patience)
        XCTAssertEqual(listener.localAddress, socket.localAddress)
        onLoop(loop) { client.close() }
        XCTAssertThrowsError(try Listener(adopting: socket, on: loop) { $0.close() }) { error in
            XCTAssertEqual(error as? WireError, .system(call: "adopt", errno: EBADF), "a socket is adopted once")
        }
        let closed = expectation(description: "closed")
        listener.close { closed.fulfill() }
        wait(for: [closed], timeout: patience)
    }

    func testClosingAnUnadoptedSocketReleasesThePort() throws {
        let socket = try ListeningSocket(bindingTo: .loopbackIPv4(port: 0))
        socket.close()
        socket.close()
        let again = try ListeningSocket(bindingTo: socket.localAddress)
        again.close()
    }
}
