import HTTP

/// The HTTP/2 session in both roles, driven as the proxy drives it: bytes
/// in, events out, answers sent, consumption reported, frames taken. Beyond
/// "no crash", each run checks the per-stream order `HTTP2Event` documents
/// (a head, then data, then the end; nothing after an end or a reset) and
/// that a connection error is reported once.
enum HTTP2SessionFuzzing {
    /// The client connection preface (RFC 9113 §3.4) the server input follows.
    static let clientPreface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    static func server(_ bytes: [UInt8]) {
        let input = FuzzInput(bytes, controlBytes: 1)
        let session = HTTP2Session(role: .server, configuration: configuration)
        var check = StreamOrder()
        _ = session.takeOutbound()
        for piece in [clientPreface] + input.pieces(seed: input.control[0]) {
            for event in session.receive(piece) {
                check.observe(event)
                answer(event, on: session)
            }
            _ = session.takeOutbound()
        }
        for event in session.takeEvents() { check.observe(event) }
    }

    static func client(_ bytes: [UInt8]) {
        let input = FuzzInput(bytes, controlBytes: 1)
        let session = HTTP2Session(role: .client, configuration: configuration)
        var check = StreamOrder()
        let get = HTTPRequestHead(method: "GET", scheme: "https", authority: "origin.test", path: "/")
        let post = HTTPRequestHead(method: "POST", scheme: "https", authority: "origin.test", path: "/token")
        do {
            _ = try session.sendRequest(get, endStream: true)
            let stream = try session.sendRequest(post, endStream: false)
            try session.sendData(stream: stream, bytes: Array("grant_type=x".utf8), endStream: true)
        } catch {
            preconditionFailure("a fresh client session refused a request: \(error)")
        }
        _ = session.takeOutbound()
        for piece in input.pieces(seed: input.control[0]) {
            for event in session.receive(piece) {
                check.observe(event)
                if case .data(let stream, let chunk) = event { session.consumed(stream: stream, bytes: chunk.count) }
            }
            _ = session.takeOutbound()
        }
        for event in session.takeEvents() { check.observe(event) }
    }

    /// Small limits, so the fuzzer reaches them.
    private static let configuration = HTTP2Configuration(maxConcurrentStreams: 8, maxHeaderListSize: 4096,
                                                          maxOutboundAcks: 16, rapidResetLimit: 4, rapidResetWindow: 16)

    /// The server's side: a response to each request, echoing its body.
    private static func answer(_ event: HTTP2Event, on session: HTTP2Session) {
        switch event {
        case .requestHead(let stream, let head, _):
            let endStream = head.method == "HEAD"
            try? session.sendResponse(stream: stream, head: HTTPResponseHead(status: 200), endStream: endStream)
        case .data(let stream, let chunk):
            session.consumed(stream: stream, bytes: chunk.count)
            try? session.sendData(stream: stream, bytes: chunk, endStream: false)
        case .streamEnded(let stream, _):
            try? session.sendData(stream: stream, bytes: [], endStream: true)
        default:
            break
        }
    }

    /// The order `HTTP2Event` promises, per stream. A reset may follow the
    /// peer's end of stream (our side may still be sending), never another reset.
    private struct StreamOrder {
        private enum State { case head, body, ended, reset }
        private var streams: [HTTP2StreamID: State] = [:]
        private var connectionFailed = false

        mutating func observe(_ event: HTTP2Event) {
            switch event {
            case .requestHead(let stream, _, _), .responseHead(let stream, _, _):
                precondition(streams[stream, default: .head] == .head, "a second head on stream \(stream)")
                streams[stream] = .body
            case .interimResponse(let stream, _, _):
                precondition(streams[stream, default: .head] == .head, "an interim head after the final one on \(stream)")
            case .requestRefused(let stream, _, _):
                precondition(streams[stream, default: .head] == .head, "a refusal after the head on stream \(stream)")
            case .data(let stream, let chunk):
                precondition(streams[stream] == .body, "data on stream \(stream) outside its body")
                precondition(!chunk.isEmpty, "an empty data event")
            case .streamEnded(let stream, _):
                precondition(streams[stream] == .body, "stream \(stream) ended without a head or twice")
                streams[stream] = .ended
            case .streamReset(let reset):
                precondition(streams[reset.stream] != .reset, "stream \(reset.stream) reset twice")
                streams[reset.stream] = .reset
            case .connectionError:
                precondition(!connectionFailed, "a connection error reported twice")
                connectionFailed = true
            case .goAwayReceived, .settingsAcknowledged, .pingAcknowledged:
                break
            }
        }
    }
}
