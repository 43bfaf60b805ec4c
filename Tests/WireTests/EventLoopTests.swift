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

    /// An object handed over as `LoopWork` runs in the same line as
    /// closures executed around it (during a turn and from elsewhere), never
    /// inline, and the loop holds it until it ran.
    func testLoopWorkRunsInTurnWithExecutedClosures() {
        final class Step: LoopWork, @unchecked Sendable {
            let name: String
            let order: Locked<[String]>
            let loop: EventLoop
            init(_ name: String, _ order: Locked<[String]>, _ loop: EventLoop) {
                (self.name, self.order, self.loop) = (name, order, loop)
            }
            func runOnLoop() {
                XCTAssertTrue(loop.isOnLoop)
                order.withValue { $0.append(name) }
            }
        }
        let loop = EventLoop(label: "test.loopwork")
        let order = Locked<[String]>([])
        let done = expectation(description: "work ran")
        loop.execute(Step("from elsewhere", order, loop))
        loop.execute {
            loop.execute { order.withValue { $0.append("closure before") } }
            // Nothing else holds this step: the loop keeps it until it runs.
            loop.execute(Step("object", order, loop))
            loop.execute {
                order.withValue { $0.append("closure after") }
                done.fulfill()
            }
            order.withValue { $0.append("turn") }
        }
        wait(for: [done], timeout: patience)
        XCTAssertEqual(order.current, ["from elsewhere", "turn", "closure before", "object", "closure after"])
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

    /// `isOnLoop` answers a turn's own thread from the thread it recorded:
    /// another thread asking while that turn runs (and the loop's thread
    /// after it) must still be told the truth.
    func testIsOnLoopIsFalseForOtherThreadsWhileATurnRuns() {
        let loop = EventLoop(label: "test.turn-thread")
        let inTurn = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let done = expectation(description: "turn ended")
        let answers = Locked<[Bool]>([])
        loop.execute {
            answers.withValue { $0.append(loop.isOnLoop) }
            inTurn.signal()
            release.wait()
            answers.withValue { $0.append(loop.isOnLoop) }
            done.fulfill()
        }
        inTurn.wait()
        XCTAssertFalse(loop.isOnLoop, "asked from the test's thread while the loop runs a turn")
        let elsewhere = DispatchSemaphore(value: 0)
        let otherAnswer = Locked<Bool?>(nil)
        Thread.detachNewThread {
            otherAnswer.withValue { $0 = loop.isOnLoop }
            elsewhere.signal()
        }
        elsewhere.wait()
        XCTAssertEqual(otherAnswer.current, false)
        release.signal()
        wait(for: [done], timeout: patience)
        XCTAssertEqual(answers.current, [true, true])
        XCTAssertFalse(loop.isOnLoop)
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

    func testDurationDeadlineClampsAndConverts() {
        XCTAssertEqual(Duration.milliseconds(1500).deadline(after: 7), 1_500_000_007)
        XCTAssertEqual(Duration.nanoseconds(1).deadline(after: 0), 1)
        XCTAssertEqual(Duration.seconds(-3).deadline(after: 42), 42)
        XCTAssertEqual(Duration.milliseconds(-1).deadline(after: 42), 42)
        XCTAssertEqual(Duration.seconds(Int64.max).deadline(after: 1), .max)
        XCTAssertEqual(Duration.seconds(1).deadline(after: .max - 10), .max)
    }

    /// The loop's one source is re-armed for a timer sooner than the one it waits for.
    func testSoonerTimerFiresBeforeTheOneArmedFirst() {
        let loop = EventLoop(label: "test.sooner-timer")
        let fired = Locked<[String]>([])
        let done = expectation(description: "both fired")
        done.expectedFulfillmentCount = 2
        let started = ContinuousClock.now
        let soonerAfter = Locked<Duration?>(nil)
        loop.execute {
            loop.schedule(after: .milliseconds(400)) { fired.withValue { $0.append("later") }; done.fulfill() }
            loop.schedule(after: .milliseconds(5)) {
                soonerAfter.withValue { $0 = ContinuousClock.now - started }
                fired.withValue { $0.append("sooner") }
                done.fulfill()
            }
        }
        wait(for: [done], timeout: patience)
        XCTAssertEqual(fired.current, ["sooner", "later"])
        XCTAssertLessThan(soonerAfter.current!, .milliseconds(300), "the sooner timer waited for the later one")
    }

    /// Timers made and cancelled off the loop: the cancelled one never runs,
    /// the other fires on the loop, and the loop keeps neither afterwards.
    func testTimersScheduledAndCancelledFromAnotherThread() {
        let loop = EventLoop(label: "test.offloop-timers")
        let fired = Locked<[String]>([])
        let done = expectation(description: "kept timer fired")
        let cancelled = loop.schedule(after: .milliseconds(5)) { fired.withValue { $0.append("cancelled") } }
        cancelled.cancel()
        cancelled.cancel()
        let armedThenCancelled = loop.schedule(after: .milliseconds(30)) { fired.withValue { $0.append("late cancel") } }
        loop.schedule(after: .milliseconds(10)) {
            XCTAssertTrue(loop.isOnLoop)
            fired.withValue { $0.append("kept") }
        }
        usleep(5_000)
        armedThenCancelled.cancel()
        loop.schedule(after: .milliseconds(60)) { done.fulfill() }
        wait(for: [done], timeout: patience)
        XCTAssertEqual(fired.current, ["kept"])
        let left = expectation(description: "counted")
        loop.execute {
            XCTAssertEqual(loop.pendingTimerCount, 0)
            left.fulfill()
        }
        wait(for: [left], timeout: patience)
    }

    /// A timer cancelled on the loop leaves the heap at once, with its work
    /// and what the work captured.
    func testTimerCancelledOnTheLoopReleasesItsWork() {
        let loop = EventLoop(label: "test.cancel-releases")
        let done = expectation(description: "checked")
        final class Captured: Sendable {}
        loop.execute {
            weak var captured: Captured?
            let timer: LoopTimer = {
                let object = Captured()
                captured = object
                return loop.schedule(after: .seconds(60)) { _ = object }
            }()
            XCTAssertNotNil(captured)
            XCTAssertEqual(loop.pendingTimerCount, 1)
            timer.cancel()
            XCTAssertEqual(loop.pendingTimerCount, 0)
            XCTAssertNil(captured, "the cancelled timer kept its work")
            done.fulfill()
        }
        wait(for: [done], timeout: patience)
    }
}
