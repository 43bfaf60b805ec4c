import Codecs
import Evidence
import Foundation
import XCTest

/// Clock instants are whole microseconds, which is what lets a recording
/// line write them as exact decimals (`JSONWriter.double`'s thousandths path).
final class TimestampTests: XCTestCase {
    func testClockInstantsAreWholeMicrosecondsAndSurviveALine() throws {
        for offset in [0.0, 0.000_000_4, 0.000_000_6, 0.123_456_789, 12_345.678_901_234] {
            let date = Date(timeIntervalSince1970: 1_796_131_061 + offset)
            let stamp = Timestamp(date)
            let micros = stamp.millisecondsSince1970 * 1000
            XCTAssertEqual(micros, micros.rounded(), "\(offset): not a whole microsecond")
            XCTAssertLessThanOrEqual(abs(stamp.date.timeIntervalSince(date)), 0.000_000_5 + 1e-9)
            let decoded = try JSONDecoder().decode(Timestamp.self, from: JSONEncoder().encode(stamp))
            XCTAssertEqual(decoded, stamp)
        }
        XCTAssertEqual(Timestamp(Date(timeIntervalSince1970: 1.000_000_6)).millisecondsSince1970, 1000.001)
    }
}
