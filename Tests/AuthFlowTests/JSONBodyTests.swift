@testable import AuthFlow
import Foundation
import XCTest

/// JSON bodies read by the configuration files' reader (`LocatedJSON`).
final class JSONBodyTests: XCTestCase {
    private func object(_ text: String) -> [String: Any]? { JSONBody.decodeObject(Array(text.utf8)) }

    func testAnObjectReadsAsPlainValues() throws {
        let read = try XCTUnwrap(object(#"{"contextUrl":"https://127.0.0.1/suite","n":2.5,"ok":true,"none":null,"list":[1,"a"],"inner":{"k":"v"}}"#))
        XCTAssertEqual(read["contextUrl"] as? String, "https://127.0.0.1/suite")
        XCTAssertEqual(read["n"] as? Double, 2.5)
        XCTAssertEqual(read["ok"] as? Bool, true)
        XCTAssertTrue(read["none"] is NSNull)
        XCTAssertEqual((read["list"] as? [Any])?.count, 2)
        XCTAssertEqual((read["inner"] as? [String: Any])?["k"] as? String, "v")
    }

    func testAKeyGivenTwiceIsNoObject() {
        XCTAssertNil(object(#"{"a":"first","a":"last"}"#))
        XCTAssertNotNil(object(#"{"a":"first","b":{"a":"again"}}"#), "the same key in another object is fine")
    }

    func testWhatIsNoJSONObjectIsNil() {
        for bad in ["", "[1,2]", "\"text\"", "{\"a\":", "{\"a\":1}}", "<html>401</html>", "{'a':1}"] {
            XCTAssertNil(object(bad), bad)
        }
    }

    func testATokenPostInJSONRoundTrips() throws {
        let format = TokenPostFormat(encoding: .json)
        let body = format.encode(token: "t/1", verifier: "v")
        let read = try format.decode(contentType: "application/json; charset=utf-8", body: body)
        XCTAssertEqual(read.token, "t/1")
        XCTAssertEqual(read.verifier, "v")
        XCTAssertThrowsError(try format.decode(contentType: "application/json", body: Array("[\"t\"]".utf8)))
    }
}
