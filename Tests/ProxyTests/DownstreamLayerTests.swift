import Evidence
import HTTP
import TLS
import XCTest
@testable import Proxy

/// `DownstreamLayer` (mode, TLS and HTTP decisions for one client connection)
/// driven by scripted events, asserting the exact commands.
final class DownstreamLayerTests: XCTestCase {
    static let guardAt8080 = LoopGuard(listenIP: "127.0.0.1", port: 8080)

    func layer(_ mode: ProxyMode = .forward, passthrough: [String] = [], intercept: [String] = []) -> DownstreamLayer {
        DownstreamLayer(id: Script.client, localIP: "127.0.0.1",
                        settings: ProxyLayerSettings(mode: mode, passthroughHosts: passthrough, interceptHosts: intercept,
                                                     loopGuard: Self.guardAt8080, recording: Script.settings))
    }

    func connectHead(_ authority: String) -> HTTPRequestHead {
        HTTPRequestHead(method: "CONNECT", authority: authority, path: "", targetForm: .authority,
                        fields: ["Host": authority])
    }

    func hello(_ sni: String?, alpn: [String] = ["h2", "http/1.1"]) -> ClientHelloSummary {
        ClientHelloSummary(serverName: sni, alpn: alpn, legacyVersion: 0x0303, supportedVersions: [0x0304])
    }

    func tlsInfo(_ sni: String?) -> TLSConnectionInfo {
        TLSConnectionInfo(role: .server, version: "TLSv1.3", cipher: "TLS_AES_128_GCM_SHA256", alpn: "h2",
                          offeredALPN: ["h2", "http/1.1"], serverName: sni, peerCertificate: nil,
                          verifyResult: .noPeerCertificate, sessionReused: false)
    }

    func records(_ commands: [DownstreamCommand]) -> [ExchangeRecord] {
        commands.compactMap { command in
            switch command {
            case .record(let record), .exchange(_, .finished(let record)): return record
            default: return nil
            }
        }
    }

    func sentHeads(_ commands: [DownstreamCommand]) -> [HTTPResponseHead] {
        commands.compactMap { command in
            if case .exchange(_, .sendResponse(.head(let head))) = command { return head }
            return nil
        }
    }

    func testConnectIsProbedAcceptedPeekedAndInterceptedWithALeafForTheSNI() {
        var layer = layer()
        XCTAssertEqual(layer.start(), [.servePlainHTTP])
        let connect = connectHead("api.example.test:443")
        let target = UpstreamTarget(scheme: .https, host: "api.example.test", port: 443)!
        XCTAssertEqual(layer.handle(.requestHead(Script.exchange(1), connect, wire: Script.wire(connect), streamID: nil, bodyFraming: .none)),
                       [.probeConnectTarget(Script.exchange(1), target)])
        XCTAssertEqual(layer.handle(.connectTargetReached),
                       [.acceptConnect(Script.exchange(1), HTTPResponseHead(status: 200, reason: "Connection established")),
                        .peekClientHello])
        XCTAssertEqual(layer.handle(.clientHello(hello("www.example.test"))),
                       [.startTLS(certificateName: "www.example.test")])
        XCTAssertEqual(layer.handle(.tlsEstablished(tlsInfo("www.example.test"))), [])
        let request = Script.get("/x", host: "www.example.test")
        XCTAssertEqual(layer.handle(.requestHead(Script.exchange(2), request, wire: Script.wire(request), streamID: 1, bodyFraming: .none)),
                       [.exchange(Script.exchange(2), .openUpstream(target, head: Script.shaped(request, for: target), framing: .none))])
        XCTAssertEqual(layer.activeExchanges, [Script.exchange(2)])
    }

    func testWithoutSNITheLeafIsForTheConnectHost() {
        var layer = layer()
        _ = layer.start()
        let connect = connectHead("127.0.0.1:9443")
        _ = layer.handle(.requestHead(Script.exchange(1), connect, wire: Script.wire(connect), streamID: nil, bodyFraming: .none))
        _ = layer.handle(.connectTargetReached)
        XCTAssertEqual(layer.handle(.clientHello(hello(nil))), [.startTLS(certificateName: "127.0.0.1")])
    }

    func testPassthroughHostsAreTunnelledAndRecordedWithTheirSNIOnly() throws {
        var layer = layer(passthrough: ["*.pinned.test"])
        let connect = connectHead("api.pinned.test:443")
        _ = layer.handle(.requestHead(Script.exchange(1), connect, wire: Script.wire(connect), streamID: nil, bodyFraming: .none))
        _ = layer.handle(.connectTargetReached)
        let target = UpstreamTarget(scheme: .https, host: "api.pinned.test", port: 443)!
        XCTAssertEqual(layer.handle(.clientHello(hello("api.pinned.test"))), [.openTunnel(target)])
        let commands = layer.handle(.tunnelClosed(upstream: ConnectionID(.upstream, 4), error: nil))
        let record = try XCTUnwrap(records(commands).first)
        XCTAssertEqual(record.leg(.downstream)?.tls?.sni, "api.pinned.test")
        XCTAssertNil(record.leg(.downstream)?.tls?.cipher)
        XCTAssertEqual(record.leg(.downstream)?.request?.method, "CONNECT")
        XCTAssertEqual(record.leg(.downstream)?.response?.status, 200)
        XCTAssertEqual(record.leg(.upstream)?.connectionID, "u4")
        XCTAssertNil(record.leg(.upstream)?.request)
        // A connection record, as the format promises: exchange dN.0, outcome tunnel, never an exchange.
        XCTAssertEqual(record.exchangeID, "\(Script.client).0")
        XCTAssertEqual(record.connection?.outcome, .tunnel)
        XCTAssertEqual(RequestlessConnection.of(record)?.outcome, .tunnel)
    }

    /// `--intercept`: only the hosts named are intercepted; every other CONNECT is tunnelled.
    func testInterceptHostsAloneAreInterceptedAndEveryOtherHostIsTunnelled() {
        for (host, sni, tunnelled) in [("appian.test", "appian.test", false), ("cdn.other.test", "cdn.other.test", true),
                                       ("a.corp.test", "a.corp.test", false), ("10.0.0.1", "appian.test", false),
                                       ("other.test", nil, true)] as [(String, String?, Bool)] {
            var layer = layer(intercept: ["appian.test", "*.corp.test"])
            let connect = connectHead(host + ":443")
            _ = layer.handle(.requestHead(Script.exchange(1), connect, wire: Script.wire(connect), streamID: nil, bodyFraming: .none))
            _ = layer.handle(.connectTargetReached)
            let target = UpstreamTarget(scheme: .https, host: host, port: 443)!
            let commands = layer.handle(.clientHello(hello(sni)))
            XCTAssertEqual(commands, tunnelled ? [.openTunnel(target)] : [.startTLS(certificateName: sni ?? host)], host)
        }
    }

    func testConnectToAnUnreachableTargetIsAnswered502WithTheReason() throws {
        var layer = layer()
        let connect = connectHead("127.0.0.1:1")
        _ = layer.handle(.requestHead(Script.exchange(1), connect, wire: Script.wire(connect), streamID: nil, bodyFraming: .none))
        let refused = ProxyError(.connectionRefused, at: .upstreamConnect, "connection refused (127.0.0.1:1)",
                                 status: .connectionRefused)
        _ = layer.handle(.exchange(Script.exchange(1), .requestEnd(trailers: nil)))
        let commands = layer.handle(.connectTargetFailed(refused))
        XCTAssertTrue(commands.contains(.close), "a client whose CONNECT failed is done")
        XCTAssertEqual(sentHeads(commands).map(\.status), [502])
        XCTAssertEqual(sentHeads(commands).first?.fields["Proxy-Status"]?.contains("connection_refused"), true)
        let record = try XCTUnwrap(records(commands).first)
        XCTAssertEqual(record.error?.message, "connection refused (127.0.0.1:1)")
        XCTAssertEqual(record.leg(.downstream)?.request?.method, "CONNECT")
        XCTAssertTrue(layer.activeExchanges.isEmpty)
    }

    func testRequestsAimedAtTheProxyItselfAreRefusedWithoutAnyUpstream() throws {
        for authority in ["127.0.0.1:8080", "localhost:8080"] {
            var layer = layer()
            let connect = connectHead(authority)
            var commands = layer.handle(.requestHead(Script.exchange(1), connect, wire: Script.wire(connect), streamID: nil, bodyFraming: .none))
            commands += layer.handle(.exchange(Script.exchange(1), .requestEnd(trailers: nil)))
            XCTAssertFalse(commands.contains { if case .probeConnectTarget = $0 { return true }; return false })
            XCTAssertEqual(sentHeads(commands).first?.fields["Proxy-Status"]?.contains("proxy_loop_detected"), true)
            XCTAssertEqual(try XCTUnwrap(records(commands).first).error?.kind, .protocolError)
        }
        var reverse = layer(.reverse(UpstreamTarget(scheme: .https, host: "127.0.0.1", port: 8080)!))
        _ = reverse.handle(.clientHello(hello(nil)))
        _ = reverse.handle(.tlsEstablished(tlsInfo(nil)))
        let request = Script.get()
        let commands = reverse.handle(.requestHead(Script.exchange(1), request, wire: Script.wire(request), streamID: nil, bodyFraming: .none))
        XCTAssertEqual(sentHeads(commands).map(\.status), [502])
    }

    func testOriginFormRequestToAForwardProxyIsA400() {
        var layer = layer()
        let request = Script.get("/direct")
        let commands = layer.handle(.requestHead(Script.exchange(1), request, wire: Script.wire(request), streamID: nil, bodyFraming: .none))
        XCTAssertEqual(sentHeads(commands).map(\.status), [400])
    }

    func testPlainAbsoluteFormRequestsGoToTheirHost() {
        var layer = layer()
        let request = HTTPRequestHead(method: "GET", scheme: "http", authority: "plain.test:8000", path: "/p",
                                      targetForm: .absolute, fields: ["Host": "plain.test:8000"])
        let commands = layer.handle(.requestHead(Script.exchange(1), request, wire: Script.wire(request), streamID: nil, bodyFraming: .none))
        let target = UpstreamTarget(scheme: .http, host: "plain.test", port: 8000)!
        XCTAssertEqual(commands.first,
                       .exchange(Script.exchange(1), .openUpstream(target, head: Script.shaped(request, for: target), framing: .none)))
    }

    func testAMalformedRequestIsRecordedWithTheCodecsAnswerAndClosed() throws {
        var layer = layer()
        let answer = HTTPResponseHead(status: 400, fields: ["Content-Type": "text/plain; charset=utf-8", "Connection": "close"])
        let commands = layer.handle(.malformedRequest(.missingColon, answer: answer, wire: Script.wire(answer)))
        XCTAssertEqual(commands.last, .close)
        let record = try XCTUnwrap(records(commands).first)
        XCTAssertEqual(record.error?.message, HTTP1ParseError.missingColon.reason)
        XCTAssertEqual(record.error?.kind, .protocolError)
        XCTAssertNil(record.leg(.downstream)?.request)
        XCTAssertEqual(record.leg(.downstream)?.response?.status, 400)
        XCTAssertEqual(record.leg(.downstream)?.response?.digest.body.length,
                       "400 \(HTTP1ParseError.missingColon.reason)\n".utf8.count)
    }

    func testReverseModePresentsALeafForTheSNIOrTheLocalAddress() {
        let upstream = UpstreamTarget(scheme: .https, host: "origin.test", port: 9443)!
        var named = layer(.reverse(upstream))
        XCTAssertEqual(named.start(), [.peekClientHello])
        XCTAssertEqual(named.handle(.clientHello(hello("app.test"))), [.startTLS(certificateName: "app.test")])
        var unnamed = layer(.reverse(upstream))
        XCTAssertEqual(unnamed.handle(.clientHello(hello(nil))), [.startTLS(certificateName: "127.0.0.1")])
        _ = unnamed.handle(.tlsEstablished(tlsInfo(nil)))
        let request = Script.get()
        XCTAssertEqual(unnamed.handle(.requestHead(Script.exchange(1), request, wire: Script.wire(request), streamID: 1, bodyFraming: .none)).first,
                       .exchange(Script.exchange(1), .openUpstream(upstream, head: Script.shaped(request, for: upstream), framing: .none)))
    }

    func testAFailedClientHandshakeIsRecordedAsExchangeZero() throws {
        var layer = layer(.reverse(Script.origin))
        _ = layer.handle(.clientHello(hello("app.test", alpn: ["spdy/3"])))
        let problem = ProxyError(.tls, at: .downstreamTLSHandshake, "no application protocol in common",
                                 status: .tlsProtocolError)
        let commands = layer.handle(.tlsFailed(problem))
        XCTAssertEqual(commands.last, .close)
        let record = try XCTUnwrap(records(commands).first)
        XCTAssertEqual(record.exchangeID, "d1.0")
        XCTAssertEqual(record.leg(.downstream)?.tls?.sni, "app.test")
        XCTAssertEqual(record.error?.kind, .tls)
    }

    func testClosingTheConnectionEndsEveryActiveExchange() throws {
        var layer = layer(.reverse(Script.origin))
        _ = layer.handle(.clientHello(hello(nil)))
        _ = layer.handle(.tlsEstablished(tlsInfo(nil)))
        for sequence in 1...2 {
            let request = Script.post(length: 100)
            _ = layer.handle(.requestHead(Script.exchange(sequence), request, wire: Script.wire(request), streamID: sequence * 2 - 1, bodyFraming: .contentLength(100)))
        }
        let commands = layer.handle(.connectionClosed(nil))
        XCTAssertEqual(records(commands).count, 2)
        XCTAssertTrue(records(commands).allSatisfy { $0.error?.kind == .closedEarly })
        XCTAssertTrue(layer.activeExchanges.isEmpty)
    }
}
