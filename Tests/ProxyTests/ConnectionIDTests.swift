import XCTest
@testable import Proxy

final class ConnectionIDTests: XCTestCase {
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
}
