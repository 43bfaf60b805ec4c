/// Names one connection of a proxy run, on either side, unique within the
/// process (and so within its recording): `d7` is a client connection, `u9`
/// an upstream one; the number is the transport channel's id.
public struct ConnectionID: Hashable, Sendable, CustomStringConvertible {
    /// Which side of the proxy the connection is on.
    public enum Side: String, Hashable, Sendable {
        /// From a client to the proxy.
        case downstream = "d"
        /// From the proxy to a server.
        case upstream = "u"
    }

    public let side: Side
    public let number: UInt64

    public init(_ side: Side, _ number: UInt64) {
        self.side = side
        self.number = number
    }

    /// `d7`, `u9`. Built from its bytes in one go (the names are written
    /// into every record, two or three per exchange): no interpolation, no
    /// concatenation of two strings.
    public var description: String { ConnectionID.text(self, sequence: nil) }

    /// `d7`, or `d7.2` with a sequence (an `ExchangeID`'s name), as a string
    /// made once from its ASCII bytes.
    static func text(_ id: ConnectionID, sequence: Int?) -> String {
        // Side, up to 20 digits, dot, a sign and up to 19 digits.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 48) { buffer in
            var end = buffer.count
            if let sequence {
                end = writeDecimal(sequence.magnitude, endingAt: end, in: buffer)
                if sequence < 0 {
                    end -= 1
                    buffer[end] = UInt8(ascii: "-")
                }
                end -= 1
                buffer[end] = UInt8(ascii: ".")
            }
            end = writeDecimal(id.number, endingAt: end, in: buffer)
            end -= 1
            buffer[end] = id.side.rawValue.utf8.first!
            return String(decoding: UnsafeMutableBufferPointer(rebasing: buffer[end...]), as: UTF8.self)
        }
    }

    /// Stores the decimal digits of `value` just before `end`; returns where they start.
    private static func writeDecimal<Value: UnsignedInteger>(_ value: Value, endingAt end: Int,
                                                             in buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        var value = UInt64(value)
        var end = end
        repeat {
            end -= 1
            buffer[end] = UInt8(ascii: "0") + UInt8(value % 10)
            value /= 10
        } while value != 0
        return end
    }

    /// Hashes the side as one bit with the number, not as the side's raw
    /// `String` (Docs/performance.md#head-handling). Equal ids hash equally,
    /// and the two sides of one number feed the hasher different values.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(number &<< 1 | (side == .upstream ? 1 : 0))
    }
}
