import Glibc
import XCTest
@testable import Evidence

/// The ranges a growing recording gives back to the page cache: one advice
/// per window grown, each from where the last one's dropped part ended, so
/// every byte is advised, the pages dropped lag one window behind, and a
/// byte is advised at most twice (once to start its writeback, once to drop it).
final class PageCacheReleaseTests: XCTestCase {
    func testAdvisesOncePerWindowAndDropsOneWindowBehind() {
        var release = PageCacheRelease(window: 100)
        XCTAssertNil(release.advance(to: 0))
        XCTAssertNil(release.advance(to: 99), "less than a window written")
        XCTAssertEqual(release.advance(to: 130), 0..<130)
        XCTAssertEqual(release.released, 0, "the first window's writeback has only been started")
        XCTAssertNil(release.advance(to: 229))
        XCTAssertEqual(release.advance(to: 230), 0..<230, "again from 0: the first advice's part is clean now")
        XCTAssertEqual(release.released, 130)
        XCTAssertEqual(release.advance(to: 1000), 130..<1000)
        XCTAssertEqual(release.released, 230)
        XCTAssertEqual(release.writebackStarted, 1000)
    }

    /// A recording over several windows is still every line whole, in order:
    /// giving pages back never touches the data.
    func testARecordingOverSeveralWindowsReadsBackWhole() throws {
        let path = NSTemporaryDirectory() + "intact-pagecache-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).jsonl"
        defer { unlink(path) }
        let writer = try RecordingWriter(path: path, header: SampleRecords.header)
        let lineLength = SampleRecords.record(0).jsonLine().count
        let count = Int(RecordingWriter.pageCacheWindow) * 5 / 2 / lineLength + 1
        var batch = RecordingBatch()
        for index in 0..<count {
            batch.add(SampleRecords.record(index))
            if batch.byteCount >= 256 * 1024 { writer.offer(&batch) }
        }
        writer.offer(&batch)
        XCTAssertNil(writer.closeAndWait())
        let recording = try RecordingReader.read(path: path)
        XCTAssertEqual(recording.warnings, [])
        XCTAssertEqual(recording.records.count, count)
        XCTAssertEqual(recording.records.last?.exchangeID, "ex-\(count - 1)")
    }
}
