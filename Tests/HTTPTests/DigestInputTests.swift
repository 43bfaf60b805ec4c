@testable import HTTP
import Hashing
import XCTest

/// The item encoding's buffer and the name grouping under the head digests:
/// the paths the pinned heads (`HeadDigestPinTests`) do not reach on their own.
final class DigestInputTests: XCTestCase {
    private func item(_ bytes: [UInt8]) -> [UInt8] { count(bytes.count) + bytes }
    private func count(_ n: Int) -> [UInt8] { [UInt8(n >> 24), UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff)] }

    func testInputOutgrowingItsRoomKeepsEveryByte() {
        let long = String(repeating: "AbC", count: 200)
        let digest = DigestInput.with(capacity: 1) { input in
            input.appendItem("request")
            input.appendItem(long, lowercasingASCII: true)
            input.appendCount(70_000)
            let at = input.beginItem()
            input.appendText(long)
            input.appendText("; ")
            input.endItem(at)
            return input.digest(of: 0..<input.position, using: .sha256)
        }
        let expected = item(Array("request".utf8)) + item(Array(long.lowercased().utf8)) + count(70_000)
            + item(Array((long + "; ").utf8))
        XCTAssertEqual(digest, SHA256Digest.of(expected))
    }

    func testTextIsWrittenAsISO88591WithQuestionMarksAboveIt() {
        let digest = DigestInput.with(capacity: 64) { input in
            input.appendItem("Caf\u{C9} \u{263A}X", lowercasingASCII: true)
            input.appendItem("Caf\u{C9}")
            input.appendItem("")
            return input.digest(of: 0..<input.position, using: .sha256)
        }
        let expected = item([0x63, 0x61, 0x66, 0xC9, 0x20, 0x3F, 0x78]) + item([0x43, 0x61, 0x66, 0xC9]) + item([])
        XCTAssertEqual(digest, SHA256Digest.of(expected))
    }

    /// Names sharing their first 8 bytes, one a prefix of another, across
    /// case, and around the letters, group and sort by lowercased bytes.
    /// Every byte value at every offset of texts that end on a word
    /// boundary and with a tail, copied as is and lowercased: the copy that
    /// notes non-ASCII bytes on the way writes the bytes the ISO-8859-1 rule
    /// gives, and a non-ASCII text is written again scalar by scalar.
    func testTextAtEveryByteAndOffsetIsItsISO88591Bytes() {
        // Every way the copy ends: one byte, two overlapping 2-byte and 4-byte loads, one word, a word
        // overlapping the one before, several words.
        for length in [1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17] {
            for offset in 0..<length {
                for b in UInt8.min...UInt8.max {
                    var bytes = Array("AbCdEfGhIjKlMnOpQ".utf8.prefix(length))
                    bytes[offset] = b
                    let text = String(latin1: bytes)
                    for lowercase in [false, true] {
                        let digest = DigestInput.with(capacity: 4) { input in
                            input.appendItem("x")
                            input.appendItem(text, lowercasingASCII: lowercase)
                            input.appendText(text)
                            return input.digest(of: 0..<input.position, using: .sha256)
                        }
                        let written = lowercase ? bytes.map { $0 &- 0x41 < 26 ? $0 | 0x20 : $0 } : bytes
                        XCTAssertEqual(digest, SHA256Digest.of(item([0x78]) + item(written) + bytes),
                                       "byte \(b) at \(offset) of \(length), lowercase \(lowercase)")
                    }
                }
            }
        }
    }

    /// A status is written as the item of its decimal digits, as `String(code)` spells it.
    func testDecimalItemsAreTheDigitsOfTheValue() {
        for value in [0, 7, 9, 10, 99, 100, 200, 404, 599, 999, 1000, 65535, 1_234_567, -1] {
            let written = DigestInput.with(capacity: 4) { input in
                input.appendItem(decimal: value)
                return input.digest(of: 0..<input.position, using: .sha256)
            }
            XCTAssertEqual(written, SHA256Digest.of(item(Array(String(value).utf8))), "\(value)")
        }
    }

    func testNamesGroupByLowercasedBytesInByteOrder() {
        let fields = HTTPFields([
            HTTPField(name: "Content-Type", value: "1"), HTTPField(name: "content-length", value: "2"),
            HTTPField(name: "X-A-B", value: "3"), HTTPField(name: "x-a", value: "4"), HTTPField(name: "CONTENT-TYPE", value: "5"),
            HTTPField(name: "_", value: "6"), HTTPField(name: "Content-", value: "7"), HTTPField(name: "", value: "8"),
        ])
        let groups: [(String, [String])] = fields.fields.withUnsafeBufferPointer { section in
            FieldNameIndex.with(section) { index in
                index.groups.map { group in
                    (index.name(of: group), index.entries(of: group).map { index.fields[$0.field].value })
                }
            }
        }
        XCTAssertEqual(groups.map(\.0), ["", "_", "content-", "content-length", "content-type", "x-a", "x-a-b"])
        XCTAssertEqual(groups.map(\.1), [["8"], ["6"], ["7"], ["2"], ["1", "5"], ["4"], ["3"]])
    }

    /// Capitalised names are named by their lowercased form, whether or not
    /// they are among the common names kept as ready `String`s.
    func testCapitalisedNamesAreNamedLowercase() {
        let names = ["Content-Type", "Content-Typo", "CONTENT-LENGTH", "Content-Encoding", "Content-Security-Policy",
                     "X-Forwarded-For", "X-Forwarded-Proto", "X-Forwarded-Port", "Accept", "Accept-Ranges", "TE", "Tf",
                     "Host", "Hostname", "Set-Cookie", "Www-Authenticate", "A"]
        let fields = HTTPFields(names.map { HTTPField(name: $0, value: "v") })
        let named = fields.fields.withUnsafeBufferPointer { section in
            FieldNameIndex.with(section) { index in index.groups.map { index.name(of: $0) } }
        }
        XCTAssertEqual(named, names.map { $0.lowercased() }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
    }

    /// The eight-bytes-at-once lowercasing agrees with the byte rule for
    /// every byte value in every position of the word, next to every kind of
    /// neighbour (a capital, a letter that is not, a byte above 0x7F).
    func testWordLowercasingMatchesTheByteRule() {
        func lower(_ byte: UInt8) -> UInt8 { byte &- 0x41 < 26 ? byte | 0x20 : byte }
        for neighbour: UInt8 in [0x41, 0x5A, 0x61, 0x40, 0x5B, 0x7F, 0x80, 0xC1, 0xDA, 0xFF, 0x00] {
            for byte in 0...UInt8.max {
                for position in 0..<8 {
                    var bytes = [UInt8](repeating: neighbour, count: 8)
                    bytes[position] = byte
                    let word = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
                    let lowered = word | FieldNameIndex.asciiCapitals(word) >> 2
                    XCTAssertEqual(withUnsafeBytes(of: lowered) { Array($0) }, bytes.map(lower), "byte \(byte) at \(position)")
                }
            }
        }
    }

    /// Names of eight bytes and more (lowercased a word at a time) group as shorter ones do.
    func testLongCapitalisedNamesGroupWithTheirLowercaseForm() {
        let fields = HTTPFields([
            HTTPField(name: "X-Forwarded-FOR", value: "1"), HTTPField(name: "x-forwarded-for", value: "2"),
            HTTPField(name: "ABCDEFGH", value: "3"), HTTPField(name: "abcdefgh", value: "4"),
            HTTPField(name: "Caf\u{C9}-Z", value: "5"), HTTPField(name: "caf\u{C9}-z", value: "6"),
        ])
        let groups: [(String, [String], Bool)] = fields.fields.withUnsafeBufferPointer { section in
            FieldNameIndex.with(section) { index in
                index.groups.map { group in
                    (index.name(of: group), index.entries(of: group).map { index.fields[$0.field].value }, index.isASCII(group))
                }
            }
        }
        XCTAssertEqual(groups.map(\.0), ["abcdefgh", "caf\u{C9}-z", "x-forwarded-for"])
        XCTAssertEqual(groups.map(\.1), [["3", "4"], ["5", "6"], ["1", "2"]])
        XCTAssertEqual(groups.map(\.2), [true, false, true])
    }

    func testEmptySectionHasNoGroups() {
        let count = HTTPFields().fields.withUnsafeBufferPointer { section in
            FieldNameIndex.with(section) { $0.groups.count }
        }
        XCTAssertEqual(count, 0)
    }
}
