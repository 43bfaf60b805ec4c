import Foundation
import HTTP
import Hashing
import XCTest

/// The per-field digests of a head: a sorted array that reads and encodes
/// like the dictionary it replaced.
final class FieldDigestsTests: XCTestCase {
    private let a = SHA256Digest.of(Array("a".utf8))
    private let b = SHA256Digest.of(Array("b".utf8))
    private let c = SHA256Digest.of(Array("c".utf8))

    func testKeepsNamesSortedAndOnceWhateverTheInsertionOrder() {
        var digests = FieldDigests(minimumCapacity: 4)
        digests["x-b"] = b
        digests["host"] = a
        digests["x-a"] = c
        digests["host"] = b
        XCTAssertEqual(digests.keys, ["host", "x-a", "x-b"])
        XCTAssertEqual(digests["host"], b)
        XCTAssertNil(digests["cookie"])
        digests["x-a"] = nil
        XCTAssertEqual(digests.map(\.key), ["host", "x-b"])
        XCTAssertEqual(digests.count, 2)
        XCTAssertEqual(digests, ["x-b": b, "host": b])
        XCTAssertNotEqual(digests, ["x-b": b, "host": a])
    }

    func testEncodesAndDecodesAsTheDictionary() throws {
        let dictionary = ["content-type": a, "accept": b, "x-z": c]
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        XCTAssertEqual(try encoder.encode(FieldDigests(dictionary)), try encoder.encode(dictionary))
        let decoded = try JSONDecoder().decode(FieldDigests.self, from: try encoder.encode(dictionary))
        XCTAssertEqual(decoded, FieldDigests(dictionary))
        XCTAssertEqual(decoded.dictionary, dictionary)
    }
}
