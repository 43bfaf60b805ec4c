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
}
