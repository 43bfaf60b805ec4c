import Foundation
import Glibc
import XCTest
@testable import Wire

/// Loops that wait for their sockets on a thread of their own
/// (`EventLoop.Waiting.thread`), and the end-of-round work both kinds of
/// loop run after a wake-up's sockets.
final class PollerThreadTests: XCTestCase {
    /// The names of this process's threads (`/proc/self/task/*/comm`).
    private func threadNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").compactMap { task in
            try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)
                .trimmingCharacters(in: .newlines)
        }
    }

    /// Those of `descriptors` that are epolls, eventfds or sockets, each with what it is.
    private func loopKinds(_ descriptors: Set<Int32>) -> [String] {
        descriptors.sorted().compactMap { descriptor in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)"),
                  target.hasPrefix("socket:") || target == "anon_inode:[eventpoll]" || target == "anon_inode:[eventfd]"
            else { return nil }
            return "\(descriptor) \(target)"
        }
    }

    /// Waits (up to `patience`) until `condition` holds; false if it never did.
    private func eventually(_ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(patience)
        while Date() < deadline {
            if try condition() { return true }
            usleep(5_000)
        }
        return try condition()
    }

    /// A listener on `loop` whose connections echo what they read, checking
    /// that every event arrives on the loop; closes after the peer's EOF.
    private func echoServer(on loop: EventLoop) throws -> Listener {
        try Listener(bindingTo: .loopbackIPv4(port: 0), on: loop) { connection in
            connection.start { event in
                XCTAssertTrue(connection.loop.isOnLoop)
                switch event {
                case .received(let bytes): connection.write(bytes)
                case .readEOF: connection.close()
                case .writable, .closed: break
                }
            }
        }
    }

    /// Sends `payload` through an echo on `loop` (both ends on it) and returns what came back.
    private func echo(_ payload: [UInt8], on loop: EventLoop) throws -> [UInt8] {
        let listener = try echoServer(on: loop)
        defer { listener.close() }
        let client = try connectAndWait(to: listener.localAddress, on: loop).get()
        let log = Locked(EventLog())
        let closed = expectation(description: "client closed")
        loop.execute {
            client.start { event in
                XCTAssertTrue(loop.isOnLoop)
                let received = log.withValue { $0.record(event); return $0.bytes.count }
                if case .received = event, received == payload.count { client.close() }
                if case .closed = event { closed.fulfill() }
            }
            client.write(payload)
        }
        wait(for: [closed], timeout: patience)
        XCTAssertNil(log.current.closeError)
        return log.current.bytes
    }

    func testALoopWithItsOwnThreadServesConnectionsOnItsQueue() throws {
        let loop = EventLoop(label: "test.poll-own", waiting: .thread)
        XCTAssertEqual(loop.waiting, .thread)
        let payload = Pattern.bytes(at: 0, count: 100_000)
        XCTAssertEqual(try echo(payload, on: loop), payload)
        // Its turns run on the loop's serial queue, so work executed from elsewhere never overlaps them.
        XCTAssertTrue(onLoop(loop) { loop.isOnLoop })
    }

    func testAReleasedLoopEndsItsThreadAndClosesItsDescriptors() throws {
        let label = "test.pollend"  // under 15 bytes: the thread's whole name
        // Dispatch opens its own descriptors with its first source: before the snapshot.
        let warm = EventLoop(label: "test.pollwarm", waiting: .dispatchSource)
        XCTAssertEqual(try echo([1, 2, 3], on: warm), [1, 2, 3])
        let descriptorsBefore = try openDescriptors()
        XCTAssertFalse(try threadNames().contains(label))
        do {
            let loop = EventLoop(label: label, waiting: .thread)
            XCTAssertEqual(try echo(Pattern.bytes(at: 0, count: 1000), on: loop), Pattern.bytes(at: 0, count: 1000))
            XCTAssertTrue(try threadNames().contains(label), "the loop's first connection started its thread")
        }
        XCTAssertTrue(try eventually { try !threadNames().contains(label) }, "the loop's thread ended with it")
        // Only the kinds the loop opened (its epoll, its thread's eventfd, its
        // sockets): the rest of the suite may open others meanwhile.
        let leftOpen = { try self.loopKinds(openDescriptors().subtracting(descriptorsBefore)) }
        _ = try eventually { try leftOpen().isEmpty }
        XCTAssertEqual(try leftOpen(), [], "descriptors left open")
    }

    func testALoopWaitingOnDispatchMakesNoThread() throws {
        let label = "test.polldisp"
        let loop = EventLoop(label: label, waiting: .dispatchSource)
        XCTAssertEqual(loop.waiting, .dispatchSource)
        XCTAssertEqual(try echo(Pattern.bytes(at: 7, count: 5000), on: loop), Pattern.bytes(at: 7, count: 5000))
        XCTAssertFalse(try threadNames().contains(label))
    }

    func testGroupLoopsWaitAsTheGroupSays() {
        let group = EventLoopGroup(loopCount: 2, label: "test.pollgrp", waiting: .thread)
        XCTAssertEqual(group.loops.map(\.waiting), [.thread, .thread])
        XCTAssertEqual(EventLoopGroup(loopCount: 1).loops[0].waiting, .thread, "loops wait on their own thread by default")
    }

    /// Work handed to `executeAtEndOfRound` in a socket's turn runs after that
    /// turn's executed work, once the round is over; outside a round it is
    /// queued like `executeAfterOthers`.
    private func checkEndOfRound(waiting: EventLoop.Waiting) throws {
        let loop = EventLoop(label: "test.round", waiting: waiting)
        let order = Locked<[String]>([])
        let done = expectation(description: "end of round ran")
        let listener = try Listener(bindingTo: .loopbackIPv4(port: 0), on: loop) { connection in
            connection.start { event in
                guard case .received = event else { return }
                loop.executeAtEndOfRound {
                    XCTAssertTrue(loop.isOnLoop)
                    order.withValue { $0.append("end of round") }
                    done.fulfill()
                }
                loop.execute { order.withValue { $0.append("executed") } }
                order.withValue { $0.append("turn") }
                connection.close()
            }
        }
        defer { listener.close() }
        let client = try connectAndWait(to: listener.localAddress, on: loop).get()
        loop.execute {
            client.start { _ in }
            client.write([1])
        }
        wait(for: [done], timeout: patience)
        XCTAssertEqual(order.current.prefix(3), ["turn", "executed", "end of round"])
        onLoop(loop) { client.close() }

        let outside = expectation(description: "outside a round")
        loop.executeAtEndOfRound { outside.fulfill() }
        wait(for: [outside], timeout: patience)
    }

    func testEndOfRoundWorkOnALoopWaitingOnDispatch() throws {
        try checkEndOfRound(waiting: .dispatchSource)
    }

    func testEndOfRoundWorkOnALoopWithItsOwnThread() throws {
        try checkEndOfRound(waiting: .thread)
    }

    func testWaitingIsSpelledAsTheCommandLineTakesIt() {
        XCTAssertEqual(EventLoop.Waiting.allCases.map(\.rawValue), ["dispatch", "thread"])
        XCTAssertEqual(EventLoop.Waiting(rawValue: "thread"), .thread)
    }
}
