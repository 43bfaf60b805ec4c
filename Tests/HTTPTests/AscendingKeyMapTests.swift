@testable import HTTP
import XCTest

/// The table the HTTP/2 session, the connection layer and the engines keep
/// per stream (`HTTP2StreamMap`), and the proxy per exchange: kept sorted by
/// key whatever the order of insertions and removals, and agreeing with a
/// dictionary on every lookup.
final class AscendingKeyMapTests: XCTestCase {
    func testAscendingInsertionsAppendAndLookupsFindEach() {
        var map = HTTP2StreamMap<String>()
        for id: HTTP2StreamID in stride(from: 1, through: 21, by: 2) { map[id] = "s\(id)" }
        XCTAssertEqual(map.keys, Array(stride(from: 1, through: 21, by: 2)))
        XCTAssertEqual(map.count, 11)
        XCTAssertEqual(map[7], "s7")
        XCTAssertNil(map[8])
        XCTAssertNil(map[23])
        XCTAssertNil(map[0])
        XCTAssertEqual(map.index(forKey: 21), 10)
    }

    func testUpdateReplacesAndRemoveKeepsOrder() {
        var map = HTTP2StreamMap<Int>()
        XCTAssertNil(map.updateValue(1, forKey: 5))
        XCTAssertNil(map.updateValue(2, forKey: 1))
        XCTAssertNil(map.updateValue(3, forKey: 3))
        XCTAssertEqual(map.updateValue(4, forKey: 3), 3)
        XCTAssertEqual(map.keys, [1, 3, 5])
        XCTAssertEqual(map.values, [2, 4, 1])
        XCTAssertEqual(map.removeValue(forKey: 3), 4)
        XCTAssertNil(map.removeValue(forKey: 3))
        map[1] = nil
        XCTAssertEqual(map.keys, [5])
        XCTAssertEqual(map.values, [1])
        map[5] = nil
        XCTAssertTrue(map.isEmpty)
    }

    func testValuesChangeInPlaceThroughTheirIndex() {
        var map = HTTP2StreamMap<[Int]>()
        map[3] = [1]
        map[9] = []
        let index = map.index(forKey: 9)!
        map.values[index].append(7)
        XCTAssertEqual(map[9], [7])
        XCTAssertEqual(map[3], [1])
    }

    /// Any sequence of sets and removals leaves the same contents as a dictionary, in ascending id order.
    func testAgreesWithADictionaryUnderRandomChanges() {
        var generator = SystemRandomNumberGenerator()
        var map = HTTP2StreamMap<Int>()
        var reference: [HTTP2StreamID: Int] = [:]
        for step in 0..<2_000 {
            let id = HTTP2StreamID.random(in: 0..<64, using: &generator)
            if Bool.random(using: &generator) {
                XCTAssertEqual(map.updateValue(step, forKey: id), reference.updateValue(step, forKey: id))
            } else {
                XCTAssertEqual(map.removeValue(forKey: id), reference.removeValue(forKey: id))
            }
            XCTAssertEqual(map[id], reference[id])
        }
        XCTAssertEqual(map.keys, reference.keys.sorted())
        XCTAssertEqual(map.values, reference.keys.sorted().map { reference[$0]! })
    }

    /// The first key into an empty map and a key out of order both land in
    /// place, and `insert` replaces the value of a key already there.
    func testInsertAppendsIntoAnEmptyMapAndPlacesAKeyOutOfOrder() {
        var map = AscendingKeyMap<Int, String>()
        map.insert("b", forKey: 20)
        map.insert("c", forKey: 30)
        map.insert("a", forKey: 10)
        map.insert("B", forKey: 20)
        XCTAssertEqual(map.keys, [10, 20, 30])
        XCTAssertEqual(map.values, ["a", "B", "c"])
    }

    /// Emptied keeping the keys' storage, the map holds no value but still
    /// has room for a key; emptied outright, it holds no storage at all.
    func testRemoveAllKeepsOnlyWhatItIsAskedToKeep() {
        var map = AscendingKeyMap<Int, [UInt8]>()
        map[1] = [1, 2, 3]
        map.removeAll(keepingKeyCapacity: true)
        XCTAssertTrue(map.isEmpty)
        XCTAssertGreaterThanOrEqual(map.keys.capacity, 1)
        XCTAssertEqual(map.values.capacity, 0)
        map[2] = [4]
        XCTAssertEqual(map.keys, [2])
        map.removeAll()
        XCTAssertEqual(map.keys.capacity, 0)
        XCTAssertEqual(map.values.capacity, 0)
    }
}
