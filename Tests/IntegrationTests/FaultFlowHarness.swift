import AuthFlow
import Demo
import Evidence
import Faults
import Foundation
import Proxy
import ProxyAddons
import SignIn
import IntactTestSupport
import XCTest

/// One whole sign-in flow in one process (`DemoRig`: CA, mock server, the
/// proxy with the faults, the client through it), with what each side made of it.
struct FaultFlowRun {
    var outcome: FlowOutcome
    var report: VerificationReport
    /// The proxy's records, connection-level ones (failed handshakes) included.
    var proxyRecords: [ExchangeRecord]
    /// The client's records (the browser's page exchanges included when Chromium played it).
    var clientRecords: [ExchangeRecord] = []
    /// `client.browser.json`, when Chromium played the browser.
    var browserView: String?

    /// Runs the flow with `rules` in the proxy. Blocks; takes milliseconds
    /// (plus whatever delays and timeouts the rules cause).
    static func run(_ rules: [FaultRule], protocols: ClientRunner.Protocols = .http1Only, clientCertificate: Bool = false,
                    exchangeTimeout: Duration = .seconds(5), seed: UInt64 = 1,
                    _ edit: (inout DemoConfiguration) -> Void = { _ in }) throws -> FaultFlowRun {
        let work = TemporaryDirectory.create(prefix: "intact-faultflow")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let directory = work + "/out"
        let addons: [any ProxyAddon] = rules.isEmpty ? [] : [try FaultsAddon(engine: FaultEngine(rules: rules, seed: seed))]
        var configuration = DemoConfiguration(directory: directory, protocols: protocols, proxyAddons: addons,
                                              presentsClientCertificate: clientCertificate,
                                              exchangeTimeout: exchangeTimeout, toolVersion: "test")
        edit(&configuration)
        let rig = DemoRig(configuration: configuration)
        defer { rig.stopServers() }
        _ = try rig.start()
        let outcome = try rig.runClient()
        let report = try rig.finish()
        let proxy = try RecordingReader.read(path: rig.files.proxyRecording)
        let client = try RecordingReader.read(path: rig.files.clientRecording)
        let browserView = try? String(contentsOfFile: ClientRunner.browserViewPath(forRecording: rig.files.clientRecording), encoding: .utf8)
        return FaultFlowRun(outcome: outcome, report: report, proxyRecords: proxy.records, clientRecords: client.records,
                            browserView: browserView)
    }

    static func run(preset specification: String, protocols: ClientRunner.Protocols = .http1Only,
                    clientCertificate: Bool = false) throws -> FaultFlowRun {
        try run(try FaultPreset.rules(specification: specification), protocols: protocols, clientCertificate: clientCertificate)
    }

    static func run(rules json: String, protocols: ClientRunner.Protocols = .http1Only,
                    exchangeTimeout: Duration = .seconds(5),
                    _ edit: (inout DemoConfiguration) -> Void = { _ in }) throws -> FaultFlowRun {
        try run(try FaultRuleFile.parse(Array(json.utf8)), protocols: protocols, exchangeTimeout: exchangeTimeout, edit)
    }

    /// The verifier's exchanges where `fault` shows as injected on some hop.
    func exchanges(injecting fault: String) -> [VerifiedExchange] {
        report.exchanges.filter { $0.hops.contains { $0.injected.contains { $0.name == fault } } }
    }

    /// The number of the hop inside the proxy (its downstream leg to its upstream leg).
    var proxyHop: Int? {
        report.path.hops.first { $0.kind == .inside && $0.from.tap == "proxy" }?.number
    }

    func hop(_ number: Int?, of exchange: VerifiedExchange) -> HopResult? {
        exchange.hops.first { $0.hop == number }
    }

    /// The proxy's records that carry `fault`.
    func proxyRecords(with fault: String) -> [ExchangeRecord] {
        proxyRecords.filter { $0.faults.contains { $0.name == fault } }
    }
}

extension XCTestCase {
    /// Asserts the run failed with the preset's own diagnosis, quoting one of
    /// the sentences the preset breaks, at the client step given.
    func assertDiagnosis(_ run: FaultFlowRun, preset: String, at step: FlowStep,
                         file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertFalse(run.outcome.succeeded, "the flow must fail under \(preset)", file: file, line: line)
        let diagnosis = try XCTUnwrap(run.outcome.diagnosis, "no diagnosis under \(preset)", file: file, line: line)
        XCTAssertEqual(diagnosis.mode.rawValue, preset, "evidence: \(diagnosis.evidence)", file: file, line: line)
        XCTAssertEqual(diagnosis.step, step, file: file, line: line)
        let breaks = try FaultPreset.named(preset).breaks
        XCTAssertTrue(breaks.contains(diagnosis.sentence),
                      "the diagnosis quotes “\(diagnosis.quote)”, not a sentence \(preset) breaks", file: file, line: line)
        XCTAssertEqual(diagnosis.quote, diagnosis.sentence.text, file: file, line: line)
    }

    /// Asserts the verifier put `verdict` on the proxy's inside hop of the
    /// exchange labelled `step` (nil: a connection-level record), with the
    /// fault shown as injected there; returns that exchange.
    @discardableResult
    func assertVerdict(_ run: FaultFlowRun, fault: String, step: String?, verdict: HopVerdict,
                       file: StaticString = #filePath, line: UInt = #line) throws -> VerifiedExchange {
        let exchanges = run.exchanges(injecting: fault)
        let exchange = try XCTUnwrap(exchanges.first { $0.step?.rawValue == step },
                                     "no exchange labelled \(step ?? "nil") with \(fault) injected; "
                                     + "got \(exchanges.map { $0.step?.rawValue ?? "nil" })", file: file, line: line)
        let hop = try XCTUnwrap(run.hop(run.proxyHop, of: exchange), file: file, line: line)
        XCTAssertEqual(hop.verdict, verdict, file: file, line: line)
        XCTAssertTrue(hop.injected.contains { $0.name == fault }, "the inside hop shows the injected fault", file: file, line: line)
        XCTAssertFalse(run.report.policyHolds, "the verification fails under \(fault)", file: file, line: line)
        return exchange
    }
}
