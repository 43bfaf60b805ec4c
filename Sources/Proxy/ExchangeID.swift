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
