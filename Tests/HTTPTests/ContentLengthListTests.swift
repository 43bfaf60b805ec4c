import XCTest
@testable import HTTP

/// RFC 9110 §8.6 lists of Content-Length: read once, collapsed for HTTP/2.
final class ContentLengthListTests: XCTestCase {
    func testAgreeingListsAreOneLengthAndOthersAreRefused() {
        XCTAssertEqual(ContentLengthList.read(["5"]), .length(5))
        XCTAssertEqual(ContentLengthList.read(["5, 5"]), .length(5))
        XCTAssertEqual(ContentLengthList.read(["5", "5,5"]), .length(5))
        XCTAssertEqual(ContentLengthList.read(["5, 6"]), .conflicting)
        XCTAssertEqual(ContentLengthList.read(["5", "6"]), .conflicting)
        XCTAssertEqual(ContentLengthList.read(["5, x"]), .invalid("5, x"))
        XCTAssertEqual(ContentLengthList.read(["5,"]), .invalid("5,"))
        XCTAssertEqual(ContentLengthList.read([]), .invalid(""))
        XCTAssertNil(ContentLengthList.agreedLength(["-1"]))
        XCTAssertNil(ContentLengthList.agreedLength(["99999999999999999999"]))
    }

    func testAnAgreeingListBecomesOneFieldWhereTheFirstStood() {
        let fields: HTTPFields = ["Host": "o", "Content-Length": "5, 5", "Accept": "*/*"]
        XCTAssertEqual(fields.collapsingContentLengthList.map(\.value), ["o", "5", "*/*"])
        XCTAssertEqual(fields.collapsingContentLengthList.map(\.name), ["Host", "Content-Length", "Accept"])
        var twoLines = HTTPFields()
        twoLines.append("content-length", "7")
        twoLines.append("X-A", "1")
        twoLines.append("Content-Length", "7")
        XCTAssertEqual(twoLines.collapsingContentLengthList.map(\.value), ["7", "1"])
        let single: HTTPFields = ["Content-Length": "5"]
        XCTAssertEqual(single.collapsingContentLengthList, single)
        let conflicting: HTTPFields = ["Content-Length": "5, 6"]
        XCTAssertEqual(conflicting.collapsingContentLengthList, conflicting, "left for the parser to refuse")
    }

    func testHTTP2CarriesOneContentLengthAndHTTP1KeepsTheList() throws {
        let head = HTTPRequestHead(method: "POST", scheme: "https", authority: "o", path: "/",
                                   fields: ["Content-Length": "5, 5"])
        XCTAssertEqual(HTTP2FieldMapping.requestList(head).filter { $0.name == "content-length" }.map(\.value), ["5"])
        let response = HTTPResponseHead(status: 200, fields: ["Content-Length": "3", "content-length": "3"])
        XCTAssertEqual(HTTP2FieldMapping.responseList(response).filter { $0.name == "content-length" }.map(\.value), ["3"])

        var parser = HTTP1Parser(parsing: .request)
        parser.feed(Array("POST / HTTP/1.1\r\nHost: o\r\nContent-Length: 5, 5\r\n\r\nhello".utf8))
        guard case .requestHead(let parsed)? = try parser.next() else { return XCTFail("no head") }
        XCTAssertEqual(parsed.framing, .contentLength(5))
        var serializer = HTTP1Serializer()
        let written = try serializer.writeRequestHead(parsed.head, framing: parsed.framing)
        XCTAssertTrue(String(decoding: written.bytes, as: UTF8.self).contains("Content-Length: 5, 5\r\n"),
                      "HTTP/1.1 to HTTP/1.1 keeps the list byte for byte")

        var conflicting = HTTP1Parser(parsing: .request)
        conflicting.feed(Array("POST / HTTP/1.1\r\nHost: o\r\nContent-Length: 5, 6\r\n\r\nhello".utf8))
        XCTAssertThrowsError(try conflicting.next()) { error in
            XCTAssertEqual(error as? HTTP1ParseError, .conflictingContentLengths(["5, 6"]))
        }
    }
}
