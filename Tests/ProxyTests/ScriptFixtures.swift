import Evidence
import HTTP
import TLS
import XCTest
@testable import Proxy

/// Values the scripted (no socket) tests share: a fixed clock, heads with
/// their HTTP/1.1 wire forms, and helpers that pull records and parts out of
/// command lists.
enum Script {
    static let clock: @Sendable () -> Timestamp = { Timestamp(millisecondsSince1970: 1_700_000_000_000) }
    static let settings = RecordingSettings(tap: "test-tap", clock: clock)
    static let client = ConnectionID(.downstream, 1)
    static let upstreamConnection = ConnectionID(.upstream, 1)
    static let origin = UpstreamTarget(scheme: .https, host: "origin.test", port: 8443)!

    /// The client's TLS session: the proxy intercepted it.
    static let clientTLS = TLSConnectionInfo(role: .server, version: "TLSv1.3", cipher: "TLS_AES_128_GCM_SHA256",
                                             alpn: "http/1.1", offeredALPN: ["h2", "http/1.1"],
                                             serverName: "origin.test", peerCertificate: nil,
                                             verifyResult: .noPeerCertificate, sessionReused: false)

    static func exchange(_ sequence: Int) -> ExchangeID { ExchangeID(connection: client, sequence: sequence) }

    static func get(_ path: String = "/", host: String = "origin.test:8443",
                    extra: [(String, String)] = []) -> HTTPRequestHead {
        var fields: HTTPFields = ["Host": host, "User-Agent": "script"]
        for (name, value) in extra { fields.append(name, value) }
        return HTTPRequestHead(method: "GET", path: path, fields: fields)
    }

    static func post(_ path: String = "/upload", length: Int) -> HTTPRequestHead {
        HTTPRequestHead(method: "POST", path: path,
                        fields: ["Host": "origin.test:8443", "Content-Length": String(length)])
    }

    static func ok(length: Int) -> HTTPResponseHead {
        HTTPResponseHead(status: 200, fields: ["Content-Length": String(length), "Content-Type": "text/plain"])
    }

    /// The head as the flow sends it to `target` (origin form, its scheme, no hop-by-hop fields).
    static func shaped(_ head: HTTPRequestHead, for target: UpstreamTarget = origin) -> HTTPRequestHead {
        HopByHop.shapeRequest(head, for: target)
    }

    /// The HTTP/1.1 wire form a parser would report for a request head (an
    /// HTTP/2 head: the field list its session sends).
    static func wire(_ head: HTTPRequestHead) -> HeadDigest.WireForm {
        if head.version == .http2 { return .http2Sent(request: head) }
        var serializer = HTTP1Serializer()
        let written = try! serializer.writeRequestHead(head)
        return .http1(head: Array(written.rawHead))
    }

    /// The HTTP/1.1 wire form of a response head (an HTTP/2 head: its field list).
    static func wire(_ head: HTTPResponseHead) -> HeadDigest.WireForm {
        if head.version == .http2 { return .http2Sent(response: head) }
        var serializer = HTTP1Serializer()
        let written = try! serializer.writeResponseHead(head)
        return .http1(head: Array(written.rawHead))
    }

    /// Reports each response head and end in `commands` back to `layer` as
    /// sent, as the driver does right after sending; returns all the commands.
    static func reportingSent(_ layer: inout DownstreamLayer, _ commands: [DownstreamCommand]) -> [DownstreamCommand] {
        var all = commands
        for command in commands {
            switch command {
            case .exchange(let exchange, .sendResponse(.head(let head))):
                all += layer.handle(.exchange(exchange, .responseHeadSent(head, wire: wire(head))))
            case .exchange(let exchange, .sendResponse(.end(let trailers))):
                all += layer.handle(.exchange(exchange, .responseEndSent(trailers: trailers)))
            default: break
            }
        }
        return all
    }

    static func bytes(_ count: Int, seed: UInt8 = 7) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
    }
}

/// A flow driven by a script: each step feeds one event and keeps the
/// commands, answering `.sendRequest(.head)`/`.sendResponse(.head)` with the
/// wire form a codec would report, as the driver does.
struct FlowScript {
    var flow: ExchangeFlow
    /// Every command so far, in order.
    var log: [ExchangeCommand] = []

    init(target: UpstreamTarget? = Script.origin, hooks: [any ExchangeHook] = [],
         settings: RecordingSettings = Script.settings, streamID: Int? = nil, framing: HTTP1Framing = .none) {
        flow = ExchangeFlow(id: Script.exchange(1), target: target,
                            client: .init(connection: Script.client, streamID: streamID, tls: Script.clientTLS,
                                          bodyFraming: framing),
                            hooks: hooks, settings: settings)
    }

    @discardableResult
    mutating func start(_ head: HTTPRequestHead) -> [ExchangeCommand] {
        let commands = flow.start(head, wire: Script.wire(head))
        return absorb(commands)
    }

    @discardableResult
    mutating func send(_ event: ExchangeEvent) -> [ExchangeCommand] {
        absorb(flow.handle(event))
    }

    /// The upstream stream opens with the head the flow asked to send (as a pool would report it).
    @discardableResult
    mutating func open(streamID: Int? = nil) -> [ExchangeCommand] {
        guard let head = openedHead else { return [] }
        return send(.upstreamOpened(connection: Script.upstreamConnection, tls: nil, streamID: streamID, sent: head,
                                    wire: Script.wire(head)))
    }

    /// The head of the last `.openUpstream`.
    var openedHead: HTTPRequestHead? {
        for case .openUpstream(_, let head, _) in log.reversed() { return head }
        return nil
    }

    /// Keeps the commands and reports sent response heads back, as a driver does right after sending.
    private mutating func absorb(_ commands: [ExchangeCommand]) -> [ExchangeCommand] {
        log += commands
        for command in commands {
            switch command {
            case .sendResponse(.head(let head)): log += flow.handle(.responseHeadSent(head, wire: Script.wire(head)))
            case .sendResponse(.end(let trailers)): log += flow.handle(.responseEndSent(trailers: trailers))
            default: break
            }
        }
        return commands
    }

    /// The record, once finished.
    var record: ExchangeRecord? {
        for case .finished(let record) in log { return record }
        return nil
    }

    /// Body bytes sent upstream, concatenated.
    var sentUpstream: [UInt8] {
        log.flatMap { command -> [UInt8] in
            if case .sendRequestBody(let chunk) = command { return chunk }
            return []
        }
    }

    /// Body bytes sent to the client, concatenated.
    var sentToClient: [UInt8] {
        log.flatMap { command -> [UInt8] in
            if case .sendResponse(.body(let chunk)) = command { return chunk }
            return []
        }
    }

    /// The response heads sent to the client.
    var clientHeads: [HTTPResponseHead] {
        log.compactMap { command in
            if case .sendResponse(.head(let head)) = command { return head }
            return nil
        }
    }
}
