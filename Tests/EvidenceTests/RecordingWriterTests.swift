import Glibc
import Synchronization
import XCTest
import Evidence
import HTTP

final class RecordingWriterTests: XCTestCase {
    func testRoundTripKeepsEveryRecordInOrder() throws {
        let path = temporaryPath()
        let writer = try RecordingWriter(path: path, header: SampleRecords.header)
        let records = (0..<20).map { SampleRecords.record($0) }
        records.forEach(writer.append)
        XCTAssertNil(writer.closeAndWait())

        let recording = try RecordingReader.read(path: path)
        XCTAssertEqual(recording.header, SampleRecords.header)
        XCTAssertEqual(recording.records, records)
        XCTAssertEqual(recording.warnings, [])
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.count, 21)
        XCTAssertTrue(lines[0].contains("\"type\":\"header\""))
        XCTAssertTrue(lines[1].contains("\"type\":\"exchange\""))
    }

    func testFileIsPrivate() throws {
        let path = temporaryPath()
        let writer = try RecordingWriter(path: path, header: SampleRecords.header)
        XCTAssertNil(writer.closeAndWait())
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600)
    }

    func testAppendsFromManyThreadsAreAllWrittenWhole() throws {
        let path = temporaryPath()
        let writer = try RecordingWriter(path: path, header: SampleRecords.header)
        DispatchQueue.concurrentPerform(iterations: 200) { writer.append(SampleRecords.record($0)) }
        let flushed = expectation(description: "flushed")
        writer.flush { error in
            XCTAssertNil(error)
            flushed.fulfill()
        }
        wait(for: [flushed], timeout: 30)
        XCTAssertNil(writer.closeAndWait())
        let recording = try RecordingReader.read(path: path)
        XCTAssertEqual(Set(recording.records.map(\.exchangeID)), Set((0..<200).map { "ex-\($0)" }))
    }

    func testCloseCompletionRunsAfterEarlierAppends() throws {
        let path = temporaryPath()
        let writer = try RecordingWriter(path: path, header: SampleRecords.header)
        writer.append(SampleRecords.record(1))
        let closed = expectation(description: "closed")
        writer.close { error in
            XCTAssertNil(error)
            closed.fulfill()
        }
        wait(for: [closed], timeout: 30)
        XCTAssertEqual(try RecordingReader.read(path: path).records.map(\.exchangeID), ["ex-1"])
        XCTAssertEqual(writer.closeAndWait()?.kind, .closed)
    }

    /// A flush or close asked for while the writer is still answering the
    /// previous one (here: from its completion) is answered too, and a
    /// record appended between them is written before the close.
    func testAFlushOrCloseAskedDuringAnotherIsAnswered() throws {
        let path = temporaryPath()
        let writer = try RecordingWriter(path: path, header: SampleRecords.header)
        writer.append(SampleRecords.record(1))
        let flushedTwice = expectation(description: "flushed twice")
        let closedTwice = expectation(description: "closed twice")
        writer.flush { error in
            XCTAssertNil(error)
            writer.append(SampleRecords.record(2))
            writer.flush { error in
                XCTAssertNil(error)
                flushedTwice.fulfill()
                writer.close { error in
                    XCTAssertNil(error)
                    writer.close { error in
                        XCTAssertEqual(error?.kind, .closed)
                        closedTwice.fulfill()
                    }
                }
            }
        }
        wait(for: [flushedTwice, closedTwice], timeout: 30)
        XCTAssertEqual(try RecordingReader.read(path: path).records.map(\.exchangeID), ["ex-1", "ex-2"])
    }

    /// What `kill -9` mid-write leaves: N whole lines and part of the next.
    func testKillSafetyTornTailIsSkipped() throws {
        let path = temporaryPath()
        let writer = try RecordingWriter(path: path, header: SampleRecords.header)
        for i in 0..<7 { writer.append(SampleRecords.record(i)) }
        XCTAssertNil(writer.closeAndWait())
        let line = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")[1]
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data(line.utf8.prefix(line.utf8.count / 2)))
        try handle.close()

        let recording = try RecordingReader.read(path: path)
        XCTAssertEqual(recording.records.count, 7)
        XCTAssertEqual(recording.warnings.count, 1)
        XCTAssertEqual(recording.warnings.first?.line, 9)
        XCTAssertTrue(recording.warnings.first?.description.contains("torn last line") ?? false)
    }

    func testExistingFileIsNotOverwrittenUnlessAsked() throws {
        let path = temporaryPath()
        let first = try RecordingWriter(path: path, header: SampleRecords.header)
        first.append(SampleRecords.record(1))
        XCTAssertNil(first.closeAndWait())
        XCTAssertThrowsError(try RecordingWriter(path: path, header: SampleRecords.header)) { error in
            XCTAssertEqual((error as? RecordingWriteError)?.kind, .alreadyExists)
            XCTAssertTrue("\(error)".contains(path))
        }
        let second = try RecordingWriter(path: path, header: SampleRecords.header, replacing: true)
        XCTAssertNil(second.closeAndWait())
        XCTAssertEqual(try RecordingReader.read(path: path).records.count, 0)
    }

    func testUnopenablePathIsAPreciseError() {
        XCTAssertThrowsError(try RecordingWriter(path: "/nonexistent-dir-intact/x.jsonl", header: SampleRecords.header)) { error in
            XCTAssertEqual((error as? RecordingWriteError)?.kind, .cannotOpen)
            XCTAssertTrue("\(error)".contains("/nonexistent-dir-intact/x.jsonl"))
        }
    }

    /// /dev/full accepts the open and fails every write with ENOSPC.
    func testFailedHeaderWriteIsAPreciseError() throws {
        try XCTSkipUnless(FileManager.default.fileExists(atPath: "/dev/full"))
        XCTAssertThrowsError(try RecordingWriter(path: "/dev/full", header: SampleRecords.header, replacing: true)) { error in
            XCTAssertEqual((error as? RecordingWriteError)?.kind, .writeFailed)
        }
    }

    func testDirectoryPathIsAClearErrorAtStart() throws {
        let directory = (temporaryPath() as NSString).deletingLastPathComponent
        for replacing in [true, false] {
            XCTAssertThrowsError(try RecordingWriter(path: directory, header: SampleRecords.header, replacing: replacing)) { error in
                XCTAssertEqual((error as? RecordingWriteError)?.kind, .cannotOpen)
                XCTAssertTrue("\(error)".contains("names a directory"), "\(error)")
            }
        }
    }

    /// `offer` never waits and says when the queue is full; `whenRoom` calls
    /// back once the writer has made room.
    func testFullQueueAsksToPauseAndCallsBackWhenDrained() throws {
        let path = temporaryPath()
        let writer = try RecordingWriter(path: path, header: SampleRecords.header, queueLimit: 1)
        XCTAssertTrue(writer.hasRoom)
        var batch = RecordingBatch()
        batch.add(SampleRecords.record(1))
        XCTAssertFalse(writer.offer(&batch), "one line is over a 1-byte bound")
        let room = expectation(description: "room")
        writer.whenRoom { room.fulfill() }
        wait(for: [room], timeout: 30)
        XCTAssertTrue(writer.hasRoom)
        // `append` waits for room each time, and every record still arrives.
        for i in 2...30 { writer.append(SampleRecords.record(i)) }
        XCTAssertNil(writer.closeAndWait())
        XCTAssertEqual(try RecordingReader.read(path: path).records.map(\.exchangeID), (1...30).map { "ex-\($0)" })
    }

    /// A producer's batch is queued whole, in order, after what was queued
    /// before it, and comes back empty, ready for the next lines; a batch
    /// that held a big record gives its buffer back and still works.
    func testABatchIsQueuedWholeInOrderAndEmptied() throws {
        let path = temporaryPath()
        let writer = try RecordingWriter(path: path, header: SampleRecords.header)
        writer.append(SampleRecords.record(0))
        var batch = RecordingBatch()
        XCTAssertTrue(batch.isEmpty)
        XCTAssertTrue(writer.offer(&batch), "an empty batch queues nothing")
        for i in 1...3 { batch.add(SampleRecords.record(i)) }
        XCTAssertEqual(batch.records, 3)
        XCTAssertEqual(batch.byteCount, (1...3).map { SampleRecords.record($0).jsonLine().count }.reduce(0, +))
        XCTAssertTrue(writer.offer(&batch))
        XCTAssertTrue(batch.isEmpty)
        XCTAssertEqual(batch.byteCount, 0)
        var big = SampleRecords.record(4)
        big.exchangeID = String(repeating: "b", count: 300 * 1024)
        batch.add(big)
        batch.add(SampleRecords.record(5))
        writer.offer(&batch)
        batch.add(SampleRecords.record(6))
        XCTAssertEqual(batch.byteCount, SampleRecords.record(6).jsonLine().count)
        writer.offer(&batch)
        XCTAssertNil(writer.closeAndWait())
        let ids = try RecordingReader.read(path: path).records.map(\.exchangeID)
        XCTAssertEqual(ids, ["ex-0", "ex-1", "ex-2", "ex-3", big.exchangeID, "ex-5", "ex-6"])
    }

    /// A batch offered after recording stopped counts every one of its
    /// records as lost.
    func testABatchAfterAStopCountsEachRecordLost() throws {
        let path = temporaryPath()
        let writer = try RecordingWriter(path: path, header: SampleRecords.header) { _ in }
        var saved = rlimit()
        getrlimit(Int32(RLIMIT_FSIZE.rawValue), &saved)
        var small = saved
        small.rlim_cur = rlim_t(try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int))
        XCTAssertEqual(setrlimit(Int32(RLIMIT_FSIZE.rawValue), &small), 0)
        writer.append(SampleRecords.record(0))
        let flushed = expectation(description: "flushed")
        writer.flush { error in
            XCTAssertEqual(error?.kind, .writeFailed)
            flushed.fulfill()
        }
        wait(for: [flushed], timeout: 30)
        setrlimit(Int32(RLIMIT_FSIZE.rawValue), &saved)
        var batch = RecordingBatch()
        for i in 1...4 { batch.add(SampleRecords.record(i)) }
        writer.offer(&batch)
        XCTAssertTrue(batch.isEmpty)
        XCTAssertEqual(writer.closeAndWait()?.lostRecords, 5)
    }

    /// Disk full (here a file-size limit, as `ulimit -f` sets): recording
    /// stops once, says how many records were lost, and the file still ends
    /// in a whole line with every record before the failure readable.
    func testDiskFullStopsOnceAndLeavesWholeLines() throws {
        let path = temporaryPath()
        let stops = Mutex<[RecordingWriteError]>([])
        let writer = try RecordingWriter(path: path, header: SampleRecords.header, queueLimit: 1) { error in
            stops.withLock { $0.append(error) }
        }
        let headerLength = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        let lineLength = SampleRecords.record(0).jsonLine().count
        var saved = rlimit()
        getrlimit(Int32(RLIMIT_FSIZE.rawValue), &saved)
        var small = saved
        small.rlim_cur = rlim_t(headerLength + lineLength * 5 / 2)
        XCTAssertEqual(setrlimit(Int32(RLIMIT_FSIZE.rawValue), &small), 0)
        for i in 0..<10 { writer.append(SampleRecords.record(i)) }
        let error = writer.closeAndWait()
        setrlimit(Int32(RLIMIT_FSIZE.rawValue), &saved)

        XCTAssertEqual(error?.kind, .writeFailed)
        XCTAssertTrue(error?.reason.contains("File too large") ?? false, "\(String(describing: error))")
        let reported = stops.withLock { $0 }
        XCTAssertEqual(reported.count, 1, "said once")
        let recording = try RecordingReader.read(path: path)
        XCTAssertEqual(recording.warnings, [], "no torn line left behind")
        XCTAssertEqual(recording.records.map(\.exchangeID), ["ex-0", "ex-1"])
        XCTAssertEqual(error?.lostRecords, 8)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)).last, UInt8(ascii: "\n"))
        XCTAssertEqual(reported.first?.lostRecords ?? 0 >= 1, true)
    }
}
