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

    func testTargetForms() {
        let abs = HTTPRequestHead(method: "GET", scheme: "https", authority: "h.test:8443", path: "/a?b", targetForm: .absolute)
        XCTAssertEqual(abs.target, "https://h.test:8443/a?b")
        XCTAssertEqual(abs.pathOnly, "/a")
        let con = HTTPRequestHead(method: "CONNECT", authority: "h.test:443", path: "", targetForm: .authority)
        XCTAssertEqual(con.target, "h.test:443")
    }
}
