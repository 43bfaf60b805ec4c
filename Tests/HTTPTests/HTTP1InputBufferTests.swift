import XCTest
@testable import HTTP

final class HTTP1InputBufferTests: XCTestCase {
    /// A consumed head leaves no storage behind (an idle keep-alive
    /// connection's parser holds nothing of its last request), and the
    /// emptied buffer reads the next head as before.
    func testBufferKeepsNoStorageOnceEverythingIsConsumed() {
        var buffer = HTTP1InputBuffer()
        buffer.append(Array("GET / HTTP/1.1\r\n\r\nGET".utf8))
        guard case .line(let first) = buffer.readLine() else { return XCTFail("no start line") }
        XCTAssertEqual(first, 0..<14)
        guard case .line(let blank) = buffer.readLine() else { return XCTFail("no blank line") }
        XCTAssertTrue(blank.isEmpty)
        buffer.consumeToCursor()
        XCTAssertEqual(buffer.readableCount, 3, "bytes after the head stay")
        XCTAssertGreaterThan(buffer.bytes.capacity, 0)
        buffer.append(Array(" /b HTTP/1.1\r\n\r\n".utf8))
        guard case .line(let second) = buffer.readLine() else { return XCTFail("no second start line") }
        XCTAssertEqual(Array(buffer.bytes[second]), Array("GET /b HTTP/1.1".utf8))
        _ = buffer.readLine()
        buffer.consumeToCursor()
        XCTAssertEqual(buffer.readableCount, 0)
        XCTAssertEqual(buffer.bytes.capacity, 0, "a consumed buffer kept its storage")
        buffer.append(Array("body".utf8))
        buffer.skip(4)
        XCTAssertEqual(buffer.bytes.capacity, 0, "skipped bytes kept their storage")
        buffer.append(Array("next\r\n".utf8))
        guard case .line(let next) = buffer.readLine() else { return XCTFail("no line after skipping") }
        XCTAssertEqual(Array(buffer.bytes[next]), Array("next".utf8))
    }
}
