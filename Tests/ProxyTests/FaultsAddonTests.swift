import AuthFlow
import Evidence
import Faults
import HTTP
import ProxyAddons
import TLS
import XCTest
@testable import Proxy

/// The fault engine as an add-on in scripted exchanges and connections:
/// its outputs become the proxy's commands, and every applied fault lands
/// in the record.
final class FaultsAddonTests: XCTestCase {
    func addon(_ json: String, bufferLimit: Int = FaultEngine.defaultBufferLimit) throws -> FaultsAddon {
        let rules = try FaultRuleFile.parse(Array(json.utf8))
        return try FaultsAddon(engine: FaultEngine(rules: rules, seed: 7, bufferLimit: bufferLimit))
    }

    func addon(preset: String) throws -> FaultsAddon {
        try FaultsAddon(engine: FaultEngine(rules: FaultPreset.rules(specification: preset), seed: 7))
    }

    /// A flow for `head` with the add-on's hook (nil when it is not interested).
    func script(_ addon: FaultsAddon, _ head: HTTPRequestHead) -> FlowScript {
        let context = ExchangeHookContext(id: Script.exchange(1), request: head, target: Script.origin, tap: "proxy")
        return FlowScript(hooks: addon.hook(for: context).map { [$0] } ?? [])
    }

    /// `script` with the whole request sent and the upstream stream open.
    func opened(_ addon: FaultsAddon, _ head: HTTPRequestHead = Script.get()) -> FlowScript {
        var script = script(addon, head)
        script.start(head)
        script.send(.requestEnd(trailers: nil))
        script.open()
        return script
    }

    func testAResetAfterBodyBytesSendsThoseBytesThenResetsAndRecordsTheRule() throws {
        let addon = try addon("""
            {"rules": [{"name": "cut", "match": {"leg": "response"},
                        "actions": [{"action": "reset", "at": "after-body-bytes", "bytes": 4}]}]}
            """)
        var script = opened(addon)
        let head = Script.ok(length: 10)
        script.send(.responseHead(head, wire: Script.wire(head)))
        let commands = script.send(.responseBody(Script.bytes(10)))
        XCTAssertEqual(commands.first, .sendResponse(.body(Array(Script.bytes(10).prefix(4)))))
        XCTAssertTrue(commands.contains(.resetClientStream))
        XCTAssertLessThan(try XCTUnwrap(commands.firstIndex(of: .sendResponse(.body(Array(Script.bytes(10).prefix(4)))))),
                          try XCTUnwrap(commands.firstIndex(of: .resetClientStream)), "the bytes go out before the reset")
        let record = try XCTUnwrap(script.record)
        XCTAssertEqual(record.error?.kind, .reset)
        XCTAssertEqual(record.faults, [ExchangeRecord.RecordedFault(name: "cut", detail: "reset on the response: connection reset after 4 body bytes")])
    }

    func testLatencyDelaysEveryResponseWithinItsJitterAndRecordsTheDrawnDelay() throws {
        let addon = try addon(preset: "latency:ms=300,jitter=100")
        for _ in 0..<5 {
            var script = opened(addon)
            let commands = script.send(.responseHead(Script.ok(length: 0), wire: Script.wire(Script.ok(length: 0))))
            guard case .startTimer(.response, let delay)? = commands.first else { return XCTFail("no delay: \(commands)") }
            XCTAssertTrue((.milliseconds(200) ... .milliseconds(400)).contains(delay), "\(delay)")
            script.send(.responseEnd(trailers: nil))
            script.send(.timerFired(.response))
            let record = try XCTUnwrap(script.record)
            XCTAssertEqual(record.faults.map(\.name), ["latency"])
            XCTAssertEqual(record.faults.first?.detail, "delay on the response: delayed \(delay.components.attoseconds / 1_000_000_000_000_000 + delay.components.seconds * 1000) ms")
        }
    }

    func testABodyOverTheBufferLimitFailsTheExchangeCleanlyAndTheRecordSaysWhy() throws {
        let addon = try addon("""
            {"rules": [{"name": "rewrite", "match": {"leg": "response"},
                        "actions": [{"action": "regex-body", "pattern": "a", "template": "b"}]}]}
            """, bufferLimit: 8)
        var script = opened(addon)
        let head = Script.ok(length: 20)
        script.send(.responseHead(head, wire: Script.wire(head)))
        XCTAssertTrue(script.clientHeads.isEmpty, "a buffering action holds the head")
        script.send(.responseBody(Script.bytes(20)))
        XCTAssertEqual(script.clientHeads.map(\.status), [502], "nothing was sent yet, so the proxy answers")
        let record = try XCTUnwrap(script.record)
        let error = try XCTUnwrap(record.error)
        XCTAssertTrue(error.message.contains("rule \"rewrite\" (regex-body, response)"), error.message)
        XCTAssertTrue(error.message.contains("8"), "names the limit: \(error.message)")
        XCTAssertEqual(record.faults.map(\.name), ["rewrite"])
        XCTAssertTrue(record.faults.first?.detail?.contains("exchange failed") ?? false)
    }

    func testAForeignResponseAnswersWithoutAskingTheServer() throws {
        var script = script(try addon(preset: "foreign-response"), Script.get())
        let commands = script.start(Script.get())
        XCTAssertFalse(commands.contains { if case .openUpstream = $0 { return true }; return false })
        XCTAssertEqual(script.clientHeads.map(\.status), [503])
        script.send(.requestEnd(trailers: nil))
        let record = try XCTUnwrap(script.record)
        XCTAssertEqual(record.faults.map(\.name), ["foreign-response"])
        XCTAssertNil(record.leg(.upstream))
    }

    func testStepRulesSeeTheStepTheResponseTells() throws {
        // strip-set-cookie acts on the bootstrap: a token POST answered 200.
        let addon = try addon(preset: "strip-set-cookie")
        let post = HTTPRequestHead(method: "POST", path: "/suite/mobileAuthTokenConsumer",
                                   fields: ["Host": "origin.test:8443", "Content-Length": "0"])
        var script = opened(addon, post)
        let bootstrap = HTTPResponseHead(status: 200, fields: ["Content-Length": "0", "Set-Cookie": "JSESSIONID=x; Path=/suite"])
        script.send(.responseHead(bootstrap, wire: Script.wire(bootstrap)))
        XCTAssertEqual(script.clientHeads.first?.fields.values("Set-Cookie"), [])
        script.send(.responseEnd(trailers: nil))
        XCTAssertEqual(try XCTUnwrap(script.record).faults.map(\.name), ["strip-set-cookie"])
    }

    func testAnAddonWithOnlyConnectionRulesMakesNoExchangeHooks() throws {
        let addon = try addon(preset: "client-cert-required")
        XCTAssertNil(addon.hook(for: ExchangeHookContext(id: Script.exchange(1), request: Script.get(),
                                                         target: Script.origin, tap: "proxy")))
        XCTAssertFalse(addon.mayPresentUntrustedCertificates)
    }

    func testClientCertRequiredChangesTheHandshakeAndEveryRecordOfTheConnectionSaysSo() throws {
        let addon = try addon(preset: "client-cert-required")
        var layer = DownstreamLayer(id: Script.client, localIP: "127.0.0.1",
                                    settings: ProxyLayerSettings(mode: .reverse(Script.origin),
                                                                 loopGuard: DownstreamLayerTests.guardAt8080,
                                                                 addons: [addon], recording: Script.settings))
        let hello = ClientHelloSummary(serverName: "origin.test", alpn: ["h2"], legacyVersion: 0x0303, supportedVersions: [0x0304])
        XCTAssertEqual(layer.handle(.clientHello(hello)),
                       [.startTLS(certificateName: "origin.test",
                                  changes: DownstreamTLSChanges(requiredClientCertificate: .proxyAuthority))])
        let failed = layer.handle(.tlsFailed(ProxyError(.tls, at: .downstreamTLSHandshake, "certificate required",
                                                        status: .tlsProtocolError)))
        guard case .record(let record)? = failed.first else { return XCTFail("no record: \(failed)") }
        XCTAssertEqual(record.faults.map(\.name), ["client-cert-required"])
        XCTAssertEqual(record.faults.first?.detail,
                       "require-client-certificate on the connection: client certificate signed by the proxy's CA required")
        XCTAssertEqual(record.error?.kind, .tls)
    }

    func testAMissingCAFileIsRefusedWhenTheAddonIsMade() {
        XCTAssertThrowsError(try addon(preset: "client-cert-required:ca=/nonexistent/ca.pem")) { error in
            XCTAssertEqual("\(error)", "fault rule \"client-cert-required\": CA file /nonexistent/ca.pem: cannot read the file")
        }
    }

    func testAnUnknownCAFaultAsksForTheThrowawayCAAtStart() throws {
        let addon = try addon("""
            {"rules": [{"name": "untrusted", "match": {}, "actions": [{"action": "unknown-ca-certificate"}]}]}
            """)
        XCTAssertTrue(addon.mayPresentUntrustedCertificates)
        XCTAssertEqual(addon.connectionAccepted(Script.client).tls, DownstreamTLSChanges(presentsUntrustedCertificate: true))
    }
}
