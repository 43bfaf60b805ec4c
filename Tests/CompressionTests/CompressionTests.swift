import Compression
import Foundation
import IntactTestSupport
import XCTest

/// Compression against an independent judge (the `gzip` tool) both ways,
/// streaming in small chunks, the output bound, and every kind of bad input.
final class CompressionTests: XCTestCase {
    private var samples: [(String, [UInt8])] {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt8 {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return UInt8(truncatingIfNeeded: state)
        }
        let block = (0..<32_000).map { _ in next() }
        return [
            ("empty", []),
            ("one byte", [0x41]),
            ("text", Array(String(repeating: "The server returns a bootstrap response. ", count: 200).utf8)),
            ("long runs", Array(repeating: 0, count: 5000) + Array(repeating: 0xFF, count: 700)),
            ("random", (0..<70_000).map { _ in next() }),
            ("far repeats", block + Array("gap!".utf8) + block + block.prefix(1000)),
        ]
    }

    /// `gzip` run through the shell on files, so binary data never passes as text.
    private func gzipTool(_ arguments: String, input: [UInt8]) throws -> [UInt8] {
        let directory = URL(fileURLWithPath: makeTemporaryDirectory(prefix: "intact-compression"))
        let inFile = directory.appendingPathComponent("in"), outFile = directory.appendingPathComponent("out")
        try Data(input).write(to: inFile)
        let run = try ToolRun.run("/bin/sh", ["-c", "gzip \(arguments) < '\(inFile.path)' > '\(outFile.path)'"])
        XCTAssertEqual(run.status, 0, run.error)
        return Array(try Data(contentsOf: outFile))
    }

    func testGzipOutputIsReadByTheGzipToolAndTheGzipToolsOutputIsReadBack() throws {
        for (name, input) in samples {
            let compressed = Compressor.compress(input, format: .gzip)
            XCTAssertEqual(Array(compressed.prefix(3)), [0x1F, 0x8B, 8], name)
            XCTAssertEqual(try gzipTool("-dc", input: compressed), input, name)
            let byTool = try gzipTool("-c", input: input)
            XCTAssertEqual(try Decompressor.decompress(byTool, format: .gzip, outputLimit: input.count), input, name)
        }
    }

    func testEveryFormatRoundTripsStreamingInSmallChunks() throws {
        for format in [CompressionFormat.gzip, .zlib, .rawDeflate] {
            for (name, input) in samples {
                let compressor = try Compressor(format: format, level: 9)
                var compressed: [UInt8] = []
                for start in stride(from: 0, to: input.count, by: 4093) {
                    compressed += try compressor.compress(Array(input[start..<min(input.count, start + 4093)]))
                }
                compressed += try compressor.finish()
                let decompressor = try Decompressor(format: format, outputLimit: input.count)
                var output: [UInt8] = []
                for start in stride(from: 0, to: compressed.count, by: 7) {
                    output += try decompressor.decompress(Array(compressed[start..<min(compressed.count, start + 7)]))
                }
                try decompressor.finish()
                XCTAssertEqual(output, input, "\(format) \(name)")
                XCTAssertEqual(decompressor.inputCount, compressed.count)
            }
        }
    }

    func testAFlushMakesEverythingSoFarDecodable() throws {
        let compressor = try Compressor(format: .gzip)
        let first = try compressor.compress(Array("first part".utf8)) + compressor.flush()
        let decompressor = try Decompressor(format: .gzip, outputLimit: 1000)
        XCTAssertEqual(try decompressor.decompress(first), Array("first part".utf8))
        XCTAssertEqual(try decompressor.decompress(try compressor.compress(Array(", second".utf8)) + compressor.finish()),
                       Array(", second".utf8))
        try decompressor.finish()
        XCTAssertThrowsError(try compressor.compress([1])) { error in
            XCTAssertEqual(error as? CompressionError, .misuse("the gzip compressor was used after finish()"))
        }
    }

    func testOutputBeyondTheLimitIsRefusedWithoutBeingProduced() throws {
        let bomb = Compressor.compress([UInt8](repeating: 0, count: 10_000_000), format: .gzip)
        XCTAssertLessThan(bomb.count, 20_000)
        let decompressor = try Decompressor(format: .gzip, outputLimit: 65_536)
        XCTAssertThrowsError(try decompressor.decompress(bomb)) { error in
            XCTAssertEqual(error as? CompressionError, .outputLimitExceeded(limit: 65_536))
        }
        XCTAssertLessThanOrEqual(decompressor.outputCount, 65_536 + 1)
        XCTAssertEqual(try Decompressor.decompress(Compressor.compress(Array(repeating: 7, count: 100), format: .zlib),
                                                   format: .zlib, outputLimit: 100), Array(repeating: 7, count: 100),
                       "exactly the limit is allowed")
    }

    func testBadInputGetsASpecificError() throws {
        let whole = Compressor.compress(Array(String(repeating: "sign-in ", count: 100).utf8), format: .gzip)
        func error(_ input: [UInt8], _ format: CompressionFormat = .gzip) -> CompressionError? {
            do {
                _ = try Decompressor.decompress(input, format: format, outputLimit: 1 << 20)
                return nil
            } catch {
                return error
            }
        }
        XCTAssertEqual(error(Array("not compressed at all".utf8)),
                       .corrupt(format: .gzip, reason: "incorrect header check", inputOffset: 2))
        XCTAssertEqual(error(Array(whole.dropLast(5))), .truncated(format: .gzip, inputBytes: whole.count - 5))
        XCTAssertEqual(error([]), .truncated(format: .gzip, inputBytes: 0))
        var badChecksum = whole
        badChecksum[badChecksum.count - 6] ^= 0xFF
        XCTAssertEqual(error(badChecksum), .corrupt(format: .gzip, reason: "incorrect data check", inputOffset: whole.count - 4))
        let zlib = Compressor.compress(Array("token".utf8), format: .zlib)
        XCTAssertEqual(error(zlib + [0, 0, 0], .zlib), .trailingData(format: .zlib, inputOffset: zlib.count, count: 3))
        guard case .corrupt(.rawDeflate, let reason, _)? = error([0xFF, 0xFF, 0xFF], .rawDeflate) else {
            return XCTFail("invalid block type accepted")
        }
        XCTAssertEqual(reason, "invalid block type")
        for error in [CompressionError.outputLimitExceeded(limit: 5), .truncated(format: .zlib, inputBytes: 3),
                      .corrupt(format: .gzip, reason: "incorrect header check", inputOffset: 2)] {
            XCTAssertFalse(error.description.isEmpty)
        }
        XCTAssertEqual(CompressionError.corrupt(format: .gzip, reason: "incorrect header check", inputOffset: 2).description,
                       "not a valid gzip stream at input byte 2: incorrect header check")
    }

    func testConcatenatedGzipMembersAreOneBody() throws {
        let two = Compressor.compress(Array("one ".utf8), format: .gzip) + Compressor.compress(Array("two".utf8), format: .gzip)
        XCTAssertEqual(try Decompressor.decompress(two, format: .gzip, outputLimit: 100), Array("one two".utf8))
        XCTAssertEqual(try gzipTool("-dc", input: two), Array("one two".utf8), "as the gzip tool reads it")
    }

    func testContentCodingsAndARawDeflateBodyLabelledDeflate() throws {
        let body = Array("{\"contextUrl\": \"https://app.example.test/suite\"}".utf8)
        for (coding, format) in [("gzip", CompressionFormat.gzip), ("X-GZIP", .gzip), ("deflate", .zlib), ("deflate", .rawDeflate)] {
            let decompressor = try XCTUnwrap(try Decompressor(contentCoding: coding, outputLimit: 1000), coding)
            let compressed = Compressor.compress(body, format: format)
            var output = try decompressor.decompress([compressed[0]])  // one byte cannot tell zlib from raw yet
            output += try decompressor.decompress(Array(compressed.dropFirst()))
            try decompressor.finish()
            XCTAssertEqual(output, body, "\(coding) as \(format)")
            XCTAssertEqual(decompressor.format, format)
        }
        XCTAssertNil(try Decompressor(contentCoding: "br", outputLimit: 10))
        XCTAssertNil(CompressionFormat(contentCoding: "identity"))
    }
}
