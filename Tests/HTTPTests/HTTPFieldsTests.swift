import XCTest
import HTTP

final class HTTPFieldsTests: XCTestCase {
    func testLookupIsCaseInsensitiveAndOrderKept() {
        var f: HTTPFields = ["Host": "a.test", "set-cookie": "a=1", "Set-Cookie": "b=2"]
        XCTAssertEqual(f["SET-COOKIE"], "a=1")
        XCTAssertEqual(f.values("set-cookie"), ["a=1", "b=2"])
        f.set("Set-Cookie", "c=3")
        XCTAssertEqual(f.map(\.name), ["Host", "set-cookie"])
        XCTAssertEqual(f.values("set-cookie"), ["c=3"])
        XCTAssertEqual(f.remove("HOST"), 1)
        XCTAssertFalse(f.contains("host"))
    }

    func testLatin1RoundTripIsLossless() {
        let bytes: [UInt8] = Array(0...255)
        XCTAssertEqual(String(latin1: bytes).latin1Bytes, bytes)
    }

    func testLatin1DecodingIsTheSameOnTheASCIIFastPath() {
        // ASCII from a contiguous buffer takes the UTF-8 path; a Latin-1 byte or a
        // non-contiguous sequence takes the scalar path: the same text either way.
        let ascii: [UInt8] = Array("Content-Type".utf8)
        XCTAssertEqual(String(latin1: ascii), "Content-Type")
        XCTAssertEqual(String(latin1: ascii.lazy.map { $0 }), "Content-Type")
        let latin1: [UInt8] = [0x63, 0xE9, 0x0A]
        XCTAssertEqual(String(latin1: latin1).unicodeScalars.map(\.value), [0x63, 0xE9, 0x0A])
        XCTAssertEqual(String(latin1: latin1).latin1Bytes, latin1)
        XCTAssertEqual("x-ASCII".latin1Bytes, Array("x-ASCII".utf8))
    }

    func testNameComparisonIgnoresASCIICaseOnly() {
        let field = HTTPField(name: "Content-LENGTH", value: "1")
        XCTAssertTrue(field.hasName("content-length"))
        XCTAssertFalse(field.hasName("content-lengt"))
        XCTAssertFalse(field.hasName("content-lengths"))
        XCTAssertFalse(field.hasName("content_length"))
        // Only A–Z fold: a Latin-1 capital is not the lowercase letter.
        XCTAssertFalse(HTTPField(name: String(latin1: [0xC9]), value: "").hasName(HTTPField.Name(String(latin1: [0xE9]))))
        var fields: HTTPFields = ["Connection": "close", "X-A": "1", "x-a": "2"]
        XCTAssertEqual(fields.values("X-a"), ["1", "2"])
        XCTAssertNil(fields["x-b"])
        fields.set("X-A", "3")
        XCTAssertEqual(fields.map(\.value), ["close", "3"])
    }

    func testTargetForms() {
        let abs = HTTPRequestHead(method: "GET", scheme: "https", authority: "h.test:8443", path: "/a?b", targetForm: .absolute)
        XCTAssertEqual(abs.target, "https://h.test:8443/a?b")
        XCTAssertEqual(abs.pathOnly, "/a")
        let con = HTTPRequestHead(method: "CONNECT", authority: "h.test:443", path: "", targetForm: .authority)
        XCTAssertEqual(con.target, "h.test:443")
    }
}
