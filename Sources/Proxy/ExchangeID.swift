import HTTP

/// Names one exchange: the client connection it arrived on and its place
/// there (`d7.2`: the second request on client connection 7, whatever its
/// HTTP/2 stream id). Sequence 0 is kept for what happens on a connection
/// outside any request (a failed TLS handshake, a passthrough tunnel); the
/// driver numbers requests from 1.
public struct ExchangeID: Hashable, Sendable, CustomStringConvertible {
    public let connection: ConnectionID
    public let sequence: Int

    public init(connection: ConnectionID, sequence: Int) {
        self.connection = connection
        self.sequence = sequence
    }

    public var description: String { ConnectionID.text(connection, sequence: sequence) }
}

/// By connection (client side first, then by number), then by sequence: on
/// one connection, the order its exchanges began (the driver numbers them
/// as they arrive), which keeps an `ExchangeTable`'s inserts appends.
extension ExchangeID: Comparable {
    public static func < (lhs: ExchangeID, rhs: ExchangeID) -> Bool {
        if lhs.connection.side != rhs.connection.side { return lhs.connection.side == .downstream }
        if lhs.connection.number != rhs.connection.number { return lhs.connection.number < rhs.connection.number }
        return lhs.sequence < rhs.sequence
    }
}

/// The exchanges in progress on one client connection, each with a value,
/// in the order they began: compared, not hashed, per lookup
/// (`AscendingKeyMap`; a proxied request looks its exchange up about
/// eighteen times between the driver, the layer and the deadline).
typealias ExchangeTable<Value> = AscendingKeyMap<ExchangeID, Value>
