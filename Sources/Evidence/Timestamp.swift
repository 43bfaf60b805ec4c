import Codecs
import Foundation

/// A wall-clock instant, written in records as milliseconds since the Unix
/// epoch (a JSON number with a fractional part).
///
/// Instants taken from the clock (`init(_:)`, `now()`) are whole
/// microseconds, so their milliseconds have at most three decimals and a
/// recording line writes them exactly without general floating-point
/// formatting (`JSONWriter.double`); a value decoded or made from raw
/// milliseconds is kept as it is.
public struct Timestamp: Codable, Hashable, Sendable, Comparable {
    public var millisecondsSince1970: Double

    public init(millisecondsSince1970: Double) {
        self.millisecondsSince1970 = millisecondsSince1970
    }

    /// `date` to the nearest microsecond.
    public init(_ date: Date) {
        millisecondsSince1970 = (date.timeIntervalSince1970 * 1_000_000).rounded() / 1000
    }

    /// The current wall-clock time.
    public static func now() -> Timestamp { Timestamp(Date()) }

    public var date: Date { Date(timeIntervalSince1970: millisecondsSince1970 / 1000) }

    /// Milliseconds from `self` to `later` (negative when `later` is earlier).
    public func milliseconds(until later: Timestamp) -> Double {
        later.millisecondsSince1970 - millisecondsSince1970
    }

    public static func < (a: Timestamp, b: Timestamp) -> Bool {
        a.millisecondsSince1970 < b.millisecondsSince1970
    }

    public init(from decoder: Decoder) throws {
        millisecondsSince1970 = try decoder.singleValueContainer().decode(Double.self)
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(millisecondsSince1970)
    }
}
