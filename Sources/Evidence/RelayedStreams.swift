import HTTP
import Hashing

/// The two byte streams of a connection that switched protocols (HTTP/1.1
/// `Upgrade` answered `101 Switching Protocols`), as they crossed one leg
/// after the 101: the proxy relays them untouched, so each leg's counts and
/// digests say what that leg carried, and `verify` compares them across taps.
public struct RelayedStreams: Codable, Hashable, Sendable {
    /// One direction: how many bytes crossed the leg and their SHA-256,
    /// over the whole stream in order.
    public struct Stream: Codable, Hashable, Sendable {
        public var bytes: Int
        public var sha256: SHA256Digest

        public init(bytes: Int, sha256: SHA256Digest) {
            self.bytes = bytes
            self.sha256 = sha256
        }
    }

    /// What the client sent towards the server.
    public var clientToServer: Stream
    /// What the server sent towards the client.
    public var serverToClient: Stream

    public init(clientToServer: Stream, serverToClient: Stream) {
        self.clientToServer = clientToServer
        self.serverToClient = serverToClient
    }
}
