import Glibc
import XCTest
@testable import Wire

final class ListenerTests: XCTestCase {
    func testBindingATakenAddressNamesEADDRINUSE() throws {
        let loop = EventLoop(label: "test.in-use")
        let first = try Listener(bindingTo: .loopbackIPv4(port: 0), on: loop) { $0.close() }
        defer { first.close() }
        XCTAssertThrowsError(try Listener(bindingTo: first.localAddress, on: loop) { $0.close() }) { error in
            XCTAssertEqual(error as? WireError, .addressInUse(first.localAddress))
            XCTAssertTrue("\(error)".contains("EADDRINUSE"))
        }
    }

    func testCloseReleasesThePortAndRunsTheCompletion() throws {
        let loop = EventLoop(label: "test.listener-close")
        let listener = try Listener(bindingTo: .loopbackIPv4(port: 0), on: loop) { $0.close() }
        let closed = expectation(description: "closed")
        closed.expectedFulfillmentCount = 2
        listener.close { closed.fulfill() }
        listener.close { closed.fulfill() }
        wait(for: [closed], timeout: patience)
        XCTAssertEqual(connectAndWait(to: listener.localAddress, on: loop).failure,
                       .connectionRefused(listener.localAddress))
        let again = try Listener(bindingTo: listener.localAddress, on: loop) { $0.close() }
        again.close()
    }

    func testDroppingAnUnstartedConnectionClosesIt() throws {
        let loop = EventLoop(label: "test.dropped")
        let listener = try Listener(bindingTo: .loopbackIPv4(port: 0), on: loop) { _ in }
        defer { listener.close() }
        let client = try connectAndWait(to: listener.localAddress, on: loop).get()
        let closed = expectation(description: "client closed")
        let log = onLoop(loop) {
            let log = startRecording(client, fulfilling: closed)
            client.shutdownWrite()
            return log
        }
        wait(for: [closed], timeout: patience)
        XCTAssertEqual(log.current.events, ["readEOF", "closed"], "the server side was not closed by deinit")
    }

    /// Opens `count` connections, `concurrency` at a time, each closed by the
    /// client at once and by the server on EOF; waits for both sides' `.closed`.
    private func cycleConnections(count: Int, concurrency: Int, to address: SocketAddress, group: EventLoopGroup,
                                  serverClosed: Locked<XCTestExpectation?>, errors: Locked<[WireError]>) {
        let clientClosed = expectation(description: "\(count) client closes")
        clientClosed.expectedFulfillmentCount = count
        let serverSide = expectation(description: "\(count) server closes")
        serverSide.expectedFulfillmentCount = count
        serverClosed.withValue { $0 = serverSide }
        let remaining = Locked(count)

        @Sendable func launch() {
            guard remaining.withValue({ left -> Bool in
                guard left > 0 else { return false }
                left -= 1
                return true
            }) else { return }
            Connection.connect(to: address, on: group.next()) { result in
                switch result {
                case .failure(let error):
                    errors.withValue { $0.append(error) }
                    clientClosed.fulfill()
                    serverSide.fulfill()
                    launch()
                case .success(let connection):
                    connection.start { event in
                        guard case .closed(let error) = event else { return }
                        if let error { errors.withValue { $0.append(error) } }
                        clientClosed.fulfill()
                        launch()
                    }
                    connection.close()
                }
            }
        }
        for _ in 0..<concurrency { launch() }
        wait(for: [clientClosed, serverSide], timeout: 10 * patience)
    }

    func testAThousandConnectionsLeaveNoDescriptorBehind() throws {
        let group = EventLoopGroup(loopCount: 2, label: "test.thousand")
        let serverClosed = Locked<XCTestExpectation?>(nil)
        let errors = Locked<[WireError]>([])
        let listener = try Listener(bindingTo: .loopbackIPv4(port: 0), on: group.loops[0],
                                    connectionLoops: group) { connection in
            connection.start { event in
                switch event {
                case .readEOF:
                    connection.close()
                case .closed(let error):
                    if let error { errors.withValue { $0.append(error) } }
                    serverClosed.current?.fulfill()
                case .received, .writable:
                    break
                }
            }
        }
        defer { listener.close() }

        // Warm up: Dispatch opens its own descriptors (epoll, eventfd, timerfd) on first use.
        cycleConnections(count: 10, concurrency: 5, to: listener.localAddress, group: group,
                         serverClosed: serverClosed, errors: errors)
        let before = try openDescriptors()
        cycleConnections(count: 1000, concurrency: 50, to: listener.localAddress, group: group,
                         serverClosed: serverClosed, errors: errors)
        // Descriptors open now that were not before (a descriptor an earlier
        // suite's connection closed meanwhile is no leak of this test's).
        let leaked = try openDescriptors().subtracting(before)
        XCTAssertEqual(leaked, [], "descriptors leaked: \(leaked.sorted())")
        XCTAssertEqual(errors.current, [])
    }
}
