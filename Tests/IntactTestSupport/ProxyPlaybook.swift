import Evidence
import Foundation
import Proxy
import Synchronization
import TLS
import Wire
import XCTest

/// The whole proxy in one test, in memory, stepped by hand: the playbook
/// of the proxy's middle (in the spirit of mitmproxy's `Playbook` and
/// SwiftNIO's `EmbeddedChannel`).
///
/// A real `ProxyServer` runs on an embedded loop (`EventLoop.embedded()`)
/// with an `EmbeddedNetwork`: a client connects (`connectClient`), its bytes
/// go in (`PlaybookPeer.send`), the proxy's upstream dial is answered by the
/// test (`acceptDial`), the bytes it sends upstream come out
/// (`PlaybookPeer.read` on the upstream peer), the origin's answer goes in,
/// and what reaches the client comes out. TLS runs on both legs as on a
/// socket: the test's ends hold a `TLSEngine` each (the client's trusts the
/// proxy's CA; the origin's presents a leaf of `originAuthority`, which the
/// proxy trusts), wired back to back with the proxy's in memory.
///
/// Nothing happens between steps: `run()` delivers what is waiting (and
/// moves TLS records until both sides are quiet), `advance(by:)` moves the
/// clock, firing the proxy's timers (client timeouts, connect timeouts,
/// pool idle timers), so timeouts are tested without waiting.
///
/// Records: every finished exchange, as the proxy hands it to its log
/// (`records`), the values the recording line is written from.
///
/// HTTP/2 ends (`connectHTTP2Client`, `acceptHTTP2Dial`: `PlaybookHTTP2`)
/// put an `HTTP2Session` of the test's on a peer; `run()` moves their frames.
///
/// Use it on one thread (the test's): the loop is that thread.
public final class ProxyPlaybook {
    public let loop: EventLoop
    public let network: EmbeddedNetwork
    public let server: ProxyServer
    /// Where the proxy listens on the network.
    public let address: SocketAddress
    /// The proxy's CA (clients trust it).
    public let authority: CertificateAuthority
    /// The CA of the origins' certificates (the proxy trusts it).
    public let originAuthority: CertificateAuthority
    private let directory: String
    private let log = RecordLog()
    /// Every TLS-speaking end, pumped by `run()`.
    private var tlsPeers: [PlaybookPeer] = []
    /// Every HTTP/2-speaking end, pumped by `run()` after the TLS ends.
    private var http2Ends: [PlaybookHTTP2] = []
    /// The client context trusting `authority`, made once.
    private var clientContexts: [String: TLSContext] = [:]

    /// Starts a proxy in `mode` (an IP-literal listen address, recording to
    /// `records` only); `configure` adjusts the configuration.
    public init(mode: ProxyMode = .forward, configure: (inout ProxyConfiguration) -> Void = { _ in }) throws {
        loop = EventLoop.embedded(label: "playbook")
        network = EmbeddedNetwork(loop: loop)
        directory = TemporaryDirectory.create(prefix: "intact-playbook")
        authority = try CertificateAuthority.create(in: directory + "/ca")
        originAuthority = try CertificateAuthority.create(in: directory + "/origin-ca")
        var configuration = Self.configuration(authority: authority, trusting: originAuthority, port: 8080, log: log)
        configuration.mode = mode
        configure(&configuration)
        server = ProxyServer(configuration: configuration)
        address = try server.start(on: network)
    }

    /// A proxy's configuration on the playbook: listening at 127.0.0.1:`port`,
    /// tap `playbook`, minting from `authority`, trusting the origins' CA,
    /// logging its records to `log`.
    private static func configuration(authority: CertificateAuthority, trusting origins: CertificateAuthority,
                                      port: Int, log: RecordLog) -> ProxyConfiguration {
        var configuration = ProxyConfiguration(authority: authority)
        configuration.listenHost = "127.0.0.1"
        configuration.listenPort = port
        configuration.tap = "playbook"
        configuration.keyLog = .disabled
        configuration.upstreamVerification = .caFile(origins.certificatePath)
        configuration.exchangeLog = { record in log.append(record) }
        return configuration
    }

    /// Starts another proxy on the playbook's network, at 127.0.0.1:`port`,
    /// minting from `authority` (a chain: the upstream proxy of this one, or
    /// one beside it); `configure` adjusts its configuration as `init`'s does.
    public func startProxy(port: Int, authority: CertificateAuthority,
                           configure: (inout ProxyConfiguration) -> Void = { _ in }) throws -> PlaybookProxy {
        let log = RecordLog()
        var configuration = Self.configuration(authority: authority, trusting: originAuthority, port: port, log: log)
        configure(&configuration)
        let server = ProxyServer(configuration: configuration)
        return PlaybookProxy(server: server, address: try server.start(on: network), log: log)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The exchanges finished so far, in the order they finished.
    public var records: [ExchangeRecord] { log.records }

    /// `records` as a recording under the header the proxy writes (its
    /// tap, mode and options), for `Verifier`.
    public var recording: Recording {
        let configuration = server.configuration
        let mode: String
        switch configuration.mode {
        case .forward: mode = "forward"
        case .reverse: mode = "reverse"
        }
        let header = RecordingHeader(toolVersion: configuration.toolVersion, tap: configuration.tap, mode: mode,
                                     options: configuration.recordedOptions, origin: configuration.recordedOrigin)
        return Recording(path: "playbook", header: header, records: records)
    }

    // MARK: Steps

    /// Delivers everything waiting, moving TLS records between the test's
    /// ends and the proxy until nothing moves.
    public func run() {
        for _ in 0..<10_000 {
            loop.run()
            var moved = false
            for peer in tlsPeers where peer.pump() { moved = true }
            for end in http2Ends where end.pump() { moved = true }
            if !moved { return }
        }
        XCTFail("the playbook never settled: TLS records or HTTP/2 frames kept moving")
    }

    /// `run()` moves `end`'s frames from now on.
    func adopt(_ end: PlaybookHTTP2) {
        http2Ends.append(end)
    }

    /// Moves the proxy's clock on by `delay` (firing its timers), then `run()`.
    public func advance(by delay: Duration) {
        run()
        loop.advanceTime(by: delay)
        run()
    }

    /// A client connects to the proxy (or to another proxy of the playbook's
    /// at `proxy`); with `tls`, it starts a handshake for that server name at
    /// once (reverse mode), offering `alpn`, trusting the CA at `trusting`
    /// (the proxy's unless given).
    public func connectClient(to proxy: SocketAddress? = nil, tls serverName: String? = nil, alpn: [String] = ["http/1.1"],
                              trusting caFile: String? = nil) throws -> PlaybookPeer {
        let peer = PlaybookPeer(try network.connect(to: proxy ?? address))
        if let serverName { try startClientTLS(peer, serverName: serverName, alpn: alpn, trusting: caFile) }
        run()
        return peer
    }

    /// Starts the client's TLS handshake on `peer` (after a CONNECT, in
    /// forward mode), trusting the CA at `trusting` (the proxy's unless
    /// given: another CA makes a client that rejects the proxy's leaf).
    public func startClientTLS(_ peer: PlaybookPeer, serverName: String, alpn: [String] = ["http/1.1"],
                               trusting caFile: String? = nil) throws {
        let trust = caFile ?? authority.certificatePath
        let key = alpn.joined(separator: ",") + " " + trust
        let context: TLSContext
        if let made = clientContexts[key] {
            context = made
        } else {
            var configuration = TLSClientConfiguration(verification: .verify(.caFile(trust)))
            configuration.alpnOffer = alpn
            configuration.keyLog = .disabled
            context = try TLSContext(client: configuration)
            clientContexts[key] = context
        }
        peer.startTLS(try TLSEngine(context: context, serverName: serverName))
        tlsPeers.append(peer)
    }

    /// The proxy's oldest waiting upstream dial; fails the test unless it is to `host:port`.
    public func takeDial(host: String, port: UInt16, file: StaticString = #filePath, line: UInt = #line) -> EmbeddedDial? {
        run()
        guard let dial = network.takeDial() else {
            XCTFail("the proxy dialled nothing (expected \(host):\(port))", file: file, line: line)
            return nil
        }
        XCTAssertEqual("\(dial.host):\(dial.port)", "\(host):\(port)", file: file, line: line)
        return dial
    }

    /// Answers the proxy's oldest dial (to `host:port`) as the origin:
    /// plaintext, or with `tls` a certificate for `host` from
    /// `originAuthority`, choosing from `alpn` what the proxy offers;
    /// `holdsTLS` holds the origin's handshake back until the test lets go
    /// (`PlaybookPeer.holdsTLS`); `clientCertificates` is whether the origin
    /// asks the proxy for a certificate (`negotiated?.peerCertificate` shows what came).
    public func acceptDial(host: String, port: UInt16, tls: Bool = false, alpn: [String] = ["http/1.1"],
                           holdsTLS: Bool = false, clientCertificates: TLSClientCertificatePolicy = .none,
                           file: StaticString = #filePath, line: UInt = #line) throws -> PlaybookPeer {
        guard let dial = takeDial(host: host, port: port, file: file, line: line) else {
            throw PlaybookError.noDial("\(host):\(port)")
        }
        let peer = PlaybookPeer(dial.accept())
        peer.holdsTLS = holdsTLS
        if tls {
            var configuration = TLSServerConfiguration(identity: try originAuthority.leaf(for: host))
            configuration.alpnPreference = alpn
            configuration.clientCertificate = clientCertificates
            configuration.keyLog = .disabled
            peer.startTLS(try TLSEngine(context: try TLSContext(server: configuration)))
            tlsPeers.append(peer)
        }
        run()
        return peer
    }
}

extension ProxyPlaybook {
    /// The playbook's last two steps in one: `origin` answers `response`,
    /// and `client` must receive it unchanged, byte for byte.
    public func answer(_ response: String, from origin: PlaybookPeer, reaches client: PlaybookPeer,
                       file: StaticString = #filePath, line: UInt = #line) {
        origin.send(response)
        run()
        client.expect(response, file: file, line: line)
    }
}

/// Why a playbook step could not go on.
public enum PlaybookError: Error {
    /// The proxy made no dial where one was expected.
    case noDial(String)
}

/// One of the test's ends in a `ProxyPlaybook`: a client of the proxy, or
/// an origin the proxy dialled. Plaintext in and out; under TLS the end's
/// engine encrypts what is sent and decrypts what arrives (`run()` moves
/// the records).
public final class PlaybookPeer {
    /// The in-memory socket end.
    public let peer: EmbeddedPeer
    private var tls: TLSEngine?
    /// Plaintext decrypted and not yet read by the test.
    private var plaintext: [UInt8] = []
    /// Plaintext the test sent before the handshake completed.
    private var waiting: [UInt8] = []
    /// The first TLS failure this end saw (a handshake refused, an alert).
    public private(set) var tlsFailure: TLSError?
    /// While true, `run()` moves no TLS record of this end either way: a
    /// peer whose handshake (or anything under TLS) is slow, until let go.
    public var holdsTLS = false

    init(_ peer: EmbeddedPeer) {
        self.peer = peer
    }

    /// What the TLS handshake settled (nil before it completed, or without TLS).
    public var negotiated: TLSConnectionInfo? { tls?.negotiated }

    /// Sends bytes (encrypted under TLS once the handshake completed).
    public func send(_ bytes: [UInt8]) {
        guard let tls else { return peer.send(bytes) }
        guard case .established = tls.state else {
            waiting += bytes
            return
        }
        do {
            try tls.writePlaintext(bytes)
        } catch {
            tlsFailure = tlsFailure ?? error
        }
        flushTLS()
    }

    /// Sends `text`'s UTF-8.
    public func send(_ text: String) {
        send(Array(text.utf8))
    }

    /// Everything received (decrypted under TLS) since the last read.
    public func read() -> [UInt8] {
        guard tls != nil else { return peer.read() }
        defer { plaintext = [] }
        return plaintext
    }

    /// Fails the test unless what arrived since the last read is exactly `text`.
    public func expect(_ text: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(readText(), text, file: file, line: line)
    }

    /// `read()` as text (UTF-8, invalid bytes replaced).
    public func readText() -> String {
        String(decoding: read(), as: UTF8.self)
    }

    /// Half-closes the test's side (after a close_notify under TLS).
    public func finishSending() {
        if let tls {
            tls.shutdown()
            flushTLS()
        }
        peer.finishSending()
    }

    /// Resets the connection.
    public func reset() {
        peer.reset()
    }

    /// True once the proxy's side sent its FIN.
    public var receivedEOF: Bool { peer.receivedEOF }
    /// True once the proxy's side is closed.
    public var isClosed: Bool { peer.isClosed }
    /// True once the proxy's side reset the connection.
    public var receivedReset: Bool { peer.receivedReset }

    func startTLS(_ engine: TLSEngine) {
        tls = engine
        _ = pump()
    }

    /// Moves TLS records both ways; true when any moved.
    func pump() -> Bool {
        guard let tls, !holdsTLS else { return false }
        var moved = false
        let incoming = peer.read()
        if !incoming.isEmpty {
            tls.feed(incoming)
            moved = true
        }
        if case .handshaking = tls.state, case .failed(let error) = tls.handshake() {
            tlsFailure = tlsFailure ?? error
        }
        switch tls.state {
        case .established, .closeNotifySent, .closeNotifyReceived:
            do {
                plaintext += try tls.readPlaintext()
            } catch {
                tlsFailure = tlsFailure ?? error
            }
        case .handshaking, .closed, .failed:
            break
        }
        if case .established = tls.state, !waiting.isEmpty {
            let bytes = waiting
            waiting = []
            send(bytes)
        }
        if tls.hasOutbound {
            flushTLS()
            moved = true
        }
        return moved
    }

    private func flushTLS() {
        guard let tls, tls.hasOutbound else { return }
        peer.send(tls.takeOutbound())
    }
}

/// Another proxy on a playbook's network (`ProxyPlaybook.startProxy`).
public struct PlaybookProxy {
    public let server: ProxyServer
    /// Where it listens on the network.
    public let address: SocketAddress
    fileprivate let log: RecordLog

    /// The exchanges it finished so far, in the order they finished.
    public var records: [ExchangeRecord] { log.records }
}

/// The records a proxy logged. `Sendable`: behind a mutex (the proxy logs on its loop).
fileprivate final class RecordLog: Sendable {
    private let list = Mutex<[ExchangeRecord]>([])

    func append(_ record: ExchangeRecord) {
        list.withLock { $0.append(record) }
    }

    var records: [ExchangeRecord] { list.withLock { $0 } }
}
