@testable import Evidence
import HTTP
import XCTest

/// The literals a recording line writes for HTTP's enums (`MessageDigest+JSON.swift`).
final class MessageDigestJSONTests: XCTestCase {
    func testEveryEnumLiteralIsItsRawValue() {
        for version in [HTTPVersion.http1_0, .http1_1, .http2] {
            XCTAssertEqual(version.literal.description, version.rawValue)
        }
        for form in [RequestTargetForm.origin, .absolute, .authority, .asterisk] {
            XCTAssertEqual(form.literal.description, form.rawValue)
        }
    }
}
