import Evidence
import Hashing
import HTTP
import XCTest
@testable import Proxy

/// A body forwarded unchanged has its digest finished once, on the leg it
/// came in on; the other leg takes it only when it is the very same body.
final class MessageRecorderBodyTests: XCTestCase {
    let first = Array("first chunk".utf8)
    let second = Array("second".utf8)
    let time = Timestamp(millisecondsSince1970: 1_700_000_000_000)

    private func message() -> MessageRecorder { MessageRecorder(bodyStoreLimit: 64, digests: .sha256) }

    /// The digest and stored copy of `chunks` recorded on one leg alone.
    private func alone(_ chunks: [[UInt8]], trailers: HTTPFields? = nil) -> (digest: BodyDigest, stored: StoredBody?) {
        var recorder = message()
        for chunk in chunks { recorder.recordBody(chunk) }
        recorder.recordEnd(trailers: trailers, at: time)
        return finished(&recorder)
    }

    /// Finishes `recorder`'s body (once) and returns it.
    private func finished(_ recorder: inout MessageRecorder) -> (digest: BodyDigest, stored: StoredBody?) {
        recorder.finishBody()
        return recorder.finished!
    }

    /// `source` records `sourceChunks`; the follower forwards `forwarded` of them (adopting each).
    private func forward(_ sourceChunks: [[UInt8]], _ forwarded: Int, sourceTrailers: HTTPFields? = nil,
                         followerTrailers: HTTPFields? = nil) -> (source: MessageRecorder, follower: MessageRecorder) {
        var source = message()
        var follower = message()
        for (index, chunk) in sourceChunks.enumerated() {
            source.recordBody(chunk)
            if index < forwarded { follower.recordBody(chunk, following: source.bodyEndingWith(chunk)) }
        }
        source.recordEnd(trailers: sourceTrailers, at: time)
        follower.recordEnd(trailers: followerTrailers, at: time)
        source.finishBody()
        follower.adoptFinishedBody(of: source)
        return (source, follower)
    }

    func testABodyForwardedWholeEndsWithTheSameDigestAsOnItsOwn() {
        var (_, follower) = forward([first, second], 2)
        let expected = alone([first, second])
        let finished = finished(&follower)
        XCTAssertEqual(finished.digest, expected.digest)
        XCTAssertEqual(finished.stored, expected.stored)
    }

    func testABodyCutShortIsDigestedOnItsOwn() {
        var (source, follower) = forward([first, second], 1)
        XCTAssertEqual(finished(&follower).digest, alone([first]).digest)
        var sourceCopy = source
        XCTAssertNotEqual(finished(&follower).digest, finished(&sourceCopy).digest)
    }

    func testOtherTrailersAreDigestedOnTheirOwn() {
        let trailers: HTTPFields = ["x-checksum": "1"]
        var (_, follower) = forward([first], 1, sourceTrailers: nil, followerTrailers: trailers)
        XCTAssertEqual(finished(&follower).digest, alone([first], trailers: trailers).digest)
        XCTAssertNotEqual(finished(&follower).digest, alone([first]).digest)
    }

    func testABodyOfItsOwnIsNotTakenFromTheOtherLeg() {
        var source = message()
        var follower = message()
        let changed = Array("first chunk".uppercased().utf8)  // the same length, other bytes
        source.recordBody(first)
        follower.recordBody(changed)
        source.recordEnd(trailers: nil, at: time)
        follower.recordEnd(trailers: nil, at: time)
        source.finishBody()
        follower.adoptFinishedBody(of: source)
        XCTAssertEqual(finished(&follower).digest, alone([changed]).digest)
    }

    func testTheRecordTakesTheFinishedBody() throws {
        let head = HTTPResponseHead(status: 200, fields: ["content-length": "17"])
        let wire = HeadDigest.WireForm.http1(head: Array("HTTP/1.1 200 OK\r\ncontent-length: 17\r\n\r\n".utf8))
        var source = message()
        var follower = message()
        source.recordResponse(head, wire: wire, at: time)
        follower.recordResponse(head, wire: wire, at: time)
        for chunk in [first, second] {
            source.recordBody(chunk)
            follower.recordBody(chunk, following: source.bodyEndingWith(chunk))
        }
        source.recordEnd(trailers: nil, at: time)
        follower.recordEnd(trailers: nil, at: time)
        source.finishBody()
        follower.adoptFinishedBody(of: source)
        let expected = alone([first, second])
        let policy = RedactionPolicy()
        for var recorder in [source, follower] {
            let recorded = try XCTUnwrap(recorder.finish(redaction: policy, at: time))
            XCTAssertEqual(recorded.digest.body, expected.digest)
            XCTAssertEqual(recorded.body, expected.stored)
            XCTAssertNil(recorder.finished, "taken by the record")
        }
        // Never finished before: `finish` finishes it.
        var plain = message()
        plain.recordResponse(head, wire: wire, at: time)
        plain.recordBody(first)
        plain.recordBody(second)
        XCTAssertEqual(try XCTUnwrap(plain.finish(redaction: policy, at: time)).digest.body, expected.digest)
    }

    func testEmptyBodiesOnBothLegsAgree() {
        var (_, follower) = forward([], 0)
        XCTAssertEqual(finished(&follower).digest, alone([]).digest)
    }
}
