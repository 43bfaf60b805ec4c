import XCTest
import Evidence

final class RecordingReaderTests: XCTestCase {
    private func write(_ lines: [String], terminated: Bool = true) throws -> String {
        let path = temporaryPath()
        let text = lines.joined(separator: "\n") + (terminated ? "\n" : "")
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }

    private func validLines(_ count: Int) throws -> [String] {
        let path = temporaryPath()
        let writer = try RecordingWriter(path: path, header: SampleRecords.header)
        for i in 0..<count { writer.append(SampleRecords.record(i)) }
        XCTAssertNil(writer.closeAndWait())
        return try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
    }

    func testTornLastLineIsSkippedWithAWarning() throws {
        var lines = try validLines(3)
        lines.append(String(lines[1].prefix(40)))
        let path = try write(lines, terminated: false)
        let recording = try RecordingReader.read(path: path)
        XCTAssertEqual(recording.records.map(\.exchangeID), ["ex-0", "ex-1", "ex-2"])
        XCTAssertEqual(recording.warnings.map(\.line), [5])
        XCTAssertEqual(recording.warnings.first?.path, path)
    }

    func testCompleteLastLineWithoutNewlineIsKept() throws {
        let path = try write(try validLines(2), terminated: false)
        let recording = try RecordingReader.read(path: path)
        XCTAssertEqual(recording.records.count, 2)
        XCTAssertEqual(recording.warnings, [])
    }

    func testNonJSONMiddleLineNamesFileAndLine() throws {
        var lines = try validLines(3)
        lines.insert("this is not json", at: 2)
        let path = try write(lines)
        XCTAssertThrowsError(try RecordingReader.read(path: path)) { error in
            guard case RecordingReadError.malformedLine(let file, let line, _, let reason)? = error as? RecordingReadError else {
                return XCTFail("expected malformedLine, got \(error)")
            }
            XCTAssertEqual(file, path)
            XCTAssertEqual(line, 3)
            XCTAssertEqual(reason, "not JSON")
            XCTAssertTrue("\(error)".hasPrefix("\(path):3:"))
        }
    }

    func testRecordMissingAKeyNamesTheKey() throws {
        var lines = try validLines(1)
        lines.append(#"{"type":"exchange","tap":"t","legs":[],"faults":[]}"#)
        lines.append(lines[1])
        XCTAssertThrowsError(try RecordingReader.read(path: try write(lines))) { error in
            XCTAssertEqual("\(error)".contains(":3: malformed record: missing \"exchangeID\""), true, "\(error)")
        }
    }

    func testUnknownFormatVersionIsAClearError() throws {
        var lines = try validLines(1)
        lines[0] = lines[0].replacingOccurrences(of: "\"format\":\(RecordingFormat.version)", with: "\"format\":99")
        XCTAssertNotEqual(lines[0], try validLines(0)[0], "the header must carry \"format\":\(RecordingFormat.version)")
        let path = try write(lines)
        XCTAssertThrowsError(try RecordingReader.read(path: path)) { error in
            XCTAssertEqual(error as? RecordingReadError, .unsupportedFormat(path: path, found: 99, supported: RecordingFormat.version))
            XCTAssertTrue("\(error)".contains("version 99 is not supported"))
        }
    }

    /// A version 1 recording (before `unreadable-request` and `origin`) is read as it is.
    func testAnOlderFormatVersionIsStillRead() throws {
        var lines = try validLines(1)
        lines[0] = lines[0].replacingOccurrences(of: "\"format\":\(RecordingFormat.version)", with: "\"format\":1")
        let recording = try RecordingReader.read(path: try write(lines))
        XCTAssertEqual(recording.header.format, 1)
        XCTAssertEqual(recording.records.count, 1)
    }

    func testFileWithoutHeaderIsRejected() throws {
        let lines = try validLines(2)
        let path = try write(Array(lines.dropFirst()))
        XCTAssertThrowsError(try RecordingReader.read(path: path)) { error in
            guard case RecordingReadError.missingHeader(path, _)? = error as? RecordingReadError else {
                return XCTFail("expected missingHeader, got \(error)")
            }
        }
        let garbage = try write(["<html>"])
        XCTAssertThrowsError(try RecordingReader.read(path: garbage)) { error in
            guard case RecordingReadError.missingHeader(garbage, "not JSON")? = error as? RecordingReadError else {
                return XCTFail("expected missingHeader, got \(error)")
            }
        }
    }

    func testEmptyAndMissingFiles() throws {
        let empty = try write([], terminated: false)
        XCTAssertThrowsError(try RecordingReader.read(path: empty)) { error in
            XCTAssertEqual(error as? RecordingReadError, .empty(path: empty))
        }
        XCTAssertThrowsError(try RecordingReader.read(path: "/nonexistent-intact.jsonl")) { error in
            guard case RecordingReadError.cannotRead("/nonexistent-intact.jsonl", _)? = error as? RecordingReadError else {
                return XCTFail("expected cannotRead, got \(error)")
            }
        }
    }

    func testSecondHeaderIsAnError() throws {
        var lines = try validLines(1)
        lines.append(lines[0])
        XCTAssertThrowsError(try RecordingReader.read(path: try write(lines))) { error in
            guard case RecordingReadError.malformedLine(_, 3, _, _)? = error as? RecordingReadError else {
                return XCTFail("expected malformedLine at 3, got \(error)")
            }
        }
    }

    /// The file is read in chunks; reading its bytes in memory must give the
    /// same records, warnings and verification report (text and JSON), torn
    /// last line included, and the same error naming a malformed line — with
    /// chunks smaller than a line (lines split across chunks) and larger.
    func testChunkedFileReadsAsTheBytesInMemory() throws {
        var lines = try validLines(40)
        lines.append(String(lines[7].prefix(60)))
        let path = try write(lines, terminated: false)
        let inMemory = try RecordingReader.read(Data(contentsOf: URL(fileURLWithPath: path)), path: path)
        for chunkSize in [7, 4096, 4 << 20] {
            let chunked = try RecordingReader.read(path: path, chunkSize: chunkSize)
            XCTAssertEqual(chunked.records.map(\.exchangeID), inMemory.records.map(\.exchangeID))
            XCTAssertEqual(chunked.warnings, inMemory.warnings)
            let (fromChunks, fromMemory) = (try Verifier().verify([chunked]), try Verifier().verify([inMemory]))
            XCTAssertEqual(try fromChunks.jsonBytes(), try fromMemory.jsonBytes())
            XCTAssertEqual(TextReport.render(fromChunks), TextReport.render(fromMemory))
        }
        let chunked = try RecordingReader.read(path: path, chunkSize: 7)
        XCTAssertEqual(chunked.records.count, 40)
        XCTAssertEqual(chunked.warnings.map(\.line), [42])
        XCTAssertEqual(try Verifier().verify([chunked]).exchanges.count, 40)

        lines.removeLast()
        lines.insert("{\"type\":\"exchange\"", at: 21)
        let broken = try write(lines)
        func failure(of read: () throws -> Recording) -> RecordingReadError? {
            do { _ = try read(); return nil } catch { return error as? RecordingReadError }
        }
        let chunkedError = failure { try RecordingReader.read(path: broken, chunkSize: 7) }
        let inMemoryError = failure { try RecordingReader.read(Data(contentsOf: URL(fileURLWithPath: broken)), path: broken) }
        guard case .malformedLine(broken, 22, _, _)? = chunkedError else {
            return XCTFail("expected malformedLine at 22, got \(String(describing: chunkedError))")
        }
        XCTAssertEqual(chunkedError, inMemoryError)
    }
}
