import Foundation
import XCTest
@testable import Evidence
import HTTP

/// The fast line decoder (`ExchangeRecordLineDecoder`) against the general
/// one (`JSONDecoder`): on every record shape the writer makes it decodes
/// the same value, and on edited and fuzzed lines it either decodes what
/// `JSONDecoder` decodes or defers (nil), never a different value.
final class ExchangeRecordLineDecoderTests: XCTestCase {
    private let general: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return decoder
    }()

    private func fast(_ line: [UInt8]) -> ExchangeRecord? {
        line.withUnsafeBytes { ExchangeRecordLineDecoder.decode($0) }
    }

    private func slow(_ line: [UInt8]) -> ExchangeRecord? {
        guard case .exchange(let record)? = try? general.decode(RecordingLine.self, from: Data(line)) else { return nil }
        return record
    }

    /// The line of a record as the writer writes it, without its newline.
    private func line(_ record: ExchangeRecord) -> [UInt8] {
        Array(record.jsonLine().dropLast())
    }

    /// Every shape, including records of a proxy's two legs that repeat values.
    private var shapes: [ExchangeRecord] {
        var all = ExchangeRecordLineTests.everyKind()
        for index in 0..<6 { all.append(SampleRecords.record(20 + index)) }
        return all
    }

    func testEveryShapeDecodesAsJSONDecoderDoes() throws {
        for record in shapes {
            let bytes = line(record)
            let decoded = try XCTUnwrap(fast(bytes), "the fast decoder deferred on a line the writer wrote: "
                                        + String(decoding: bytes, as: UTF8.self))
            XCTAssertEqual(decoded, slow(bytes))
            XCTAssertEqual(decoded, record)
        }
    }

    /// Timestamps of every size with up to three decimals read as `JSONDecoder` reads them.
    func testTimestampsReadExactly() throws {
        var generator = XorShift(seed: 7)
        var record = SampleRecords.record(1)
        for _ in 0..<2000 {
            let thousandths = Double(generator.next() % (1 << 53))
            let value = thousandths / [1, 10, 100, 1000][Int(generator.next() % 4)]
            record.legs[0].request?.timings.start = Timestamp(millisecondsSince1970: value)
            record.legs[0].request?.timings.end = Timestamp(millisecondsSince1970: Double(generator.next() % 100_000) / 7)
            let bytes = line(record)
            XCTAssertEqual(try XCTUnwrap(fast(bytes)), slow(bytes), String(decoding: bytes, as: UTF8.self))
        }
    }

    /// `JSONEncoder`'s lines (other member order, `\/` never escaped, other number forms) decode alike.
    func testJSONEncoderLinesDecodeAlikeOrDefer() throws {
        let encoder = RecordingLine.makeEncoder()
        for record in shapes {
            let bytes = Array(try RecordingLine.encode(record, as: .exchange, with: encoder).dropLast())
            if let decoded = fast(bytes) { XCTAssertEqual(decoded, slow(bytes)) }
        }
    }

    /// Hand edits the fast decoder reads: whitespace, escapes, member order.
    func testHandEditsItReads() throws {
        let record = SampleRecords.record(3)
        let text = String(decoding: line(record), as: UTF8.self)
        let spaced = text.replacingOccurrences(of: ",\"", with: " ,\n\t\"").replacingOccurrences(of: ":", with: " : ")
        let escaped = text.replacingOccurrences(of: "\"tap\":\"", with: "\"tap\":\"\\u0070\\/\\\"\\n\\ud83d\\ude00")
        for edited in [spaced, escaped] {
            let bytes = Array(edited.utf8)
            let decoded = try XCTUnwrap(fast(bytes), edited)
            XCTAssertEqual(decoded, try XCTUnwrap(slow(bytes)))
        }
        XCTAssertEqual(fast(Array(escaped.utf8))?.tap.hasPrefix("p/\"\n😀"), true)
    }

    /// Lines it must leave to `JSONDecoder`: an unknown member, a member twice, a null, a number in another form.
    func testDefersOnWhatItWasNotMadeFor() {
        let text = String(decoding: line(SampleRecords.record(1)), as: UTF8.self)
        let edits = [
            text.replacingOccurrences(of: "\"tap\":", with: "\"future\":[1,{\"a\":null}],\"tap\":"),
            text.replacingOccurrences(of: "\"tap\":", with: "\"exchangeID\":\"again\",\"tap\":"),
            text.replacingOccurrences(of: "\"legs\":", with: "\"authFlowStep\":null,\"legs\":"),
            text.replacingOccurrences(of: "\"wireLength\":", with: "\"wireLength\":1.0e0,\"x\":"),
            text + "x",
        ]
        for edit in edits {
            XCTAssertNil(fast(Array(edit.utf8)), edit)
        }
    }

    /// Random byte edits of every shape's line: whatever the fast decoder
    /// accepts, `JSONDecoder` accepts as the same record.
    func testFuzzedLinesDecodeAlikeOrDefer() {
        var generator = XorShift(seed: 29)
        var accepted = 0, tried = 0
        let alphabet = Array("{}[]\":,0123456789.-eE tfnul\\abc".utf8)
        for record in shapes {
            let original = line(record)
            for _ in 0..<150 {
                var bytes = original
                for _ in 0...(generator.next() % 3) {
                    let at = Int(generator.next() % UInt64(bytes.count))
                    switch generator.next() % 4 {
                    case 0: bytes.remove(at: at)
                    case 1: bytes.insert(alphabet[Int(generator.next() % UInt64(alphabet.count))], at: at)
                    case 2: bytes[at] = alphabet[Int(generator.next() % UInt64(alphabet.count))]
                    default:
                        // Digits changed in place keep the line valid more often.
                        if bytes[at] >= UInt8(ascii: "0") && bytes[at] <= UInt8(ascii: "9") {
                            bytes[at] = UInt8(ascii: "0") + UInt8(generator.next() % 10)
                        }
                    }
                }
                tried += 1
                guard let decoded = fast(bytes) else { continue }
                accepted += 1
                XCTAssertEqual(decoded, slow(bytes), String(decoding: bytes, as: UTF8.self))
            }
        }
        // Enough edits keep the line readable for the comparison to mean something.
        XCTAssertGreaterThan(accepted, tried / 20)
    }

    /// The reader takes the fast path for the writer's lines and the general one otherwise.
    func testReaderUsesFastPathForWrittenLines() throws {
        var parser = RecordingLineParser(path: "t.jsonl")
        let encoder = RecordingLine.makeEncoder()
        let header = Array(try RecordingLine.encode(SampleRecords.header, as: .header, with: encoder).dropLast())
        _ = try header.withUnsafeBytes { try parser.parse($0, terminated: true) }
        for record in shapes {
            _ = try line(record).withUnsafeBytes { try parser.parse($0, terminated: true) }
        }
        let one = SampleRecords.record(1)
        let edited = Array(String(decoding: line(one), as: UTF8.self)
            .replacingOccurrences(of: "\"tap\":", with: "\"future\":1,\"tap\":").utf8)
        guard case .record(let record) = try edited.withUnsafeBytes({ try parser.parse($0, terminated: true) }) else {
            return XCTFail("an edited line is still a record")
        }
        XCTAssertEqual(record, one)
        XCTAssertEqual(parser.fastLines, shapes.count)
        XCTAssertEqual(parser.generalLines, 1)
    }
}

/// A small deterministic generator (xorshift64) for the fuzzed edits.
struct XorShift {
    private var state: UInt64

    init(seed: UInt64) { state = seed | 1 }

    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}
