import HTTP
import XCTest

/// HTTP/2 on the playbook: a test's end that speaks HTTP/2 through an
/// `HTTP2Session` of its own (a client of the proxy, or an origin the proxy
/// dialled), over a `PlaybookPeer` with TLS and ALPN `h2`. `ProxyPlaybook.run()`
/// moves its frames both ways: the session's output goes out on the peer,
/// what the peer received goes into the session, and every event the
/// session reports is kept (`events`, `takeEvents()`) for the test to read.
/// Received DATA is reported consumed at once unless `consumesData` is off
/// (then the test calls `session.consumed` itself: a slow consumer).
public final class PlaybookHTTP2 {
    public let session: HTTP2Session
    public let peer: PlaybookPeer
    /// Received DATA is reported consumed at once (the windows reopen as it arrives).
    public var consumesData = true
    /// Every event since the last `takeEvents()`.
    public private(set) var events: [HTTP2Event] = []

    init(_ peer: PlaybookPeer, role: HTTP2Session.Role, configuration: HTTP2Configuration, consumesData: Bool) {
        self.peer = peer
        self.consumesData = consumesData
        session = HTTP2Session(role: role, configuration: configuration)
        _ = pump()
    }

    /// Takes the events reported since the last call.
    public func takeEvents() -> [HTTP2Event] {
        defer { events = [] }
        return events
    }

    /// Opens a stream with `head`; nil when the session refused it (the failure is the test's).
    @discardableResult
    public func request(_ head: HTTPRequestHead, body: [UInt8]? = nil,
                        file: StaticString = #filePath, line: UInt = #line) -> HTTP2StreamID? {
        do {
            let stream = try session.sendRequest(head, endStream: body == nil)
            if let body { try session.sendData(stream: stream, bytes: body, endStream: true) }
            _ = pump()
            return stream
        } catch {
            XCTFail("the stream could not open: \(error)", file: file, line: line)
            return nil
        }
    }

    /// Answers `stream` with `status` and `body` (ending it).
    public func respond(_ stream: HTTP2StreamID, status: HTTPStatus = .ok, body: [UInt8],
                        file: StaticString = #filePath, line: UInt = #line) {
        do {
            let head = HTTPResponseHead(status: status, fields: ["content-length": String(body.count)])
            try session.sendResponse(stream: stream, head: head, endStream: body.isEmpty)
            if !body.isEmpty { try session.sendData(stream: stream, bytes: body, endStream: true) }
            _ = pump()
        } catch {
            XCTFail("stream \(stream) could not be answered: \(error)", file: file, line: line)
        }
    }

    /// Sends bytes on the connection as they are, after what the session
    /// queued (a frame the session would not send, written by hand).
    public func sendRaw(_ bytes: [UInt8]) {
        _ = pump()
        peer.send(bytes)
    }

    /// A GOAWAY frame naming `lastStreamID` (RFC 9113 §6.8), by hand: the
    /// session sends GOAWAY only with the last stream it processed.
    public static func goAwayFrame(lastStreamID: HTTP2StreamID, code: UInt32 = 0) -> [UInt8] {
        let header: [UInt8] = [0, 0, 8, 0x7, 0, 0, 0, 0, 0]
        return header + bigEndian(UInt32(lastStreamID)) + bigEndian(code)
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    /// Moves frames both ways once; true when any moved.
    func pump() -> Bool {
        var moved = false
        let incoming = peer.read()
        if !incoming.isEmpty {
            note(session.receive(incoming))
            moved = true
        }
        let outgoing = session.takeOutbound()
        note(session.takeEvents())
        if !outgoing.isEmpty {
            peer.send(outgoing)
            moved = true
        }
        return moved
    }

    private func note(_ batch: [HTTP2Event]) {
        for event in batch {
            if consumesData, case .data(let stream, let bytes) = event { session.consumed(stream: stream, bytes: bytes.count) }
        }
        events += batch
    }
}

extension ProxyPlaybook {
    /// A client that connects with TLS for `serverName`, offering only `h2`,
    /// and speaks HTTP/2 once the handshake is done.
    public func connectHTTP2Client(tls serverName: String, configuration: HTTP2Configuration = HTTP2Configuration(),
                                   consumesData: Bool = true) throws -> PlaybookHTTP2 {
        let peer = try connectClient(tls: serverName, alpn: ["h2"])
        return speakHTTP2(peer, role: .client, configuration: configuration, consumesData: consumesData)
    }

    /// Answers the proxy's oldest dial (to `host:port`) as an HTTP/2 origin over TLS (ALPN `h2`).
    public func acceptHTTP2Dial(host: String, port: UInt16, configuration: HTTP2Configuration = HTTP2Configuration(),
                                consumesData: Bool = true,
                                file: StaticString = #filePath, line: UInt = #line) throws -> PlaybookHTTP2 {
        let peer = try acceptDial(host: host, port: port, tls: true, alpn: ["h2"], file: file, line: line)
        return speakHTTP2(peer, role: .server, configuration: configuration, consumesData: consumesData)
    }

    /// `peer` speaks HTTP/2 in `role` from now on; `run()` moves its frames
    /// (`consumesData`: see `PlaybookHTTP2.consumesData`).
    public func speakHTTP2(_ peer: PlaybookPeer, role: HTTP2Session.Role,
                           configuration: HTTP2Configuration = HTTP2Configuration(),
                           consumesData: Bool = true) -> PlaybookHTTP2 {
        let end = PlaybookHTTP2(peer, role: role, configuration: configuration, consumesData: consumesData)
        adopt(end)
        run()
        return end
    }
}

extension Array where Element == HTTP2Event {
    /// The final response heads' statuses per stream.
    public var statuses: [HTTP2StreamID: HTTPStatus] {
        var found: [HTTP2StreamID: HTTPStatus] = [:]
        for case .responseHead(let stream, let head, _) in self { found[stream] = head.status }
        return found
    }

    /// The DATA received per stream, joined.
    public var bodies: [HTTP2StreamID: [UInt8]] {
        var found: [HTTP2StreamID: [UInt8]] = [:]
        for case .data(let stream, let bytes) in self { found[stream, default: []] += bytes }
        return found
    }

    /// The streams that ended (END_STREAM from the peer).
    public var endedStreams: Set<HTTP2StreamID> {
        var found: Set<HTTP2StreamID> = []
        for case .streamEnded(let stream, _) in self { found.insert(stream) }
        return found
    }

    /// The streams reset, with how.
    public var resets: [HTTP2StreamReset] {
        compactMap { if case .streamReset(let reset) = $0 { return reset } else { return nil } }
    }

    /// The GOAWAY frames received: the last stream each names, with its code.
    public var goAways: [(lastStreamID: HTTP2StreamID, code: HTTP2ErrorCode)] {
        compactMap { if case .goAwayReceived(let last, let code, _) = $0 { return (last, code) } else { return nil } }
    }

    /// The request heads received (server role), with their streams, in order.
    public var requests: [(stream: HTTP2StreamID, head: HTTPRequestHead)] {
        compactMap { if case .requestHead(let stream, let head, _) = $0 { return (stream, head) } else { return nil } }
    }
}
