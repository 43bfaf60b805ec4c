import Glibc
import XCTest
@testable import Wire

/// A connection started with a lending receiver: bytes read are lent from the
/// loop's read buffer instead of copied into `.received` arrays.
final class ConnectionLendingTests: XCTestCase {
    /// A megabyte arrives whole and in order through the lending receiver,
    /// never as `.received`; pausing inside the receiver stops the burst at
    /// once, and resuming goes on where it stopped.
    func testLentBytesArriveInOrderAndPausingStopsTheBurst() throws {
        let group = EventLoopGroup(loopCount: 2, label: "test.lending")
        let payload = stride(from: 0, to: 1 << 20, by: Pattern.maxChunk).flatMap { Pattern.bytes(at: $0, count: Pattern.maxChunk) }
        struct ServerSide {
            var bytes: [UInt8] = []
            var lentCalls = 0
            var receivedEvents = 0
            var lentWhilePaused = 0
            var paused = false
        }
        let server = Locked(ServerSide())
        let allReceived = expectation(description: "server read everything")
        let listener = try Listener(bindingTo: .loopbackIPv4(port: 0), on: group.loops[0]) { connection in
            connection.start({ event in
                if case .received = event { server.withValue { $0.receivedEvents += 1 } }
            }, lending: { lent in
                XCTAssertFalse(lent.isEmpty)
                let (count, pause) = server.withValue { side -> (Int, Bool) in
                    if side.paused { side.lentWhilePaused += 1 }
                    side.bytes += lent  // the receiver copies what it keeps
                    side.lentCalls += 1
                    return (side.bytes.count, side.lentCalls == 1)
                }
                if pause {
                    connection.pauseReading()
                    server.withValue { $0.paused = true }
                    connection.loop.schedule(after: .milliseconds(50)) {
                        server.withValue { $0.paused = false }
                        connection.resumeReading()
                    }
                }
                if count == payload.count {
                    allReceived.fulfill()
                    connection.abort()
                }
            })
        }
        defer { listener.close() }
        let client = try connectAndWait(to: listener.localAddress, on: group.loops[1]).get()
        client.loop.execute {
            client.start { _ in }
            client.write(payload)
        }
        wait(for: [allReceived], timeout: patience)
        XCTAssertEqual(server.current.bytes, payload)
        XCTAssertEqual(server.current.receivedEvents, 0)
        XCTAssertEqual(server.current.lentWhilePaused, 0, "bytes were lent while paused")
        XCTAssertGreaterThan(server.current.lentCalls, 1)
        onLoop(client.loop) { client.abort() }
    }

    /// Code run while the read buffer is lent that reads in turn gets a buffer
    /// of its own, so the lent bytes are not overwritten.
    func testANestedReadGetsABufferOfItsOwn() {
        let loop = EventLoop(label: "test.scratch")
        let distinct = onLoop(loop) { () -> Bool in
            loop.withReadScratch { outer in
                outer.storeBytes(of: 7, as: UInt8.self)
                let inner = loop.withReadScratch { inner -> Bool in
                    inner.storeBytes(of: 9, as: UInt8.self)
                    return inner.baseAddress != outer.baseAddress && inner.count == outer.count
                }
                return inner && outer.load(as: UInt8.self) == 7
            }
        }
        XCTAssertTrue(distinct)
        let reused = onLoop(loop) { () -> Bool in
            let first = loop.withReadScratch { $0.baseAddress }
            return loop.withReadScratch { $0.baseAddress } == first
        }
        XCTAssertTrue(reused, "the loop's own buffer is lent again once given back")
    }
}
