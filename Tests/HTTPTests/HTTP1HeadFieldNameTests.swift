import XCTest
@testable import HTTP

final class HTTP1HeadFieldNameTests: XCTestCase {
    func testTheSixNamesHaveSixLengths() {
        let lengths = HTTP1HeadFieldName.allCases.map(\.lowercased.utf8.count)
        XCTAssertEqual(Set(lengths).count, HTTP1HeadFieldName.allCases.count)
    }

    func testEachNameInAnyCase() {
        for name in HTTP1HeadFieldName.allCases {
            let lower = name.lowercased
            XCTAssertEqual(HTTP1HeadFieldName(lower), name)
            XCTAssertEqual(HTTP1HeadFieldName(lower.uppercased()), name)
            let capitalised = lower.split(separator: "-", omittingEmptySubsequences: false)
                .map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined(separator: "-")
            XCTAssertEqual(HTTP1HeadFieldName(capitalised), name, capitalised)
            let alternating = String(lower.enumerated().map { $0.offset % 2 == 0 ? Character($0.element.uppercased()) : $0.element })
            XCTAssertEqual(HTTP1HeadFieldName(alternating), name, alternating)
        }
        XCTAssertEqual(HTTP1HeadFieldName("Content-Length"), .contentLength)
        XCTAssertEqual(HTTP1HeadFieldName("TRANSFER-ENCODING"), .transferEncoding)
    }

    func testLookalikesAndOtherNamesAreNone() {
        for other in ["", "hos", "hosts", "xost", "date", "etag", "server", "expects", "upgrades", "upgrad",
                      "connectio", "connections", "keep-alive", "content-lengthx", "xcontent-length", "content-lengt",
                      "content_length", "content length", "content-type", "content-range", "transfer-encodings",
                      "transfer_encoding", "transfer-encodinf", "te", "proxy-connection", "content-length\u{0}",
                      "h\u{D}st", "cont\u{E9}nt-length", "CONTENT-LENGTH ", " host"] {
            XCTAssertNil(HTTP1HeadFieldName(other), other)
        }
    }

    /// Every byte value at every position of every name: only the byte
    /// itself, or the other case of a letter, keeps the name recognised.
    func testEveryByteAtEveryPosition() {
        for name in HTTP1HeadFieldName.allCases {
            let bytes = Array(name.lowercased.utf8)
            for position in bytes.indices {
                for byte in UInt8.min...UInt8.max {
                    var changed = bytes
                    changed[position] = byte
                    let original = bytes[position]
                    let sameLetter = byte == original || (original >= 0x61 && original <= 0x7A && byte == original - 0x20)
                    let found = HTTP1HeadFieldName(String(latin1: changed))
                    if sameLetter {
                        XCTAssertEqual(found, name, "\(name) byte \(byte) at \(position)")
                    } else {
                        XCTAssertNil(found, "\(name) byte \(byte) at \(position)")
                    }
                }
            }
        }
    }
}
