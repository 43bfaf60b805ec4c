import Synchronization

/// Names one connection of a proxy run, on either side, unique within the
/// run (and so within its recording): `d7` is the seventh client connection,
/// `u3` the third upstream connection.
public struct ConnectionID: Hashable, Sendable, Comparable, CustomStringConvertible {
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

    public static func < (a: ConnectionID, b: ConnectionID) -> Bool {
        (a.side.rawValue, a.number) < (b.side.rawValue, b.number)
    }
}

/// Hands out connection ids, counting each side from 1, unique within one
/// proxy run whichever loop asks. Safe from any thread (atomics).
public final class ConnectionNumbering: Sendable {
    private let downstream = Atomic<UInt64>(1)
    private let upstream = Atomic<UInt64>(1)

    public init() {}

    /// The next id of `side`.
    public func next(_ side: ConnectionID.Side) -> ConnectionID {
        switch side {
        case .downstream: return ConnectionID(side, downstream.wrappingAdd(1, ordering: .relaxed).oldValue)
        case .upstream: return ConnectionID(side, upstream.wrappingAdd(1, ordering: .relaxed).oldValue)
        }
    }
}
