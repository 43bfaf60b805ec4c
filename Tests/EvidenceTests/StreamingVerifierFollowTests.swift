import Foundation
import XCTest
@testable import Evidence
import HTTP

/// `StreamingVerifier` following recordings while taps write them: verdicts
/// come while the writing goes on, an exchange a tap never sees is judged
/// when the window passes, and a file that grows, is truncated or is
/// replaced is followed and said.
final class StreamingVerifierFollowTests: XCTestCase {
    /// Counts what the sink got, from the verifying thread, read by the writing one.
    final class Counting: VerificationSink, @unchecked Sendable {
        private let lock = NSLock()
        private var list: [VerifiedExchange] = []
        var exchanges: [VerifiedExchange] { lock.withLock { list } }
        func begin(policy: PolicySummary, recordings: Int, path: VerifiedPath) {}
        func judged(_ exchanges: [VerifiedExchange], path: VerifiedPath) { lock.withLock { list += exchanges } }
    }

    /// What the writing thread says, read by the test.
    final class Flags: @unchecked Sendable {
        private let lock = NSLock()
        private var isWriting = true
        private var early = false
        var writing: Bool {
            get { lock.withLock { isWriting } }
            set { lock.withLock { isWriting = newValue } }
        }
        var verdictWhileWriting: Bool {
            get { lock.withLock { early } }
            set { lock.withLock { early = newValue } }
        }
    }

    /// The record with every instant moved by `offset` milliseconds.
    private static func shifted(_ record: ExchangeRecord, by offset: Double) -> ExchangeRecord {
        func shift(_ message: RecordedMessage?) -> RecordedMessage? {
            guard var message else { return nil }
            for path in [\MessageTimings.start, \.headersDone, \.end] {
                message.timings[keyPath: path] = message.timings[keyPath: path].map {
                    Timestamp(millisecondsSince1970: $0.millisecondsSince1970 + offset)
                }
            }
            return message
        }
        var record = record
        for index in record.legs.indices {
            record.legs[index].request = shift(record.legs[index].request)
            record.legs[index].response = shift(record.legs[index].response)
        }
        return record
    }

    private static func line(_ header: RecordingHeader) throws -> Data {
        Data(try RecordingLine.encode(header, as: .header, with: RecordingLine.makeEncoder()))
    }

    private static func append(_ data: Data, to path: String) {
        let handle = FileHandle(forWritingAtPath: path)!
        handle.seekToEndOfFile()
        handle.write(data)
        handle.closeFile()
    }

    /// A file truncated in place (copytruncate rotation) is read again from its start, and said.
    func testATruncatedFileIsReadAgainFromItsStart() throws {
        let recording = VerificationScenario((0..<6).map { VerificationScenario.exchange("/t/\($0)", trace: "t-\($0)") })
            .recordings()[1]
        let path = makeTemporaryDirectory() + "/proxy.jsonl"
        _ = FileManager.default.createFile(atPath: path, contents: try Self.line(recording.header))
        for record in recording.records.prefix(4) { Self.append(Data(record.jsonLine()), to: path) }
        let stream = try RecordingStream(path: path)
        var read: [String] = []
        while let record = try stream.next() { read.append(record.exchangeID) }
        XCTAssertFalse(try stream.poll(), "nothing new")
        XCTAssertEqual(truncate(path, 0), 0)
        XCTAssertTrue(try stream.poll())
        for record in recording.records.suffix(2) { Self.append(Data(record.jsonLine()), to: path) }
        XCTAssertTrue(try stream.poll())
        while let record = try stream.next() { read.append(record.exchangeID) }
        XCTAssertEqual(read, recording.records.map(\.exchangeID))
        XCTAssertEqual(stream.warnings.map(\.description),
                       ["\(path):5: the recording was truncated to 0 bytes: reading it again from its start"])
        // A file that grows is read on, without a word.
        Self.append(Data(recording.records[0].jsonLine()), to: path)
        XCTAssertTrue(try stream.poll())
        XCTAssertEqual(try stream.next()?.exchangeID, recording.records[0].exchangeID)
        XCTAssertEqual(stream.warnings.count, 1)
    }

    func testVerdictsComeWhileTapsWriteAndRotationIsFollowed() throws {
        let count = 24
        var scenario = VerificationScenario((0..<count).map { VerificationScenario.exchange("/live/\($0)", trace: "l-\($0)") })
        // The server never sees the last exchange: judged when the window passes.
        // (No tap saw a response; the proxy sent the request on.)
        scenario.alter = { place, view in
            guard place.exchange == count - 1 else { return }
            view.response = nil
            if place.tap == "server" { view.request = nil }
        }
        let recordings = scenario.recordings()
        let directory = makeTemporaryDirectory()
        let paths = recordings.map { "\(directory)/\($0.header.tap).jsonl" }
        for (recording, path) in zip(recordings, paths) {
            _ = FileManager.default.createFile(atPath: path, contents: try Self.line(recording.header))
        }

        let sink = Counting()
        let flags = Flags()
        let writer = Thread {
            for index in 0..<count {
                if index == 9 {
                    // The server's file is rotated once what it held was judged: renamed away, a new one started.
                    let deadline = Date().addingTimeInterval(20)
                    while sink.exchanges.count < 9 && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
                    try? FileManager.default.moveItem(atPath: paths[2], toPath: paths[2] + ".1")
                    _ = FileManager.default.createFile(atPath: paths[2], contents: try? Self.line(recordings[2].header))
                }
                // Recorded now: the exchange's records moved to the time they are written.
                let offset = Date().timeIntervalSince1970 * 1000 - 1_700_000_000_000 - Double(index) * 1000
                for (recording, path) in zip(recordings, paths) {
                    guard let record = recording.records.first(where: { $0.exchangeID.hasSuffix("-\(index)") }) else { continue }
                    Self.append(Data(Self.shifted(record, by: offset).jsonLine()), to: path)
                }
                if !sink.exchanges.isEmpty { flags.verdictWhileWriting = true }
                Thread.sleep(forTimeInterval: 0.06)
            }
            flags.writing = false
        }
        writer.start()

        var options = StreamingVerifier.Options()
        options.follow = true
        options.windowSeconds = 5
        options.pollInterval = 0.05
        let deadline = Date().addingTimeInterval(60)
        let report = try StreamingVerifier(options: options).verify(paths: paths, sink: sink, shouldStop: {
            (!flags.writing && sink.exchanges.count >= count) || Date() > deadline
        })

        XCTAssertEqual(try String(contentsOfFile: paths[0], encoding: .utf8).split(separator: "\n").count, count + 1, "client file")
        XCTAssertTrue(flags.verdictWhileWriting, "verdicts came while the taps were still writing")
        XCTAssertEqual(sink.exchanges.count, count, report.warnings.joined(separator: "\n"))
        let last = try XCTUnwrap(sink.exchanges.first { $0.traceID == "l-\(count - 1)" })
        XCTAssertEqual(last.hops.map(\.verdict), [.identical, .identical, .missing], "missing at the server when the window passed")
        XCTAssertEqual(sink.exchanges.filter { !$0.passes }.map(\.traceID), ["l-\(count - 1)"],
                       sink.exchanges.filter { !$0.passes }.suffix(4).map { "\($0.number) \($0.records) \($0.hops.map(\.verdict))" }
                        .joined(separator: "\n"))
        XCTAssertTrue(report.warnings.contains { $0.hasPrefix(paths[2] + ":") && $0.contains("was replaced (rotated?)") },
                      report.warnings.joined(separator: "\n"))
        XCTAssertEqual(report.listing?.exchanges, count)
        XCTAssertFalse(report.policyHolds)
    }
}
