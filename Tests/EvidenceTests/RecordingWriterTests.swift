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
}
