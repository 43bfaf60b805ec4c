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
        let listener = try adoptAcceptingOneWaitingConnection(socket, on: loop)
        XCTAssertEqual(listener.localAddress, socket.localAddress)
        XCTAssertThrowsError(try Listener(adopting: socket, on: loop) { $0.close() }) { error in
            XCTAssertEqual(error as? WireError, .system(call: "adopt", errno: EBADF), "a socket is adopted once")
        }
        close(listener)
    }

    /// Connects a client before the server runs (it waits in the backlog),
    /// then has a listener adopt `socket` and accept it.
    private func adoptAcceptingOneWaitingConnection(_ socket: ListeningSocket, on loop: EventLoop) throws -> Listener {
        let client = try connectAndWait(to: socket.localAddress, on: loop).get()
        let accepted = expectation(description: "accepted from the backlog")
        let listener = try Listener(adopting: socket, on: loop) { connection in
            connection.close()
            accepted.fulfill()
        }
        wait(for: [accepted], timeout: patience)
        onLoop(loop) { client.close() }
        return listener
    }

    private func close(_ listener: Listener) {
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

    /// A socket handed down by a parent (`--listen-fd`): taken over as it
    /// is, made non-blocking and close-on-exec, and served by a listener.
    func testAnInheritedListeningSocketIsAdoptedAndServed() throws {
        let loop = EventLoop(label: "test.inherit")
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        let address = SocketAddress.loopbackIPv4(port: 0)
        XCTAssertEqual(address.withSockAddr { bind(descriptor, $0, $1) }, 0)
        XCTAssertEqual(listen(descriptor, 8), 0)
        let inherited = try ListeningSocket(inheriting: descriptor)
        XCTAssertEqual(inherited.localAddress, try Socket.localAddress(descriptor))
        XCTAssertNotEqual(fcntl(descriptor, F_GETFL) & O_NONBLOCK, 0)
        XCTAssertEqual(fcntl(descriptor, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC)
        close(try adoptAcceptingOneWaitingConnection(inherited, on: loop))
        XCTAssertEqual(fcntl(descriptor, F_GETFD), -1, "the listener closed the descriptor it took over")
    }

    func testAnInheritedDescriptorThatDoesNotListenIsRefusedAndLeftOpen() throws {
        let datagram = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { Glibc.close(datagram) }
        XCTAssertThrowsError(try ListeningSocket(inheriting: datagram)) { error in
            XCTAssertEqual(error as? WireError, .notListening(descriptor: datagram, reason: "it is not a stream socket"))
        }
        let unbound = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { Glibc.close(unbound) }
        XCTAssertThrowsError(try ListeningSocket(inheriting: unbound)) { error in
            XCTAssertEqual(error as? WireError, .notListening(descriptor: unbound,
                                                              reason: "it is bound to 0.0.0.0:0 but not listening (listen(2) was not called)"))
        }
        var pipeEnds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&pipeEnds), 0)
        defer { pipeEnds.forEach { Glibc.close($0) } }
        XCTAssertThrowsError(try ListeningSocket(inheriting: pipeEnds[0])) { error in
            XCTAssertEqual("\(error)", "descriptor \(pipeEnds[0]) is not a listening TCP socket: it is a pipe")
        }
        XCTAssertNotEqual(fcntl(datagram, F_GETFD), -1, "a refused descriptor stays open")
    }
}
