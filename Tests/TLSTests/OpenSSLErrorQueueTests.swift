import COpenSSL
@testable import TLS
import XCTest

/// The thread's OpenSSL error queue around each call: empty before it,
/// and what a failed call left handed back and taken off.
final class OpenSSLErrorQueueTests: XCTestCase {
    /// A call that leaves one entry on the queue: reading a certificate out of bytes that hold none.
    private func failingRead() -> Bool {
        let garbage = Array("not a certificate".utf8)
        return garbage.withUnsafeBytes { bytes in
            let bio = BIO_new_mem_buf(bytes.baseAddress, Int32(bytes.count))
            defer { BIO_free(bio) }
            return PEM_read_bio_X509(bio, nil, nil, nil) != nil
        }
    }

    override func setUp() {
        ERR_clear_error()
    }

    func testRunEmptiesTheQueueBeforeAndTakesWhatTheCallLeft() {
        XCTAssertFalse(failingRead())
        XCTAssertNotEqual(ERR_peek_error(), 0, "the failed read left an entry")
        let step = OpenSSLErrorQueue.run { () -> UInt in ERR_peek_error() }
        XCTAssertEqual(step.result, 0, "the entry left before was cleared before the call")
        let failed = OpenSSLErrorQueue.run { failingRead() }
        XCTAssertFalse(failed.result)
        XCTAssertFalse(failed.errors.isEmpty)
        XCTAssertEqual(failed.errors.first?.library, ERR_LIB_PEM)
        XCTAssertEqual(ERR_peek_error(), 0, "drained after the call")
    }

    /// A data-path call drains only when its result says it failed; what a
    /// call said to have succeeded left stays until the next call's check.
    func testTheDataPathDrainsOnlyAfterAFailure() {
        let failed = OpenSSLErrorQueue.run({ failingRead() }, drainingAfter: { !$0 })
        XCTAssertFalse(failed.errors.isEmpty)
        XCTAssertEqual(ERR_peek_error(), 0)

        let quiet = OpenSSLErrorQueue.run({ failingRead() }, drainingAfter: { _ in false })
        XCTAssertTrue(quiet.errors.isEmpty)
        XCTAssertNotEqual(ERR_peek_error(), 0, "left for the next call's check")
        let next = OpenSSLErrorQueue.run({ () -> UInt in ERR_peek_error() }, drainingAfter: { _ in false })
        XCTAssertEqual(next.result, 0, "cleared before the next call")
    }
}
