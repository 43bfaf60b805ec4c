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

    public var description: String { side.rawValue + String(number) }

    /// Hashes the side as one bit with the number, not as the side's raw
    /// value: a raw-valued enum hashes its `String`, which cost more than the
    /// rest of a lookup, and exchange and connection ids key dictionaries
    /// that are read several times per request. Equal ids hash equally, and
    /// the two sides of one number feed the hasher different values.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(number &<< 1 | (side == .upstream ? 1 : 0))
    }
}
