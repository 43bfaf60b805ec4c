import XCTest
@testable import Faults

final class GzipTests: XCTestCase {
    func testCRC32CheckValue() {
        var crc = CRC32()
        crc.update(Array("123456789".utf8))
        XCTAssertEqual(crc.value, 0xCBF4_3926)
    }

    func testRoundTripsThroughTheGzipCommand() throws {
        var random = SeededGenerator(seed: 5)
        let inputs: [(String, [UInt8])] = [
            ("empty", []),
            ("one byte", [0x41]),
            ("text", Array(String(repeating: "The server returns a bootstrap response. ", count: 200).utf8)),
            ("long runs (max match length)", Array(repeating: 0, count: 5000) + Array(repeating: 0xFF, count: 700)),
            ("random", (0..<70_000).map { _ in UInt8(truncatingIfNeeded: random.next()) }),
            ("far repeats (max distance)", {
                let block = (0..<32_000).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                return block + Array("gap!".utf8) + block + block.prefix(1000)
            }()),
            ("every byte value", (0..<4096).map { UInt8($0 % 256) }),
        ]
        for (name, input) in inputs {
            let compressed = Gzip.compress(input)
            XCTAssertEqual(Array(compressed.prefix(3)), [0x1F, 0x8B, 8], name)
            XCTAssertEqual(try gunzip(compressed), input, name)
        }
    }

    func testRepetitiveInputShrinks() {
        let input = Array(String(repeating: "{\"contextUrl\": \"https://app.example.test/suite\"}", count: 100).utf8)
        XCTAssertLessThan(Gzip.compress(input).count, input.count / 10)
    }
}
