import Glibc
import Dispatch
import XCTest
@testable import Wire

final class EventLoopTests: XCTestCase {
    /// Every socket write happens on a loop, so making one must leave SIGPIPE
    /// ignored: a write to a peer that hung up is then EPIPE, not death.
    func testMakingALoopIgnoresSIGPIPE() {
        signal(SIGPIPE, SIG_DFL)
        _ = EventLoop(label: "test.sigpipe")
        var current = sigaction()
        XCTAssertEqual(sigaction(SIGPIPE, nil, &current), 0)
        XCTAssertEqual(unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self),
                       unsafeBitCast(SIG_IGN, to: Int.self))
    }

    func testExecuteRunsLaterOnTheLoopAndNeverInline() {
        let loop = EventLoop(label: "test.execute")
        XCTAssertFalse(loop.isOnLoop)
        let order = Locked<[String]>([])
        let done = expectation(description: "work ran")
        loop.execute {
            XCTAssertTrue(loop.isOnLoop)
            loop.execute {
                order.withValue { $0.append("inner") }
                done.fulfill()
            }
            order.withValue { $0.append("outer") }
        }
        wait(for: [done], timeout: patience)
        XCTAssertEqual(order.current, ["outer", "inner"])
    }

    /// Work executed on the loop during a turn runs when that turn ends,
    /// before work another thread queued meanwhile: a request's "later"
    /// hops stay in the Dispatch item that began it.
    func testWorkExecutedDuringATurnRunsBeforeWorkQueuedFromElsewhere() {
        let loop = EventLoop(label: "test.deferred")
        let order = Locked<[String]>([])
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let done = expectation(description: "queued work ran")
        loop.execute {
            started.signal()
            release.wait()  // the test thread queues its work meanwhile
            loop.execute {
                order.withValue { $0.append("first hop") }
                loop.execute { order.withValue { $0.append("second hop") } }
            }
            order.withValue { $0.append("turn") }
        }
        started.wait()
        loop.execute {
            order.withValue { $0.append("queued from elsewhere") }
            done.fulfill()
        }
        release.signal()
        wait(for: [done], timeout: patience)
        XCTAssertEqual(order.current, ["turn", "first hop", "second hop", "queued from elsewhere"])
    }

    /// A chain of work that keeps executing more yields to queued work after
    /// `deferredWorkPerDrain` pieces, then goes on to its end.
    func testEndlessChainOfExecutedWorkDoesNotStarveQueuedWork() {
        let loop = EventLoop(label: "test.chain")
        let links = EventLoop.deferredWorkPerDrain * 2
        let order = Locked<[String]>([])
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let done = expectation(description: "chain ended")
        @Sendable func link(_ number: Int) {
            order.withValue { $0.append("link \(number)") }
            if number == links {
                done.fulfill()
            } else {
                loop.execute { link(number + 1) }
            }
        }
        loop.execute {
            started.signal()
            release.wait()
            loop.execute { link(1) }
        }
        started.wait()
        loop.execute { order.withValue { $0.append("queued from elsewhere") } }
        release.signal()
        wait(for: [done], timeout: patience)
        let seen = order.current
        XCTAssertEqual(seen.count, links + 1)
        XCTAssertEqual(seen.firstIndex(of: "queued from elsewhere"), EventLoop.deferredWorkPerDrain)
        XCTAssertEqual(seen.filter { $0 != "queued from elsewhere" }, (1...links).map { "link \($0)" })
    }

    func testIsOnLoopDistinguishesLoops() {
        let first = EventLoop(label: "test.first")
        let second = EventLoop(label: "test.second")
        let seen = onLoop(first) { (first.isOnLoop, second.isOnLoop) }
        XCTAssertTrue(seen.0)
        XCTAssertFalse(seen.1)
    }

    func testGroupHandsOutLoopsRoundRobin() {
        let group = EventLoopGroup(loopCount: 3, label: "test.group")
        XCTAssertEqual(group.loops.count, 3)
        let picked = (0..<7).map { _ in ObjectIdentifier(group.next()) }
        let expected = [0, 1, 2, 0, 1, 2, 0].map { ObjectIdentifier(group.loops[$0]) }
        XCTAssertEqual(picked, expected)
        XCTAssertEqual(Set(group.loops.map { $0.label }), ["test.group-0", "test.group-1", "test.group-2"])
        XCTAssertGreaterThanOrEqual(EventLoopGroup.defaultLoopCount, 1)
    }

    func testTimersFireOnTheLoopAndCancelledOnesNever() {
        let loop = EventLoop(label: "test.timers")
        let fired = Locked<[String]>([])
        let done = expectation(description: "last timer fired")
        loop.execute {
            let cancelled = loop.schedule(after: .milliseconds(5)) { fired.withValue { $0.append("cancelled") } }
            cancelled.cancel()
            loop.schedule(after: .milliseconds(10)) {
                XCTAssertTrue(loop.isOnLoop)
                fired.withValue { $0.append("kept") }
            }
            let cancelledByAnother = loop.schedule(after: .milliseconds(80)) {
                fired.withValue { $0.append("cancelled by another timer") }
            }
            loop.schedule(after: .milliseconds(20)) { cancelledByAnother.cancel() }
            loop.schedule(after: .milliseconds(150)) {
                fired.withValue { $0.append("last") }
                done.fulfill()
            }
        }
        wait(for: [done], timeout: patience)
        XCTAssertEqual(fired.current, ["kept", "last"])
    }

    func testDroppedTimerStillFires() {
        let loop = EventLoop(label: "test.dropped-timer")
        let done = expectation(description: "fired")
        _ = loop.schedule(after: .milliseconds(1)) { done.fulfill() }
        wait(for: [done], timeout: patience)
    }

    func testDurationConversionClampsAndConverts() {
        XCTAssertEqual(Duration.milliseconds(1500).dispatchInterval, .nanoseconds(1_500_000_000))
        XCTAssertEqual(Duration.seconds(-3).dispatchInterval, .nanoseconds(0))
        XCTAssertEqual(Duration.seconds(Int64.max).dispatchInterval, .never)
    }
}
