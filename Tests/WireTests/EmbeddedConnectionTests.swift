import XCTest
@testable import Wire

/// The embedded backend: a loop stepped by hand, connections in memory,
/// timers on a clock the test moves, dials the test answers. Every
/// behaviour is one a socket connection has too; here it is deterministic.
final class EmbeddedConnectionTests: XCTestCase {
    private let address = SocketAddress.loopbackIPv4(port: 8080)

    /// A listener on `address` that starts each connection, logging its events.
    private func serve(_ network: EmbeddedNetwork, log: EventLog, onStart: @escaping (Connection) -> Void = { _ in }) {
        network.listen(on: address) { connection in
            connection.start { event in log.events.append(event) }
            onStart(connection)
        }
    }

    /// What one connection's handler received. `@unchecked Sendable`: used
    /// only on the embedded loop's thread, the test's.
    /// The connection a listener accepted. `@unchecked Sendable`: on the loop's thread only.
    final class Accepted: @unchecked Sendable {
        var connection: Connection?
    }

    /// A loop, a listener on `address` that logs its connection's events, and a client connected to it (not yet accepted).
    private func connected() throws -> (EventLoop, EventLog, Accepted, EmbeddedPeer) {
        let loop = EventLoop.embedded()
        let network = EmbeddedNetwork(loop: loop)
        let log = EventLog()
        let server = Accepted()
        serve(network, log: log) { server.connection = $0 }
        return (loop, log, server, try network.connect(to: address))
    }

    final class EventLog: @unchecked Sendable {
        var events: [ConnectionEvent] = []
        var received: [UInt8] {
            var bytes: [UInt8] = []
            for case .received(let chunk) in events { bytes += chunk }
            return bytes
        }
        var sawEOF: Bool { events.contains { if case .readEOF = $0 { true } else { false } } }
        var closed: WireError?? {
            for case .closed(let error) in events { return .some(error) }
            return nil
        }
        var writableCount: Int { events.filter { if case .writable = $0 { true } else { false } }.count }
    }

    func testNothingMovesUntilTheLoopRunsThenBytesCrossBothWays() throws {
        let (loop, log, server, client) = try connected()
        client.send("ping")
        XCTAssertNil(server.connection, "accepting waits for the loop")
        loop.run()
        XCTAssertEqual(log.received, Array("ping".utf8))
        server.connection?.write(Array("pong".utf8))
        XCTAssertEqual(client.read(), [], "the write waits for the end of a turn")
        loop.run()
        XCTAssertEqual(client.readText(), "pong")
        client.finishSending()
        loop.run()
        XCTAssertTrue(log.sawEOF)
        server.connection?.close()
        loop.run()
        XCTAssertTrue(client.receivedEOF)
        XCTAssertTrue(client.isClosed)
        XCTAssertEqual(log.closed, .some(nil))
    }

    func testConnectingWhereNothingListensIsRefused() {
        let network = EmbeddedNetwork(loop: .embedded())
        XCTAssertThrowsError(try network.connect(to: address)) { error in
            XCTAssertEqual(error as? WireError, .connectionRefused(address))
        }
    }

    func testAPausedReaderLeavesBytesWithThePeerUntilItResumes() throws {
        let (loop, log, server, client) = try connected()
        loop.run()
        server.connection?.pauseReading()
        client.send("held")
        loop.run()
        XCTAssertEqual(log.received, [])
        XCTAssertEqual(client.unconsumedByteCount, 4)
        server.connection?.resumeReading()
        loop.run()
        XCTAssertEqual(log.received, Array("held".utf8))
        XCTAssertEqual(client.unconsumedByteCount, 0)
    }

    func testAFullReceiveWindowMakesTheWriterUnwritableUntilThePeerReads() throws {
        let (loop, log, server, client) = try connected()
        client.receiveWindow = 1000
        loop.run()
        let connection = try XCTUnwrap(server.connection)
        connection.writeWatermarks = WriteWatermarks(low: 100, high: 2000)
        XCTAssertTrue(connection.write([UInt8](repeating: 1, count: 1500)))
        XCTAssertFalse(connection.write([UInt8](repeating: 2, count: 1500)), "3000 pending: above the high watermark")
        loop.run()
        XCTAssertEqual(client.unreadByteCount, 1000, "the window took 1000, the rest waits")
        XCTAssertEqual(connection.pendingWriteByteCount, 2000)
        XCTAssertFalse(connection.isWritable)
        XCTAssertEqual(client.read().count, 1000)
        loop.run()
        XCTAssertEqual(connection.pendingWriteByteCount, 1000)
        XCTAssertEqual(log.writableCount, 0, "1000 pending is above the low watermark")
        _ = client.read()
        loop.run()
        XCTAssertEqual(client.read().count, 1000)
        loop.run()
        XCTAssertEqual(connection.pendingWriteByteCount, 0)
        XCTAssertEqual(log.writableCount, 1)
        XCTAssertTrue(connection.isWritable)
    }

    func testAResetByThePeerClosesTheConnectionWithTheError() throws {
        let (loop, log, _, client) = try connected()
        loop.run()
        client.reset()
        loop.run()
        XCTAssertEqual(log.closed, .some(.connectionReset))
    }

    func testAnAbortReachesThePeerAsAReset() throws {
        let (loop, log, server, client) = try connected()
        loop.run()
        server.connection?.abort()
        loop.run()
        XCTAssertTrue(client.receivedReset)
        XCTAssertTrue(client.isClosed)
        XCTAssertFalse(client.receivedEOF)
    }

    func testTimersFireOnlyAsTheTestMovesTheClock() {
        let loop = EventLoop.embedded()
        let fired = Locked<[String]>([])
        let start = loop.now
        loop.schedule(after: .seconds(2)) { fired.withValue { $0.append("two") } }
        loop.schedule(after: .seconds(1)) {
            fired.withValue { $0.append("one") }
            loop.schedule(after: .milliseconds(500)) { fired.withValue { $0.append("one and a half") } }
        }
        let cancelled = loop.schedule(after: .milliseconds(1200)) { fired.withValue { $0.append("cancelled") } }
        loop.run()
        XCTAssertEqual(fired.current, [])
        cancelled.cancel()
        loop.advanceTime(by: .milliseconds(999))
        XCTAssertEqual(fired.current, [])
        loop.advanceTime(by: .milliseconds(1001))
        XCTAssertEqual(fired.current, ["one", "one and a half", "two"], "earliest first, one scheduled on the way included")
        XCTAssertEqual(loop.now - start, .seconds(2))
    }

    func testADialWaitsForTheTestAndTimesOutOnTheLoopsClock() {
        let loop = EventLoop.embedded()
        let network = EmbeddedNetwork(loop: loop)
        let outcomes = Locked<[Result<Connection, WireError>]>([])
        var results: [Result<Connection, WireError>] { outcomes.current }
        for (host, port) in [("origin.test", 443), ("127.0.0.1", 9), ("late.test", 80)] as [(String, UInt16)] {
            Connection.connect(host: host, port: port, on: loop, timeout: .seconds(5)) { result in
                outcomes.withValue { $0.append(result) }
            }
        }
        loop.run()
        XCTAssertEqual(network.dials.map(\.host), ["origin.test", "127.0.0.1", "late.test"])
        let origin = network.takeDial()!
        let peer = origin.accept()
        network.takeDial()!.refuse()
        loop.run()
        XCTAssertEqual(results.count, 2)
        guard case .success(let connection) = results.first else { return XCTFail("\(results)") }
        XCTAssertEqual(connection.remoteAddress, .loopbackIPv4(port: 443))
        XCTAssertEqual(peer.address, .loopbackIPv4(port: 443))
        guard case .failure(.connectionRefused(let address)) = results.last else { return XCTFail("\(results)") }
        XCTAssertEqual(address, SocketAddress(ip: "127.0.0.1", port: 9))
        loop.advanceTime(by: .seconds(5))
        guard case .failure(.timedOut) = results.last else { return XCTFail("\(results)") }
        XCTAssertEqual(network.dials.count, 0)
    }

    /// A dial from `network`'s loop to a listener on `address` (a socket
    /// pair in memory), both ends started and logging, once the loop ran.
    private func dialPair(_ network: EmbeddedNetwork) -> (client: Connection?, clientLog: EventLog, server: Accepted, log: EventLog) {
        let log = EventLog()
        let server = Accepted()
        serve(network, log: log) { server.connection = $0 }
        let dialled = Locked<Connection?>(nil)
        let clientLog = EventLog()
        Connection.connect(host: "127.0.0.1", port: address.port, on: network.loop) { result in
            let connection = try? result.get()
            connection?.start { clientLog.events.append($0) }
            dialled.withValue { $0 = connection }
        }
        network.loop.run()
        return (dialled.current, clientLog, server, log)
    }

    func testADialToAListenerOfTheNetworkIsASocketPairInMemory() {
        let loop = EventLoop.embedded()
        let network = EmbeddedNetwork(loop: loop)
        let (client, clientLog, server, log) = dialPair(network)
        XCTAssertTrue(network.dials.isEmpty)
        client?.write(Array("GET".utf8))
        loop.run()
        XCTAssertEqual(log.received, Array("GET".utf8))
        server.connection?.write(Array("200".utf8))
        server.connection?.close()
        loop.run()
        XCTAssertEqual(clientLog.received, Array("200".utf8))
        XCTAssertTrue(clientLog.sawEOF)
        client?.close()
        loop.run()
        XCTAssertEqual(log.closed, .some(nil))
        XCTAssertEqual(clientLog.closed, .some(nil))
    }
    /// With `socketPairWindow`, a socket pair's reader that stops holds its
    /// writer back at the two buffers, as a kernel's would; the bytes, then
    /// the writer's FIN, arrive in order once the reader resumes.
    func testASocketPairsWindowHoldsTheWriterUntilTheReaderResumesThenTheFINFollowsTheBytes() throws {
        let loop = EventLoop.embedded()
        let network = EmbeddedNetwork(loop: loop)
        network.socketPairWindow = 1000
        let (dialled, clientLog, server, _) = dialPair(network)
        let client = try XCTUnwrap(dialled)
        let connection = try XCTUnwrap(server.connection)
        client.pauseReading()
        let bytes = (0..<5000).map { UInt8(truncatingIfNeeded: $0) }
        connection.write(bytes)
        loop.run()
        XCTAssertEqual(connection.pendingWriteByteCount, 3000, "a window on each side: 2000 left the writer")
        XCTAssertEqual(clientLog.received, [])
        client.resumeReading()
        loop.run()
        XCTAssertEqual(clientLog.received, bytes, "every byte, in order")
        // Again with the writer's FIN while its last bytes wait in the buffers.
        client.pauseReading()
        connection.write(Array(bytes.prefix(2000)))
        connection.close()
        loop.run()
        XCTAssertEqual(connection.pendingWriteByteCount, 0, "2000 fit in the two buffers")
        client.resumeReading()
        loop.run()
        XCTAssertEqual(clientLog.received, bytes + bytes.prefix(2000), "every byte, in order")
        XCTAssertTrue(clientLog.sawEOF, "the FIN after the bytes")
        client.close()
        loop.run()
        XCTAssertEqual(clientLog.closed, .some(nil))
    }
}
