import XCTest
@testable import HTTP

/// Decoded HTTP/2 names are taken from the common names only when the
/// bytes are exactly one of them.
final class CommonFieldNamesTests: XCTestCase {
    private func decoded(_ bytes: [UInt8]) -> String? {
        bytes.withUnsafeBufferPointer(CommonFieldNames.decoded)
    }

    func testEachCommonNameIsFoundAsItself() {
        let names = CommonFieldNames.shared.names
        XCTAssertEqual(Set(names).count, names.count)
        for name in names {
            XCTAssertEqual(decoded(Array(name.utf8)), name)
        }
        for name in [":status", ":path", "content-length", "date", "te", "server", "accept-ranges", "last-modified"] {
            XCTAssertEqual(decoded(Array(name.utf8)), name)
        }
    }

    /// Every byte value at every position of every name: only the name's
    /// own byte finds it (no case folding: HTTP/2 names are lowercase, and
    /// anything else is built as decoded); longer and shorter names miss.
    func testAnyOtherBytesAreNotACommonName() {
        for name in CommonFieldNames.shared.names {
            let bytes = Array(name.utf8)
            for position in bytes.indices {
                for b in UInt8.min...UInt8.max where b != bytes[position] {
                    var changed = bytes
                    changed[position] = b
                    let found = decoded(changed)
                    XCTAssertTrue(found == nil || found.map { Array($0.utf8) } == changed, "\(name) byte \(b) at \(position)")
                }
            }
            XCTAssertNil(decoded(bytes + [UInt8(ascii: "x")]), name)
            XCTAssertNil(decoded(bytes + [0]), name)
            if bytes.count > 1, !CommonFieldNames.shared.names.contains(String(name.dropLast())) {
                XCTAssertNil(decoded(Array(bytes.dropLast())), name)
            }
            XCTAssertNil(decoded(Array(name.uppercased().utf8)), name)
        }
        XCTAssertNil(decoded([]))
        XCTAssertNil(decoded(Array("x-custom-header".utf8)))
        XCTAssertNil(decoded(Array(String(repeating: "a", count: 40).utf8)))
    }
}
