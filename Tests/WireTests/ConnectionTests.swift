import Glibc
import XCTest
@testable import Wire

final class ConnectionTests: XCTestCase {
    /// A listener on `address` (port 0) whose connections echo what they read
    /// and close after the peer's EOF. `closed` is fulfilled per server-side close.
    private func startEchoServer(on address: SocketAddress, group: EventLoopGroup,
                                 closed: XCTestExpectation? = nil,
                                 errors: Locked<[WireError]>? = nil) throws -> Listener {
        try Listener(bindingTo: address, on: group.loops[0], connectionLoops: group) { connection in
            XCTAssertTrue(connection.loop.isOnLoop)
            connection.start { event in
                switch event {
                case .received(let bytes): connection.write(bytes)
                case .readEOF: connection.close()
                case .writable: break
                case .closed(let error):
                    if let error { errors?.withValue { $0.append(error) } }
                    closed?.fulfill()
                }
            }
        }
    }

    private func echoRoundTrip(over address: SocketAddress) throws {
        let group = EventLoopGroup(loopCount: 2, label: "test.echo")
        let serverClosed = expectation(description: "server side closed")
        let serverErrors = Locked<[WireError]>([])
        let listener = try startEchoServer(on: address, group: group, closed: serverClosed, errors: serverErrors)
        defer { listener.close() }
        XCTAssertNotEqual(listener.localAddress.port, 0)
        XCTAssertEqual(listener.localAddress.withPort(0), address)

        let client = try connectAndWait(to: listener.localAddress, on: group.loops[1]).get()
        XCTAssertEqual(client.remoteAddress, listener.localAddress)
        XCTAssertEqual(client.localAddress.family, address.family)

        let payload = Pattern.bytes(at: 0, count: 100_000)
        let log = Locked(EventLog())
        let clientClosed = expectation(description: "client closed")
        client.loop.execute {
            client.start { event in
                let received = log.withValue { $0.record(event); return $0.bytes.count }
                if case .received = event, received == payload.count { client.close() }
                if case .closed = event { clientClosed.fulfill() }
            }
            client.write(Array(payload[..<1000]))
            client.write(Array(payload[1000...]))
        }
        wait(for: [clientClosed, serverClosed], timeout: patience)
        XCTAssertEqual(log.current.bytes, payload)
        XCTAssertNil(log.current.closeError)
        XCTAssertEqual(log.current.events.last, "closed")
        XCTAssertEqual(serverErrors.current, [])
    }

    func testEchoRoundTripOverIPv4() throws {
        try echoRoundTrip(over: .loopbackIPv4(port: 0))
    }

    func testEchoRoundTripOverIPv6() throws {
        try echoRoundTrip(over: .loopbackIPv6(port: 0))
    }

    /// Written bytes wait for the end of the turn, unless `flushNow` sends
    /// them at once: checked from inside the turn on a plain peer socket.
    func testFlushNowSendsWithinTheTurnWhatWouldWaitForItsEnd() throws {
        let loop = EventLoop(label: "test.flush-now")
        let listening = try ListeningSocket(bindingTo: .loopbackIPv4(port: 0))
        defer { listening.close() }
        let peerDescriptor = try XCTUnwrap(listening.take())
        defer { Glibc.close(peerDescriptor) }
        let client = try connectAndWait(to: listening.localAddress, on: loop).get()
        let peer = accept(peerDescriptor, nil, nil)
        XCTAssertGreaterThanOrEqual(peer, 0)
        defer { Glibc.close(peer) }

        let seen = onLoop(loop) { () -> (beforeFlush: Int, afterFlush: [UInt8]) in
            client.start { _ in }
            client.write(Array("held".utf8))
            client.write(Array(" then sent".utf8))
            var buffer = [UInt8](repeating: 0, count: 64)
            let beforeFlush = recv(peer, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            client.flushNow()
            var ready = pollfd(fd: peer, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, Int32(patience * 1000)) == 1 else { return (beforeFlush, []) }
            let count = recv(peer, &buffer, buffer.count, 0)
            return (beforeFlush, Array(buffer[..<max(0, count)]))
        }
        XCTAssertEqual(seen.beforeFlush, -1, "nothing is sent before the turn ends")
        XCTAssertEqual(String(decoding: seen.afterFlush, as: UTF8.self), "held then sent")
        onLoop(loop) { client.abort() }
    }

    /// A read that comes back short ends the turn without a read that
    /// would only say EAGAIN; what arrives afterwards (more bytes, then the
    /// FIN, each on its own edge) is still announced and read.
    func testBytesAndEOFArrivingAfterAShortReadAreStillRead() throws {
        let group = EventLoopGroup(loopCount: 2, label: "test.short-read")
        let serverLog = Locked(EventLog())
        let firstChunk = expectation(description: "first chunk read")
        let secondChunk = expectation(description: "second chunk read")
        let serverEOF = expectation(description: "server saw EOF")
        let listener = try Listener(bindingTo: .loopbackIPv4(port: 0), on: group.loops[0]) { connection in
            connection.start { event in
                let count = serverLog.withValue { log -> Int in
                    log.record(event)
                    return log.bytes.count
                }
                switch event {
                case .received where count == 5: firstChunk.fulfill()
                case .received where count == 11: secondChunk.fulfill()
                case .readEOF:
                    serverEOF.fulfill()
                    connection.close()
                default: break
                }
            }
        }
        defer { listener.close() }

        let client = try connectAndWait(to: listener.localAddress, on: group.loops[1]).get()
        let clientClosed = expectation(description: "client closed")
        _ = onLoop(client.loop) {
            let log = startRecording(client, fulfilling: clientClosed)
            client.write(Array("hello".utf8))
            return log
        }
        wait(for: [firstChunk], timeout: patience)
        onLoop(client.loop) { client.write(Array(" world".utf8)) }
        wait(for: [secondChunk], timeout: patience)
        onLoop(client.loop) { client.shutdownWrite() }
        wait(for: [serverEOF, clientClosed], timeout: patience)
        XCTAssertEqual(serverLog.current.bytes, Array("hello world".utf8))
    }

    func testHalfCloseLetsThePeerAnswerAfterEOF() throws {
        let group = EventLoopGroup(loopCount: 2, label: "test.half-close")
        let serverLog = Locked(EventLog())
        let serverClosed = expectation(description: "server closed")
        let listener = try Listener(bindingTo: .loopbackIPv4(port: 0), on: group.loops[0]) { connection in
            connection.start { event in
                serverLog.withValue { $0.record(event) }
                switch event {
                case .readEOF:
                    // The client's write side is shut; ours is still open.
                    connection.write(Array("world".utf8))
                    connection.close()
                case .closed:
                    serverClosed.fulfill()
                default:
                    break
                }
            }
        }
        defer { listener.close() }

        let client = try connectAndWait(to: listener.localAddress, on: group.loops[1]).get()
        let clientClosed = expectation(description: "client closed")
        let clientLog = onLoop(client.loop) {
            let log = startRecording(client, fulfilling: clientClosed)
            client.write(Array("hello".utf8))
            client.shutdownWrite()
            XCTAssertFalse(client.write(Array("dropped".utf8)), "writes after shutdownWrite are refused")
            return log
        }
        wait(for: [clientClosed, serverClosed], timeout: patience)
        XCTAssertEqual(serverLog.current.bytes, Array("hello".utf8))
        XCTAssertEqual(serverLog.current.events, ["received", "readEOF", "closed"])
        XCTAssertNil(serverLog.current.closeError)
        XCTAssertEqual(clientLog.current.bytes, Array("world".utf8))
        // Both directions finished, so the client closed by itself, cleanly.
        XCTAssertEqual(clientLog.current.events, ["received", "readEOF", "closed"])
        XCTAssertNil(clientLog.current.closeError)
    }

    func testBackpressureBoundsPendingBytesAndDeliversEverything() throws {
        let total = 64 * 1024 * 1024
        let chunkSize = 64 * 1024
        let group = EventLoopGroup(loopCount: 2, label: "test.backpressure")

        struct ServerSide {
            var connection: Connection?
            var received = 0
            var mismatches = 0
        }
        let server = Locked(ServerSide())
        let serverClosed = expectation(description: "server closed")
        let listener = try Listener(bindingTo: .loopbackIPv4(port: 0), on: group.loops[0]) { connection in
            connection.pauseReading()  // a peer that does not read, until told to
            server.withValue { $0.connection = connection }
            connection.start { event in
                switch event {
                case .received(let bytes):
                    server.withValue { state in
                        if !Pattern.matches(bytes, at: state.received) { state.mismatches += 1 }
                        state.received += bytes.count
                    }
                case .readEOF:
                    connection.close()
                case .closed(let error):
                    XCTAssertNil(error)
                    serverClosed.fulfill()
                case .writable:
                    break
                }
            }
        }
        defer { listener.close() }

        let client = try connectAndWait(to: listener.localAddress, on: group.loops[1]).get()
        struct ClientSide {
            var sent = 0
            var maxPending = 0
            var refusedWrites = 0
            var writableEvents = 0
            var stalled = false
            var watching = false
        }
        let state = Locked(ClientSide())
        let clientClosed = expectation(description: "client closed")
        let limit = client.writeWatermarks.high + chunkSize

        // Once the kernel buffers are full (a write met EAGAIN and awaits the poller),
        // the reader was really not reading: let it read.
        @Sendable func watchForStall() {
            if client.awaitingWritable, client.pendingWriteByteCount > client.writeWatermarks.low {
                state.withValue { $0.stalled = true }
                group.loops[0].execute { server.current.connection?.resumeReading() }
            } else {
                client.loop.schedule(after: .milliseconds(5)) { watchForStall() }
            }
        }

        @Sendable func produce() {
            while client.isWritable {
                let offset = state.current.sent
                guard offset < total else { break }
                let count = min(chunkSize, total - offset)
                let accepted = client.write(Pattern.bytes(at: offset, count: count))
                let pending = client.pendingWriteByteCount
                state.withValue {
                    $0.sent += count
                    $0.maxPending = max($0.maxPending, pending)
                    if !accepted { $0.refusedWrites += 1 }
                }
            }
            let startWatching = state.withValue { side -> Bool in
                defer { side.watching = true }
                return !side.watching && !client.isWritable
            }
            if startWatching { watchForStall() }
            if state.current.sent == total { client.close() }
        }

        client.loop.execute {
            client.start { event in
                switch event {
                case .writable:
                    XCTAssertLessThanOrEqual(client.pendingWriteByteCount, client.writeWatermarks.low)
                    state.withValue { $0.writableEvents += 1 }
                    produce()
                case .closed(let error):
                    XCTAssertNil(error)
                    clientClosed.fulfill()
                case .received, .readEOF:
                    break
                }
            }
            produce()
        }
        wait(for: [clientClosed, serverClosed], timeout: 10 * patience)

        let client_ = state.current
        XCTAssertEqual(client_.sent, total)
        XCTAssertTrue(client_.stalled, "the writer never filled the kernel buffers")
        XCTAssertGreaterThan(client_.refusedWrites, 0, "isWritable never went false")
        XCTAssertGreaterThan(client_.writableEvents, 0)
        XCTAssertLessThanOrEqual(client_.maxPending, limit)
        XCTAssertGreaterThanOrEqual(client_.maxPending, client.writeWatermarks.high)
        XCTAssertEqual(server.current.received, total)
        XCTAssertEqual(server.current.mismatches, 0)
    }

    func testPauseReadingStopsDeliveryUntilResumed() throws {
        let group = EventLoopGroup(loopCount: 2, label: "test.pause")
        let first = Pattern.bytes(at: 0, count: 1024)
        let second = Pattern.bytes(at: 1024, count: 32 * 1024)
        let clientBox = Locked<Connection?>(nil)

        struct ServerSide {
            var log = EventLog()
            var receivedWhenPaused = -1
            var receivedBeforeResume = -1
        }
        let server = Locked(ServerSide())
        let allReceived = expectation(description: "server read everything")
        let listener = try Listener(bindingTo: .loopbackIPv4(port: 0), on: group.loops[0]) { connection in
            /// Waits until the whole second write sits unread in the kernel,
            /// lets the loop turn once more, then resumes reading.
            @Sendable func resumeOnceBuffered() {
                var waiting: Int32 = 0
                _ = ioctl(connection.descriptor!, UInt(FIONREAD), &waiting)
                if Int(waiting) >= second.count {
                    connection.loop.schedule(after: .milliseconds(20)) {
                        server.withValue { $0.receivedBeforeResume = $0.log.bytes.count }
                        XCTAssertTrue(connection.isReadingPaused)
                        connection.resumeReading()
                        XCTAssertFalse(connection.isReadingPaused)
                    }
                } else {
                    connection.loop.schedule(after: .milliseconds(5)) { resumeOnceBuffered() }
                }
            }
            connection.start { event in
                let count = server.withValue { $0.log.record(event); return $0.log.bytes.count }
                guard case .received = event else { return }
                if count == first.count {
                    connection.pauseReading()
                    connection.pauseReading()  // repeated pauses are harmless
                    server.withValue { $0.receivedWhenPaused = count }
                    let client = clientBox.current!
                    client.loop.execute { client.write(second) }
                    resumeOnceBuffered()
                } else if count == first.count + second.count {
                    allReceived.fulfill()
                    connection.abort()
                }
            }
        }
        defer { listener.close() }

        let client = try connectAndWait(to: listener.localAddress, on: group.loops[1]).get()
        clientBox.withValue { $0 = client }
        client.loop.execute {
            client.start { _ in }
            client.write(first)
        }
        wait(for: [allReceived], timeout: patience)
        XCTAssertEqual(server.current.receivedWhenPaused, first.count)
        XCTAssertEqual(server.current.receivedBeforeResume, first.count, "bytes were delivered while paused")
        XCTAssertEqual(server.current.log.bytes, first + second)
        onLoop(client.loop) { client.abort() }
    }

    func testConnectToAClosedPortIsRefused() throws {
        // A bound socket that does not listen: its port stays ours and refuses.
        let fd = try Socket.makeTCP(family: AF_INET)
        defer { Socket.close(fd) }
        XCTAssertEqual(SocketAddress.loopbackIPv4(port: 0).withSockAddr { bind(fd, $0, $1) }, 0)
        let address = try Socket.localAddress(fd)

        let loop = EventLoop(label: "test.refused")
        XCTAssertEqual(connectAndWait(to: address, on: loop).failure, .connectionRefused(address))

        let byName = Locked<WireError?>(nil)
        let done = expectation(description: "connect by name")
        Connection.connect(host: "localhost", port: address.port, on: loop) { result in
            byName.withValue { $0 = result.failure }
            done.fulfill()
        }
        wait(for: [done], timeout: patience)
        // Both localhost addresses refuse; the first one's error is reported.
        XCTAssertEqual(byName.current, .connectionRefused(address))
    }

    func testConnectByHostName() throws {
        let group = EventLoopGroup(loopCount: 1, label: "test.by-name")
        let listener = try startEchoServer(on: .loopbackIPv4(port: 0), group: group)
        defer { listener.close() }
        let outcome = Locked<Result<Connection, WireError>?>(nil)
        let done = expectation(description: "connected")
        Connection.connect(host: "localhost", port: listener.localAddress.port, on: group.loops[0]) { result in
            outcome.withValue { $0 = result }
            done.fulfill()
        }
        wait(for: [done], timeout: patience)
        let connection = try XCTUnwrap(outcome.current).get()
        XCTAssertEqual(connection.remoteAddress, listener.localAddress)
        onLoop(connection.loop) { connection.close() }
    }

    func testResetPeerIsReportedAndTheListenerKeepsServing() throws {
        let group = EventLoopGroup(loopCount: 2, label: "test.reset")
        let serverLogs = Locked<[EventLog]>([])
        let firstReceived = expectation(description: "server got the first client's byte")
        let firstClosed = expectation(description: "server side of the first client closed")
        let listener = try Listener(bindingTo: .loopbackIPv4(port: 0), on: group.loops[0]) { connection in
            let index = serverLogs.withValue { $0.append(EventLog()); return $0.count - 1 }
            connection.start { event in
                serverLogs.withValue { $0[index].record(event) }
                switch event {
                case .received(let bytes):
                    if index == 0 { firstReceived.fulfill() } else { connection.write(bytes) }
                case .readEOF:
                    connection.close()
                case .closed:
                    if index == 0 { firstClosed.fulfill() }
                case .writable:
                    break
                }
            }
        }
        defer { listener.close() }

        let aborting = try connectAndWait(to: listener.localAddress, on: group.loops[1]).get()
        let abortingClosed = expectation(description: "aborting client closed")
        let abortingLog = onLoop(aborting.loop) {
            let log = startRecording(aborting, fulfilling: abortingClosed)
            aborting.write([42])
            return log
        }
        wait(for: [firstReceived], timeout: patience)
        onLoop(aborting.loop) { aborting.abort() }
        wait(for: [abortingClosed, firstClosed], timeout: patience)
        XCTAssertNil(abortingLog.current.closeError, "abort is a chosen close, not a failure")

        let first = serverLogs.current[0]
        XCTAssertEqual(first.events.last, "closed")
        // Linux reports the RST as ECONNRESET; a stack that reports plain EOF is also a clean end.
        if first.closeError != nil {
            XCTAssertEqual(first.closeError, .connectionReset)
        } else {
            XCTAssertTrue(first.events.contains("readEOF"), "\(first.events)")
        }

        let next = try connectAndWait(to: listener.localAddress, on: group.loops[1]).get()
        let echoed = expectation(description: "second client echoed")
        let nextLog = Locked(EventLog())
        onLoop(next.loop) {
            next.start { event in
                let count = nextLog.withValue { $0.record(event); return $0.bytes.count }
                if count == 4, case .received = event { next.close() }
                if case .closed = event { echoed.fulfill() }
            }
            next.write(Array("ping".utf8))
        }
        wait(for: [echoed], timeout: patience)
        XCTAssertEqual(nextLog.current.bytes, Array("ping".utf8))
        XCTAssertNil(nextLog.current.closeError)
    }

    func testUnstartedConnectionsCloseTheirDescriptor() throws {
        let group = EventLoopGroup(loopCount: 1, label: "test.unstarted")
        let accepted = expectation(description: "accepted")
        let listener = try Listener(bindingTo: .loopbackIPv4(port: 0), on: group.loops[0]) { connection in
            connection.close()  // closing an unstarted connection releases it at once
            XCTAssertFalse(connection.isOpen)
            accepted.fulfill()
        }
        defer { listener.close() }
        let client = try connectAndWait(to: listener.localAddress, on: group.loops[0]).get()
        wait(for: [accepted], timeout: patience)
        let closed = expectation(description: "client saw the close")
        let log = onLoop(client.loop) {
            let log = startRecording(client, fulfilling: closed)
            client.shutdownWrite()  // with the peer's EOF, both directions finish
            return log
        }
        wait(for: [closed], timeout: patience)
        XCTAssertEqual(log.current.events, ["readEOF", "closed"])
    }

    func testConnectTimesOutWhenTheAcceptQueueIsFull() throws {
        // A listener with backlog 0 that never accepts: once its queue is full
        // the kernel drops further SYNs, so the next connect cannot finish.
        let fd = try Socket.makeTCP(family: AF_INET)
        defer { Socket.close(fd) }
        XCTAssertEqual(SocketAddress.loopbackIPv4(port: 0).withSockAddr { bind(fd, $0, $1) }, 0)
        XCTAssertEqual(listen(fd, 0), 0)
        let address = try Socket.localAddress(fd)
        let loop = EventLoop(label: "test.timeout")
        let before = try openDescriptorCount()

        var queued: [Connection] = []
        var outcome: WireError?
        for _ in 0..<8 where outcome == nil {
            switch connectAndWait(to: address, on: loop, timeout: .milliseconds(200)) {
            case .success(let connection): queued.append(connection)
            case .failure(let error): outcome = error
            }
        }
        XCTAssertEqual(outcome, .timedOut)
        // The timed-out attempt's descriptor is closed by its source's cancel
        // handler, which may run just after the failure is reported: wait for it
        // (bounded). Earlier tests' sockets may close meanwhile, so the count may
        // also fall below; what must not happen is a count above (a leak).
        let deadline = Date().addingTimeInterval(5)
        while try openDescriptorCount() > before + queued.count && Date() < deadline { usleep(10_000) }
        XCTAssertLessThanOrEqual(try openDescriptorCount(), before + queued.count, "a timed-out attempt kept its socket")
        let connections = queued
        onLoop(loop) { connections.forEach { $0.close() } }
    }

    /// The client half-closes at once; the server answers `count` bytes and
    /// closes. Both directions are then shut, so epoll reports a hang-up, after
    /// which libdispatch fires the read source only once: everything must
    /// still arrive, with EOF. With `pausedUntilServerDone` the hang-up
    /// happens while the client is paused.
    private func answerAfterHangUp(count: Int, pausedUntilServerDone: Bool) throws {
        let group = EventLoopGroup(loopCount: 2, label: "test.hang-up")
        let serverClosed = expectation(description: "server closed")
        let listener = try Listener(bindingTo: .loopbackIPv4(port: 0), on: group.loops[0]) { connection in
            connection.start { event in
                switch event {
                case .readEOF:
                    var offset = 0
                    while offset < count {
                        let size = min(64 * 1024, count - offset)
                        connection.write(Pattern.bytes(at: offset, count: size))
                        offset += size
                    }
                    connection.close()
                case .closed(let error):
                    XCTAssertNil(error)
                    serverClosed.fulfill()
                default:
                    break
                }
            }
        }
        defer { listener.close() }

        let client = try connectAndWait(to: listener.localAddress, on: group.loops[1]).get()
        let clientClosed = expectation(description: "client closed")
        let log = onLoop(client.loop) {
            if pausedUntilServerDone { client.pauseReading() }
            let log = startRecording(client, fulfilling: clientClosed)
            client.shutdownWrite()
            return log
        }
        if pausedUntilServerDone {
            wait(for: [serverClosed], timeout: patience)
            XCTAssertEqual(log.current.events, [], "events arrived while paused")
            onLoop(client.loop) { client.resumeReading() }
            wait(for: [clientClosed], timeout: patience)
        } else {
            wait(for: [serverClosed, clientClosed], timeout: patience)
        }
        XCTAssertEqual(log.current.bytes.count, count)
        XCTAssertTrue(Pattern.matches(log.current.bytes, at: 0))
        XCTAssertEqual(log.current.events, ["received", "readEOF", "closed"])
        XCTAssertNil(log.current.closeError)
    }

    func testAnswerLargerThanOneReadBurstArrivesAfterHangUp() throws {
        try answerAfterHangUp(count: 2 * 1024 * 1024, pausedUntilServerDone: false)
    }

    func testAnswerBufferedDuringPauseArrivesAfterHangUp() throws {
        try answerAfterHangUp(count: 160 * 1024, pausedUntilServerDone: true)
    }
}
