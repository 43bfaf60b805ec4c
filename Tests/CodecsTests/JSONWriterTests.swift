import Foundation
import Codecs
import Hashing
import XCTest

/// The recording lines' JSON writer: strings escaped exactly where JSON
/// needs it (the word-at-a-time scan included, at every position and
/// length), numbers and digests as `JSONDecoder` reads them back, and a
/// buffer that grows past its first capacity.
final class JSONWriterTests: XCTestCase {
    /// The escaping rule, character by character: what the writer's fast scan must match.
    private static let namedEscapes: [Unicode.Scalar: String] = [
        "\"": "\\\"", "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\u{08}": "\\b", "\u{0C}": "\\f",
    ]

    private func reference(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            if let escape = Self.namedEscapes[scalar] {
                out += escape
            } else if scalar.value < 0x20 {
                out += String(format: "\\u%04x", scalar.value)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    private func written(_ text: String) -> String {
        var json = JSONWriter(capacity: 0)
        json.string(text)
        return String(decoding: json.bytes, as: UTF8.self)
    }

    func testEveryEscapeAtEveryPositionOfEveryShortLength() throws {
        let specials: [Character] = ["\"", "\\", "\n", "\r", "\t", "\u{08}", "\u{0C}", "\u{00}", "\u{01}", "\u{1F}"]
        for length in 0...24 {
            let plain = String(repeating: "a", count: length)
            XCTAssertEqual(written(plain), reference(plain))
            for position in 0..<max(length, 1) where length > 0 {
                for special in specials {
                    var characters = Array(plain)
                    characters[position] = special
                    let text = String(characters)
                    XCTAssertEqual(written(text), reference(text), "length \(length), \(special.debugDescription) at \(position)")
                    XCTAssertEqual(try JSONDecoder().decode(String.self, from: Data(written(text).utf8)), text)
                }
            }
        }
    }

    /// The word-at-a-time test against the rule for every ASCII byte, and a
    /// two-, three- and four-byte character, at every position of the
    /// lengths around the word boundaries (a word check, a tail word that
    /// overlaps it, the short-string checks).
    func testEveryASCIIByteAndMultibyteCharacterAtEveryPositionAroundWordBoundaries() {
        let characters = (0..<128).map { Character(Unicode.Scalar(UInt8($0))) } + ["é", "€", "𝄞"]
        for length in [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 23, 24, 25] {
            let plain = Array(repeating: Character("a"), count: length)
            for position in 0..<length {
                for character in characters {
                    var text = plain
                    text[position] = character
                    let string = String(text)
                    XCTAssertEqual(written(string), reference(string), "length \(length), \(character.debugDescription) at \(position)")
                }
            }
        }
    }

    func testBytesThatNeedNoEscapeAreCopiedAsTheyAre() throws {
        // Around the thresholds of the word test: space, `!`, `#`, `[`, `]`, DEL, and non-ASCII.
        let texts = [" !#$[]^_`{|}~\u{7F}", "é", "naïve façade — ünïcödé ✓ 𝄞", String(repeating: "é\u{7F} ", count: 9),
                     "/suite/auth?token=abc&x=%2F", String(repeating: "ÿ", count: 17) + "\"" + String(repeating: "ÿ", count: 3)]
        for text in texts {
            XCTAssertEqual(written(text), reference(text), text)
            XCTAssertEqual(try JSONDecoder().decode(String.self, from: Data(written(text).utf8)), text)
        }
    }

    func testManyEscapesInALongString() throws {
        let text = String(repeating: "a\"b\\c\nd\u{01}efghijklmnop", count: 40)
        XCTAssertEqual(written(text), reference(text))
        XCTAssertEqual(try JSONDecoder().decode(String.self, from: Data(written(text).utf8)), text)
    }

    func testNumbersDigestsAndContainersReadBackAndTheBufferGrows() throws {
        var json = JSONWriter(capacity: 0)
        let digest = (0..<32).map { UInt8($0 * 8) }
        json.object { json in
            json.member("min", Int.min)
            json.member("max", Int.max)
            json.member("zero", 0)
            json.member("negative", -42)
            json.key("digest")
            json.hex(SHA256Digest(bytes: digest)!)
            json.key("time")
            json.double(1_796_131_061_262.437)
            json.key("nan")
            json.double(.nan)
            json.member("yes", true)
            json.member("no", false)
            json.key("list")
            json.array((0..<200).map { "item \($0)" })
            json.key(escaping: "dynamic \"key\"")
            json.int(1)
        }
        json.endLine()
        XCTAssertGreaterThan(json.count, 2000, "well past the first capacity")
        var line = [UInt8]()
        json.append(to: &line)
        XCTAssertEqual(line, json.bytes)
        XCTAssertEqual(line.last, UInt8(ascii: "\n"))
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.dropLast())) as? [String: Any])
        XCTAssertEqual(object["min"] as? Int, Int.min)
        XCTAssertEqual(object["max"] as? Int, Int.max)
        XCTAssertEqual(object["zero"] as? Int, 0)
        XCTAssertEqual(object["negative"] as? Int, -42)
        XCTAssertEqual(object["digest"] as? String, digest.map { String(format: "%02x", $0) }.joined())
        XCTAssertEqual(object["time"] as? Double, 1_796_131_061_262.437)
        XCTAssertEqual(object["nan"] as? String, "NaN")
        XCTAssertEqual(object["yes"] as? Bool, true)
        XCTAssertEqual(object["no"] as? Bool, false)
        XCTAssertEqual((object["list"] as? [String])?.count, 200)
        XCTAssertEqual((object["list"] as? [String])?.last, "item 199")
        XCTAssertEqual(object["dynamic \"key\""] as? Int, 1)
    }

    /// Doubles read back as exactly the same value, through the thousandths
    /// path (clock timestamps) and the general one alike; the thousandths
    /// path writes what a reader expects to see.
    func testDoublesReadBackExactlyOnBothPaths() throws {
        let values: [Double] = [
            1_796_131_061_262.437, 1_796_131_061_262.4, 1_796_131_061_262, 0, -0.001, -5.5, 0.001, 999.999,
            9_007_199_254_740.991, 0.1 + 0.2, 1e-05, 1_796_131_061_262.4371, 123_456_789.123_456_7, 1e300, -1e-300,
            Double.leastNonzeroMagnitude, Double.greatestFiniteMagnitude, 2.5e15,
        ] + (0..<2000).map { _ in (Double(Int.random(in: 0..<2_000_000_000_000_000)) / 1000) }
        var json = JSONWriter(capacity: 0)
        json.array { json in
            for value in values { json.double(value) }
        }
        let decoded = try JSONDecoder().decode([Double].self, from: Data(json.bytes))
        XCTAssertEqual(decoded.count, values.count)
        for (value, back) in zip(values, decoded) {
            XCTAssertEqual(back.bitPattern == value.bitPattern || (back == 0 && value == 0), true, "\(value) read back as \(back)")
        }
        func text(_ value: Double) -> String {
            var json = JSONWriter(capacity: 0)
            json.double(value)
            return String(decoding: json.bytes, as: UTF8.self)
        }
        XCTAssertEqual(text(1_796_131_061_262.437), "1796131061262.437")
        XCTAssertEqual(text(1_796_131_061_262.4), "1796131061262.4")
        XCTAssertEqual(text(1_796_131_061_262), "1796131061262.0")
        XCTAssertEqual(text(-0.05), "-0.05")
        XCTAssertEqual(text(7.009), "7.009")
        XCTAssertEqual(text(7.01), "7.01")
        XCTAssertEqual(text(7.1), "7.1")
        XCTAssertEqual(text(7.12), "7.12")
        XCTAssertEqual(text(7.102), "7.102")
        XCTAssertEqual(text(0.5), "0.5")
        XCTAssertEqual(text(1e-05), "1e-05", "not a whole number of thousandths: Swift's shortest form")
    }

    /// Whole thousandths are found by rounding `value * 1000` half away from
    /// zero (as `rounded()` does): ties, their neighbours one ulp away,
    /// negatives and the edge at 2^53 give the text the rule gives.
    func testThousandthsAreFoundAsRoundingHalfAwayFromZeroFindsThem() {
        func reference(_ value: Double) -> String {
            let scaled = (value * 1000).rounded()
            guard scaled.magnitude < 9_007_199_254_740_992, scaled / 1000 == value else { return value.description }
            let whole = Int(scaled)
            let magnitude = whole.magnitude
            var fraction = String(magnitude % 1000)
            fraction = String(repeating: "0", count: 3 - fraction.count) + fraction
            while fraction.count > 1, fraction.hasSuffix("0") { fraction.removeLast() }
            return (whole < 0 ? "-" : "") + String(magnitude / 1000) + "." + fraction
        }
        func text(_ value: Double) -> String {
            var json = JSONWriter(capacity: 0)
            json.double(value)
            return String(decoding: json.bytes, as: UTF8.self)
        }
        var values: [Double] = [0.0005, -0.0005, 0.0015, -0.0025, 2.5005, 1_796_131_061_262.4375, -1_796_131_061_262.4385,
                                9_007_199_254_740.991, 9_007_199_254_740.992, 9_007_199_254_740.993, -9_007_199_254_740.991,
                                4_503_599_627_370.4955, 0.0004999, 1e-3, -1e-3, 123.4565, 1e16, -1e16, 4.5e15, 0.49999999999999994]
        for _ in 0..<3000 {
            let thousandths = Double(Int.random(in: -2_000_000_000_000_000..<2_000_000_000_000_000)) / 1000
            values += [thousandths, thousandths.nextUp, thousandths.nextDown,
                       (Double(Int.random(in: -9_000_000_000_000..<9_000_000_000_000)) + 0.5) / 1000,
                       Double.random(in: -1e13..<1e13)]
        }
        for value in values {
            XCTAssertEqual(text(value), reference(value), "\(value)")
        }
    }

    /// Integers of every length from 1 to 20 digits, at the edges where one
    /// more digit begins (the digits are written two at a time from the last).
    func testIntegersOfEveryLengthAreTheirDecimalDigits() {
        var values: [Int] = [0, 1, 9, -1, -9, Int.max, Int.min, Int.min + 1]
        var power = 1
        for _ in 1...18 {
            power *= 10
            values += [power - 1, power, power + 1, -power, -(power - 1), power + power / 2]
        }
        for value in values {
            var json = JSONWriter(capacity: 0)
            json.int(value)
            XCTAssertEqual(String(decoding: json.bytes, as: UTF8.self), String(value))
        }
    }

    func testDigestsAreWrittenAsTheirHexadecimal() {
        let digest = SHA256Digest.of(Array("intact".utf8))
        var json = JSONWriter(capacity: 0)
        json.hex(digest)
        XCTAssertEqual(String(decoding: json.bytes, as: UTF8.self), "\"" + digest.hex + "\"")
        XCTAssertEqual(digest.hex, "e6d7ddd8f414a22d8935148498c32ce0acdcf5c0c71db2455033f9be0a6cbc0a")
        XCTAssertEqual(SHA256Digest(bytes: digest.bytes), digest)
        XCTAssertNotEqual(SHA256Digest.of(Array("intacT".utf8)), digest)
    }

    /// The vector path of `hex` against a byte-by-byte reference, for every
    /// byte value in every position of the 32 (each digest is 32
    /// consecutive byte values, shifted one by one through all of them).
    func testDigestsOfEveryByteValueInEveryPosition() {
        for start in 0..<256 {
            let bytes = (0..<32).map { UInt8((start + $0 * 8) % 256) }
            guard let digest = SHA256Digest(bytes: bytes) else { return XCTFail("32 bytes make a digest") }
            var json = JSONWriter(capacity: 0)
            json.int(start)
            json.hex(digest)
            let reference = bytes.map { String(format: "%02x", $0) }.joined()
            XCTAssertEqual(String(decoding: json.bytes, as: UTF8.self), "\(start),\"\(reference)\"")
        }
    }

    /// Lines written one after another into one writer are whole, separate
    /// JSON values (no comma carried over from the line before), and
    /// `removeAll` starts afresh with the buffer kept.
    func testLinesOneAfterAnotherAndRemoveAll() throws {
        var json = JSONWriter(capacity: 64)
        for index in 0..<3 {
            json.object { json in json.member("n", index) }
            json.endLine()
        }
        XCTAssertEqual(String(decoding: json.bytes, as: UTF8.self), "{\"n\":0}\n{\"n\":1}\n{\"n\":2}\n")
        json.withUnsafeBytes { XCTAssertEqual(Array($0), json.bytes) }
        json.removeAll()
        XCTAssertEqual(json.count, 0)
        json.array { json in json.string("a") }
        json.endLine()
        XCTAssertEqual(String(decoding: json.bytes, as: UTF8.self), "[\"a\"]\n")
    }
}


/// Values written twice in one line: noted where they were written, copied
/// the second time, also after the buffer moved.
final class JSONWriterRepeatTests: XCTestCase {
    func testARecordedValueIsCopiedWithItsCommaAfterTheBufferGrew() {
        var json = JSONWriter(capacity: 64)
        var value = JSONRepeat.wanted
        json.openArray()
        json.int(1)
        XCTAssertFalse(json.repeatValue(value), "nothing recorded yet")
        let start = json.valueStart
        json.array(["a", "b\"", String(repeating: "c", count: 30)])
        json.note(&value, from: start)
        let first = String(decoding: json.bytes, as: UTF8.self)
        // Push the buffer past its capacity, so the copy reads from a moved buffer.
        json.string(String(repeating: "x", count: 300))
        XCTAssertTrue(json.repeatValue(value))
        json.int(2)
        json.closeArray()
        let inner = #"["a","b\"",""# + String(repeating: "c", count: 30) + #""]"#
        XCTAssertEqual(first, "[1," + inner)
        XCTAssertEqual(String(decoding: json.bytes, as: UTF8.self),
                       "[1," + inner + ",\"" + String(repeating: "x", count: 300) + "\"," + inner + ",2]")
    }

    func testAValueNotWantedIsNotRecorded() {
        var json = JSONWriter()
        var value = JSONRepeat.off
        json.key(escaping: "k")
        let start = json.valueStart
        json.int(5)
        json.note(&value, from: start)
        XCTAssertFalse(json.repeatValue(value))
        guard case .off = value else { return XCTFail("\(value)") }
    }

    func testSameBytesComparesBytesNotCanonicalEquivalence() {
        XCTAssertTrue(JSONWriter.sameBytes("", ""))
        XCTAssertTrue(JSONWriter.sameBytes("abc", "abc"))
        let long = String(repeating: "long value ", count: 5)
        XCTAssertTrue(JSONWriter.sameBytes(long, String(decoding: Array(long.utf8), as: UTF8.self)))
        XCTAssertFalse(JSONWriter.sameBytes(long, long + " "))
        XCTAssertFalse(JSONWriter.sameBytes(long, String(long.dropLast()) + "X"))
        XCTAssertFalse(JSONWriter.sameBytes("abc", "abC"))
        XCTAssertEqual("caf\u{E9}", "cafe\u{301}")
        XCTAssertFalse(JSONWriter.sameBytes("caf\u{E9}", "cafe\u{301}"))
        XCTAssertFalse(JSONWriter.sameBytes("caf\u{E9}" + long, "cafe\u{301}" + long))
        XCTAssertTrue(JSONWriter.sameBytes(["a", long], ["a", String(decoding: Array(long.utf8), as: UTF8.self)]))
        XCTAssertFalse(JSONWriter.sameBytes(["a", long], ["a"]))
        XCTAssertFalse(JSONWriter.sameBytes(["a", "b"], ["b", "a"]))
    }
}

/// Literal string values: written as they are, quoted, with their comma;
/// the literals the recording line uses for enums are their raw values.
final class JSONWriterLiteralTests: XCTestCase {
    func testLiteralsAreQuotedWithTheirCommas() {
        var json = JSONWriter(capacity: 0)
        json.openObject()
        json.member("a", literal: "")
        json.member("b", literal: "x")
        json.member("c", literal: "HTTP/1.1")
        json.member("d", literal: "a literal longer than sixteen bytes")
        json.closeObject()
        json.openArray()
        json.literal("y")
        json.literal("z")
        json.closeArray()
        XCTAssertEqual(String(decoding: json.bytes, as: UTF8.self),
                       #"{"a":"","b":"x","c":"HTTP/1.1","d":"a literal longer than sixteen bytes"},["y","z"]"#)
    }
}
