import XCTest
@testable import Proxy

/// The names of connections and exchanges, as every record writes them.
final class ConnectionIDTests: XCTestCase {
    private let numbers: [UInt64] = [0, 1, 7, 9, 10, 99, 100, 12_345, 1 << 32, UInt64(Int.max), UInt64.max - 1, .max]
    private let sequences: [Int] = [0, 1, 2, 9, 10, 1000, Int(Int32.max), .max, -1, -10, .min + 1, .min]

    func testConnectionNamesAreTheSideLetterAndTheNumber() {
        XCTAssertEqual(ConnectionID(.downstream, 7).description, "d7")
        XCTAssertEqual(ConnectionID(.upstream, 9).description, "u9")
        for number in numbers {
            XCTAssertEqual(ConnectionID(.downstream, number).description, "d" + String(number))
            XCTAssertEqual(ConnectionID(.upstream, number).description, "u" + String(number))
        }
    }

    func testExchangeNamesAreTheConnectionDotTheSequence() {
        XCTAssertEqual(ExchangeID(connection: ConnectionID(.downstream, 7), sequence: 2).description, "d7.2")
        XCTAssertEqual(ExchangeID(connection: ConnectionID(.downstream, 3), sequence: 0).description, "d3.0")
        for number in numbers {
            for sequence in sequences {
                for side in [ConnectionID.Side.downstream, .upstream] {
                    let id = ExchangeID(connection: ConnectionID(side, number), sequence: sequence)
                    XCTAssertEqual(id.description, side.rawValue + String(number) + "." + String(sequence))
                }
            }
        }
    }

    /// The custom hash keeps equal ids together and the sides apart.
    func testIDsKeyDictionariesBySideAndNumber() {
        var seen: [ExchangeID: String] = [:]
        for number in [0, 1, 2, UInt64.max >> 1, UInt64.max] {
            for side in [ConnectionID.Side.downstream, .upstream] {
                for sequence in 0..<3 {
                    seen[ExchangeID(connection: ConnectionID(side, number), sequence: sequence)] = "\(side)\(number).\(sequence)"
                }
            }
        }
        XCTAssertEqual(seen.count, 5 * 2 * 3)
        XCTAssertEqual(seen[ExchangeID(connection: ConnectionID(.upstream, 2), sequence: 1)], "upstream2.1")
        XCTAssertEqual(seen[ExchangeID(connection: ConnectionID(.downstream, 2), sequence: 1)], "downstream2.1")
        XCTAssertNil(seen[ExchangeID(connection: ConnectionID(.downstream, 3), sequence: 0)])
        XCTAssertEqual(ConnectionID(.upstream, 9).hashValue, ConnectionID(.upstream, 9).hashValue)
        XCTAssertNotEqual(ConnectionID(.upstream, 9), ConnectionID(.downstream, 9))
        XCTAssertEqual(ConnectionID(.downstream, 7).description, "d7")
    }

    /// A strict total order (what an `ExchangeTable` bisects by): client
    /// connections before upstream ones, then by number, then by sequence,
    /// so one connection's exchanges sort in the order they began.
    func testExchangeIDsOrderBySideThenNumberThenSequence() {
        var ids: [ExchangeID] = []
        for side in [ConnectionID.Side.downstream, .upstream] {
            for number in [0, 1, 2, UInt64.max] {
                for sequence in [0, 1, 2, Int.max] {
                    ids.append(ExchangeID(connection: ConnectionID(side, number), sequence: sequence))
                }
            }
        }
        // Built in ascending order: every earlier id is below every later one, and none below itself.
        for (i, left) in ids.enumerated() {
            XCTAssertFalse(left < left)
            for right in ids[(i + 1)...] {
                XCTAssertTrue(left < right, "\(left) < \(right)")
                XCTAssertFalse(right < left, "\(right) < \(left)")
            }
        }
        XCTAssertEqual(ids.shuffled().sorted(), ids)
    }

    /// The proxy's per-exchange table finds each exchange of a connection
    /// as they come and go, the oldest first in `keys`.
    func testAnExchangeTableKeepsAConnectionsExchangesInTheOrderTheyBegan() {
        let connection = ConnectionID(.downstream, 7)
        var table = ExchangeTable<String>()
        for sequence in 1...5 { table[ExchangeID(connection: connection, sequence: sequence)] = "r\(sequence)" }
        table[ExchangeID(connection: connection, sequence: 3)] = nil
        XCTAssertEqual(table.keys.map(\.sequence), [1, 2, 4, 5])
        XCTAssertEqual(table[ExchangeID(connection: connection, sequence: 4)], "r4")
        XCTAssertNil(table[ExchangeID(connection: ConnectionID(.upstream, 7), sequence: 4)])
        XCTAssertNil(table[ExchangeID(connection: connection, sequence: 3)])
    }
}
