import HTTP

/// An `HTTP2ConnectionLayer` driven by a script, with an `HTTP2Session` in
/// the opposite role as its peer, in memory and with no sockets: what the
/// layer writes goes to the peer (while `writable`), what the peer sends
/// goes to the layer, and each step the layer returns, but writes, is written
/// down as a short line.
final class HTTP2LayerScript {
    let layer: HTTP2ConnectionLayer
    let peer: HTTP2Session
    /// The channel takes writes (passed to `next(channelWritable:)`).
    var writable = true
    /// Body steps are reported consumed at once (a consumer that reads everything).
    var autoConsume = true
    /// Every event the peer reported.
    private(set) var peerEvents: [HTTP2Event] = []
    /// `.write` steps carried out, and their bytes.
    private(set) var writes = 0
    private(set) var writtenBytes = 0
    /// Body bytes delivered per stream.
    private(set) var delivered: [HTTP2StreamID: Int] = [:]
    /// Body bytes reported consumed per stream.
    private(set) var consumed: [HTTP2StreamID: Int] = [:]

    init(role: HTTP2Session.Role, configuration: HTTP2Configuration = HTTP2Configuration(),
         peer peerConfiguration: HTTP2Configuration = HTTP2Configuration(), streamWriteHighWater: Int = 64 * 1024) {
        layer = HTTP2ConnectionLayer(role: role, configuration: configuration, streamWriteHighWater: streamWriteHighWater)
        peer = HTTP2Session(role: role == .server ? .client : .server, configuration: peerConfiguration)
    }

    /// Runs the layer until it idles; its writes go to the peer.
    func run() -> [String] {
        var lines: [String] = []
        while true {
            let step = layer.next(channelWritable: writable)
            switch step {
            case .idle:
                return lines
            case .write(let bytes):
                writes += 1
                writtenBytes += bytes.count
                peerEvents += peer.receive(bytes)
            case .body(let id, let bytes):
                delivered[id, default: 0] += bytes.count
                if autoConsume { consumeDelivered(id) }
                lines.append(line(step))
            default:
                lines.append(line(step))
            }
        }
    }

    /// Reports every delivered byte of the stream not yet reported consumed.
    func consumeDelivered(_ id: HTTP2StreamID) {
        let bytes = (delivered[id] ?? 0) - (consumed[id] ?? 0)
        consumed[id] = delivered[id]
        layer.consumed(id, bytes: bytes)
    }

    /// The peer's output (all of it) goes to the layer, which then runs.
    func fromPeer() -> [String] {
        let bytes = peer.takeOutbound()
        peerEvents += peer.takeEvents()
        if !bytes.isEmpty { layer.receive(bytes) }
        return run()
    }

    /// Both ways until neither side has anything more to say.
    func settle() -> [String] {
        var lines = run()
        for _ in 0..<10_000 {
            let more = fromPeer()
            lines += more
            if more.isEmpty && !peer.wantsWrite { break }
        }
        return lines
    }

    func line(_ step: HTTP2ConnectionLayer.Step) -> String {
        switch step {
        case .idle: return "idle"
        case .write(let bytes): return "write \(bytes.count)"
        case .requestHead(let id, let head, _, let endsWithHead):
            return "head \(head.method) \(head.path) #\(id)" + (endsWithHead ? " ends" : "")
        case .requestRefused(let id, let head, let reason):
            return "refused \(head.map { "\($0.method) \($0.path) " } ?? "")#\(id): \(reason)"
        case .interimResponse(let id, let head, _): return "interim \(head.status) #\(id)"
        case .responseHead(let id, let head, _): return "response \(head.status) #\(id)"
        case .body(let id, let bytes): return "body #\(id) \(bytes.count)"
        case .end(let id, let trailers, let done):
            let fields = trailers.map { " trailers " + $0.map { "\($0.name)=\($0.value)" }.joined(separator: ",") } ?? ""
            return "end #\(id)" + fields + (done ? " done" : "")
        case .streamFailed(let id, let failure, let slotFreed):
            return "failed #\(id) " + describe(failure) + (slotFreed ? " slot" : "")
        case .goAwayReceived(let last, let code): return "goaway last \(last) \(code.name)"
        case .streamsMayWrite: return "may write"
        case .shutdownAndLinger: return "linger"
        case .close: return "close"
        case .abort: return "abort"
        }
    }

    private func describe(_ failure: HTTP2StreamFailure) -> String {
        switch failure {
        case .reset(let reset): return "reset \(reset.code.name) by \(reset.initiator == .peer ? "peer" : "us")"
        case .notProcessed(let last, let code): return "not processed (last \(last), \(code.name))"
        case .connection(let error): return "connection \(error)"
        case .peerClosed: return "peer closed"
        case .cancelled: return "cancelled"
        }
    }
}

extension Array where Element == String {
    /// The lines without `may write` (a flush round ending), for scripts about something else.
    var withoutFlushes: [String] { filter { $0 != "may write" } }
}
