import Evidence
import Hashing
import HTTP

/// A running count and SHA-256 of one relayed byte stream, in order.
/// A value owned by its `TunnelRelay`.
struct RelayTally {
    private(set) var byteCount = 0
    private var hash = SHA256()

    mutating func add(_ bytes: [UInt8]) {
        byteCount += bytes.count
        hash.update(bytes)
    }

    /// The count and digest so far (the running hash goes on unchanged).
    var recorded: RelayedStreams.Stream {
        var copy = hash
        return RelayedStreams.Stream(bytes: byteCount, sha256: SHA256Digest(bytes: copy.finalize())!)
    }
}

/// What a relay carried, counted where it was read and where it was written:
/// the client leg read `fromClient` and was written `toClient`; the upstream
/// leg was written `toServer` and read `fromServer`. They differ only when a
/// side closed with bytes still to pass on.
struct RelayTraffic {
    var fromClient = RelayTally()
    var toServer = RelayTally()
    var fromServer = RelayTally()
    var toClient = RelayTally()

    /// The client leg's streams.
    var downstream: RelayedStreams {
        RelayedStreams(clientToServer: fromClient.recorded, serverToClient: toClient.recorded)
    }

    /// The upstream leg's streams.
    var upstream: RelayedStreams {
        RelayedStreams(clientToServer: toServer.recorded, serverToClient: fromServer.recorded)
    }
}
