@testable import Transport
import XCTest

/// `RecordBufferPolicy` as a script of reads and idle checks, no socket.
final class RecordBufferPolicyTests: XCTestCase {
    func testOneReadNeverKeeps() {
        var policy = RecordBufferPolicy()
        XCTAssertFalse(policy.noteRead())
        XCTAssertFalse(policy.keeping, "a connection that carried one request and went idle holds no buffers")
    }

    func testTheSecondReadKeepsOnceAndLaterReadsAskNothing() {
        var policy = RecordBufferPolicy()
        XCTAssertFalse(policy.noteRead())
        XCTAssertTrue(policy.noteRead(), "the second read starts keeping: the driver arms a check")
        XCTAssertTrue(policy.keeping)
        XCTAssertFalse(policy.noteRead(), "already keeping: no second check armed")
        XCTAssertFalse(policy.noteRead())
    }

    func testAChannelThatReadSinceTheLastCheckKeepsAndIsCheckedAgain() {
        var policy = RecordBufferPolicy()
        _ = policy.noteRead()
        _ = policy.noteRead()
        _ = policy.noteRead()
        XCTAssertEqual(policy.idleCheck(), .checkAgain)
        XCTAssertTrue(policy.keeping)
        XCTAssertEqual(policy.idleCheck(), .release, "nothing read since the last check")
        XCTAssertFalse(policy.keeping)
    }

    func testReadsCountAfreshOnceReleased() {
        var policy = RecordBufferPolicy()
        _ = policy.noteRead()
        _ = policy.noteRead()
        XCTAssertEqual(policy.idleCheck(), .release, "the read that started keeping is not counted as later traffic")
        XCTAssertFalse(policy.noteRead(), "one read after the release does not keep again")
        XCTAssertTrue(policy.noteRead())
    }
}
