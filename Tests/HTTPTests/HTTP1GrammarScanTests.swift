import XCTest
@testable import HTTP

/// The byte scans of `HTTP1Grammar` that decide eight bytes at a time or by
/// bit set, checked at every byte value against the rules they implement.
final class HTTP1GrammarScanTests: XCTestCase {
    private static let tcharPunctuation = Array("!#$%&'*+-.^_`|~".utf8)

    private static func isTchar(_ b: UInt8) -> Bool {
        (0x30...0x39).contains(b) || (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b) || tcharPunctuation.contains(b)
    }

    private static func isValueByte(_ b: UInt8) -> Bool { b == 0x09 || (b >= 0x20 && b != 0x7F) }

    func testTokenBytesAreTheTchars() {
        for b in UInt8.min...UInt8.max {
            XCTAssertEqual(HTTP1Grammar.isTokenByte(b), Self.isTchar(b), "byte \(b)")
        }
    }

    /// Every byte value at every offset of buffers that end on a word
    /// boundary and that end with a tail, so both the 8-byte loads and the
    /// byte loop decide it.
    func testPrintableASCIIAtEveryOffset() {
        for length in [1, 7, 8, 9, 16, 19] {
            for offset in 0..<length {
                for b in UInt8.min...UInt8.max {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    bytes[offset] = b
                    let printable = bytes.withUnsafeBytes(HTTP1Grammar.isPrintableASCII)
                    XCTAssertEqual(printable, (0x20...0x7E).contains(b), "byte \(b) at \(offset) of \(length)")
                }
            }
        }
        XCTAssertTrue([UInt8]().withUnsafeBytes(HTTP1Grammar.isPrintableASCII))
    }

    func testNotPrintableMarksExactlyTheBytesOutside() {
        for position in 0..<8 {
            for b in UInt8.min...UInt8.max {
                var word: UInt64 = 0x7E20_4141_4141_4141 // `~`, SP and `A`s: all printable
                word &= ~(0xFF << (8 * UInt64(position)))
                word |= UInt64(b) << (8 * UInt64(position))
                let expected: UInt64 = (0x20...0x7E).contains(b) ? 0 : 0x80 << (8 * UInt64(position))
                XCTAssertEqual(HTTP1Grammar.notPrintable(word), expected, "byte \(b) at \(position)")
            }
        }
    }

    func testTokenTextAndAppendTokenAtEveryByte() {
        for b in UInt8.min...UInt8.max {
            for bytes in [[b], Array("Content-Type".utf8) + [b], [b] + Array("x-a".utf8)] {
                let text = HTTP1Grammar.tokenText(bytes[...])
                XCTAssertEqual(text, Self.isTchar(b) ? String(decoding: bytes, as: UTF8.self) : nil, "byte \(b)")
                var out: [UInt8] = [1]
                let appended = HTTP1Grammar.appendToken(String(latin1: bytes), to: &out)
                XCTAssertEqual(appended, Self.isTchar(b), "byte \(b)")
                XCTAssertEqual(out, appended ? [1] + bytes : [1], "byte \(b)")
            }
        }
        XCTAssertNil(HTTP1Grammar.tokenText([][...]))
        var out: [UInt8] = []
        XCTAssertFalse(HTTP1Grammar.appendToken("", to: &out))
    }

    /// A field value's text and its bytes on the way out agree with the
    /// byte rule (`isFieldValueByte`) and ISO-8859-1 at every byte value,
    /// in values short (byte loop) and long (8-byte loads).
    func testFieldValuesAtEveryByte() {
        for b in UInt8.min...UInt8.max {
            for bytes in [[b], Array("text/html; q=1".utf8) + [b] + Array("0123456789".utf8)] {
                let valid = Self.isValueByte(b)
                let text = HTTP1Grammar.fieldValueText(bytes[...])
                XCTAssertEqual(text, valid ? String(latin1: bytes) : nil, "byte \(b)")
                let string = String(latin1: bytes)
                XCTAssertEqual(HTTP1Grammar.isFieldValue(string), valid, "byte \(b)")
                var out: [UInt8] = [1]
                XCTAssertEqual(HTTP1Grammar.appendFieldValue(string, to: &out), valid, "byte \(b)")
                XCTAssertEqual(out, valid ? [1] + bytes : [1], "byte \(b)")
            }
        }
    }

    func testFieldValueScalarsAboveLatin1AreRefused() {
        var out: [UInt8] = []
        XCTAssertFalse(HTTP1Grammar.appendFieldValue("price: 5 €", to: &out))
        XCTAssertEqual(out, [])
        XCTAssertFalse(HTTP1Grammar.isFieldValue("€"))
        XCTAssertTrue(HTTP1Grammar.appendFieldValue("caf\u{E9}\tbar", to: &out))
        XCTAssertEqual(out, Array("caf".utf8) + [0xE9, 0x09] + Array("bar".utf8))
        XCTAssertTrue(HTTP1Grammar.appendFieldValue("", to: &out))
    }

    func testLatin1AppendMatchesLatin1Bytes() {
        for text in ["", "OK", "Not Found but longer than eight", "caf\u{E9}", "\u{FF}\u{80}ab", "€"] {
            var out: [UInt8] = []
            HTTP1Grammar.appendLatin1(text, to: &out)
            XCTAssertEqual(out, text.latin1Bytes, text)
        }
    }

    /// The in-place list walk yields the elements `listElements` builds,
    /// with every byte value in the list (only `,` splits, only SP and HTAB
    /// are trimmed), and stops when asked.
    func testListElementsInPlaceMatchTheCopiedOnes() {
        var lists = ["", ",", " , ", "a", "a,b", "a, b ,\tc", "5, 5", ",,x,", "\t", "chunked;q=1 , gzip"]
        for b in UInt8.min...UInt8.max {
            lists.append(String(latin1: [UInt8(ascii: "a"), b, UInt8(ascii: ","), b, UInt8(ascii: " "), b]))
        }
        for list in lists {
            var walked: [[UInt8]] = []
            let stopped = Array(list.utf8).withUnsafeBufferPointer { bytes in
                HTTP1Grammar.forEachListElement(bytes) { element in
                    walked.append(Array(element))
                    return false
                }
            }
            XCTAssertFalse(stopped)
            XCTAssertEqual(walked, HTTP1Grammar.listElements(list).map(Array.init), list.debugDescription)
        }
        var seen = 0
        let stopped = Array("a, b, c".utf8).withUnsafeBufferPointer { bytes in
            HTTP1Grammar.forEachListElement(bytes) { element in
                seen += 1
                return element.elementsEqual("b".utf8)
            }
        }
        XCTAssertTrue(stopped)
        XCTAssertEqual(seen, 2)
    }

    /// Values read one at a time say what the array of them says.
    func testContentLengthReaderMatchesTheWholeList() {
        let cases: [[String]] = [["5"], ["5, 5"], ["5", "5,5"], ["5, 6"], ["5", "6"], ["5, x"], ["x", "5, 6"],
                                 ["5, 6", "x"], ["5,"], [""], ["00", "0"], ["99999999999999999999"]]
        for values in cases {
            var reader = ContentLengthList.Reader()
            for value in values { reader.read(value) }
            XCTAssertEqual(reader.reading, ContentLengthList.read(values), "\(values)")
        }
        XCTAssertNil(ContentLengthList.Reader().reading)
    }
}
