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

    static func bytes(_ count: Int, seed: UInt8 = 7) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
    }
}

/// Carries out scripted commands: logs each one, in order, and answers it
/// as a driver would when every send goes through — a response head comes
/// back with the wire form a codec would report, the end with the trailers
/// asked for — unless the script says otherwise (`clientFull`,
/// `upstreamFull`, `failClient`, `failUpstream`).
final class ScriptActions: DownstreamActions {
    /// Every command so far, in order (an exchange's as `.exchange`).
    var log: [DownstreamCommand] = []
    /// Body sends to the client come back `.full` (the client stopped reading).
    var clientFull = false
    /// Body sends upstream come back `.full`.
    var upstreamFull = false
    /// Sends to the client fail with this.
    var failClient: ProxyError?
    /// Sends upstream fail with this.
    var failUpstream: ProxyError?
    /// The `100 Continue` the client stream owes, sent (once) by `.sendContinueIfOwed`.
    var owedContinue: HTTPResponseHead?

    func perform(_ command: DownstreamCommand) -> CommandOutcome {
        if case .exchange(let exchange, let command) = command { return perform(command, for: exchange) }
        log.append(command)
        return .done
    }

    func perform(_ command: ExchangeCommand, for exchange: ExchangeID) -> CommandOutcome {
        log.append(.exchange(exchange, command))
        switch command {
        case .sendResponse(let part):
            if let failClient { return .failed(failClient) }
            switch part {
            case .head(let head): return .headSent(head, wire: Script.wire(head))
            case .body: return clientFull ? .full : .done
            case .end(let trailers): return .endSent(trailers: trailers)
            }
        case .sendRequestBody:
            if let failUpstream { return .failed(failUpstream) }
            return upstreamFull ? .full : .done
        case .endRequest:
            if let failUpstream { return .failed(failUpstream) }
            return .done
        case .sendContinueIfOwed:
            guard let head = owedContinue else { return .done }
            owedContinue = nil
            return .headSent(head, wire: Script.wire(head))
        default:
            return .done
        }
    }

    /// The commands logged since `count`.
    func commands(since count: Int) -> [DownstreamCommand] { Array(log[count...]) }
}

extension DownstreamLayer {
    /// The commands for a connection just accepted, as a script logs them.
    func start() -> [DownstreamCommand] {
        let io = ScriptActions()
        start(io)
        return io.log
    }

    /// Handles `event` with every command going through; returns the commands, in order.
    mutating func handle(_ event: DownstreamEvent) -> [DownstreamCommand] {
        handle(event, ScriptActions())
    }

    /// Handles `event`, its commands carried out by `io`; returns the ones this event issued.
    mutating func handle(_ event: DownstreamEvent, _ io: ScriptActions) -> [DownstreamCommand] {
        let before = io.log.count
        handle(event, io as any DownstreamActions)
        return io.commands(since: before)
    }
}

/// A flow driven by a script: each step feeds one event and keeps the
/// commands, each answered by `io` (`ScriptActions`) as the driver would.
struct FlowScript {
    var flow: ExchangeFlow
    /// Carries out the commands; set its fields to make sends fill up or fail.
    let io = ScriptActions()
    /// Every command so far, in order, the record last as `.finished`.
    var log: [ExchangeCommand] = []

    init(target: UpstreamTarget? = Script.origin, hooks: [any ExchangeHook] = [],
         settings: RecordingSettings = Script.settings, streamID: Int? = nil, framing: HTTP1Framing = .none,
         expectsContinue: Bool = false, headMemos: HeadDigestMemos? = nil) {
        flow = ExchangeFlow(id: Script.exchange(1), target: target,
                            client: .init(connection: Script.client, streamID: streamID, tls: TLSDetails(Script.clientTLS),
                                          bodyFraming: framing, expectsContinue: expectsContinue),
                            hooks: hooks, settings: settings, headMemos: headMemos)
    }

    @discardableResult
    mutating func start(_ head: HTTPRequestHead) -> [ExchangeCommand] {
        step { flow, io in flow.start(head, wire: Script.wire(head), io) }
    }

    @discardableResult
    mutating func send(_ event: ExchangeEvent) -> [ExchangeCommand] {
        step { flow, io in flow.handle(event, io) }
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

    /// Runs one step of the flow; keeps and returns its commands, the record (if it finished) last.
    private mutating func step(_ run: (inout ExchangeFlow, ScriptActions) -> ExchangeRecord?) -> [ExchangeCommand] {
        let before = io.log.count
        let record = run(&flow, io)
        var commands = io.commands(since: before).compactMap { command -> ExchangeCommand? in
            if case .exchange(_, let command) = command { return command }
            return nil
        }
        if let record { commands.append(.finished(record)) }
        log += commands
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
