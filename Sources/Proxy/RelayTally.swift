import Evidence
import Hashing
import HTTP

/// A running count and digest of one relayed byte stream, in order, taken
/// with the recording's digest function. A value owned by its `TunnelRelay`.
struct RelayTally {
    private(set) var byteCount = 0
    private var running: RunningDigest

    init(digests: DigestFunction) {
        running = digests.begin()
    }

    mutating func add(_ bytes: [UInt8]) {
        byteCount += bytes.count
        running.update(bytes)
    }

    /// The count and digest so far (the running digest goes on unchanged).
    var recorded: RelayedStreams.Stream {
        var copy = running
        return RelayedStreams.Stream(bytes: byteCount, sha256: .finishing(&copy))
    }
}

/// What a relay carried, counted where it was read and where it was written:
/// the client leg read `fromClient` and was written `toClient`; the upstream
/// leg was written `toServer` and read `fromServer`. They differ only when a
/// side closed with bytes still to pass on.
struct RelayTraffic {
    var fromClient: RelayTally
    var toServer: RelayTally
    var fromServer: RelayTally
    var toClient: RelayTally

    init(digests: DigestFunction) {
        fromClient = RelayTally(digests: digests)
        toServer = RelayTally(digests: digests)
        fromServer = RelayTally(digests: digests)
        toClient = RelayTally(digests: digests)
    }

    /// The client leg's streams.
    var downstream: RelayedStreams {
        RelayedStreams(clientToServer: fromClient.recorded, serverToClient: toClient.recorded)
    }

    /// The upstream leg's streams.
    var upstream: RelayedStreams {
        RelayedStreams(clientToServer: toServer.recorded, serverToClient: fromServer.recorded)
    }
}
