import Foundation
import Proxy
import ProxyAddons
import XCTest
@testable import IntactCLI

/// `intact proxy` options turned into a `ProxyConfiguration` (no server is started here).
final class ProxyCommandTests: XCTestCase {
    private func configuration(_ words: [String]) throws -> (ProxyConfiguration, String) {
        let parser = ArgumentParser(root: CommandRegistry.root)
        guard case let .run(parsed) = try parser.parse(["proxy"] + words) else {
            XCTFail("expected intact proxy to run")
            throw CommandFailure("no run")
        }
        let error = CapturedOutput()
        let context = CommandContext(standardOutput: CapturedOutput().writer, standardError: error.writer)
        return (try ProxyCommand.makeConfiguration(parsed, context), error.text)
    }

    private func usageMessage(_ words: [String]) -> String? {
        do {
            _ = try configuration(words)
            return nil
        } catch let error as UsageError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    func testDefaultsAreLoopbackForwardSystemTrustNoRecording() throws {
        let directory = makeTemporaryDirectory() + "/certs"
        let (config, warnings) = try configuration(["--ca-dir", directory])
        XCTAssertEqual(config.listenHost, "127.0.0.1")
        XCTAssertEqual(config.listenPort, 8080)
        XCTAssertEqual(config.mode, .forward)
        XCTAssertEqual(config.upstreamVerification, .systemStore)
        XCTAssertNil(config.recording)
        XCTAssertNotNil(config.exchangeLog)
        XCTAssertFalse(config.exchangeLogReadsDigests, "the log line reads method, URL, status, length and time")
        XCTAssertFalse(config.takesDigests, "no recording and a log that reads no digest: nothing is hashed")
        XCTAssertEqual(config.tap, "proxy")
        XCTAssertTrue(warnings.contains("created a development CA in \(directory)"), warnings)
        XCTAssertTrue(FileManager.default.fileExists(atPath: directory + "/ca-cert.pem"))
    }

    func testEveryOptionReachesTheConfiguration() throws {
        let directory = makeTemporaryDirectory()
        let (config, warnings) = try configuration([
            "--ca-dir", directory + "/certs", "--listen", "[::1]:0", "--mode", "reverse:https://origin.test:9443",
            "--passthrough", "a.test", "--passthrough", "*.b.test", "--insecure-upstream", "--keylog", directory + "/keys",
            "--record", directory + "/r.jsonl", "--tap", "edge", "--record-bodies=64K", "--record-secrets",
            "--context-path", "app", "--quiet",
        ])
        XCTAssertEqual(config.listenHost, "::1")
        XCTAssertEqual(config.listenPort, 0)
        XCTAssertEqual(config.mode.description, "reverse:https://origin.test:9443")
        XCTAssertEqual(config.passthroughHosts, ["a.test", "*.b.test"])
        XCTAssertEqual(config.upstreamVerification, .insecure)
        XCTAssertTrue(warnings.contains("NOT verified"), warnings)
        XCTAssertEqual(config.keyLog, .file(directory + "/keys"))
        XCTAssertEqual(config.recording?.path, directory + "/r.jsonl")
        XCTAssertTrue(config.takesDigests, "a recording reads every digest")
        XCTAssertEqual(config.recording?.bodyStoreLimit, 64 * 1024)
        XCTAssertEqual(config.recording?.recordSecrets, true)
        XCTAssertEqual(config.tap, "edge")
        XCTAssertEqual(config.recordedOptions["contextPath"], "app", "the step labeller comes first, with the path")
        XCTAssertTrue(config.addons.first is AuthStepAddon)
        XCTAssertNil(config.exchangeLog)
    }

    func testRecordBodiesAloneStoresOneMebibyte() throws {
        let directory = makeTemporaryDirectory()
        let (config, _) = try configuration(["--ca-dir", directory + "/certs", "--record-bodies",
                                             "--record", directory + "/r.jsonl"])
        XCTAssertEqual(config.recording?.bodyStoreLimit, 1 << 20)
    }

    func testListenPlainMakesAReverseListenerTakePlainHTTP() throws {
        let directory = makeTemporaryDirectory() + "/certs"
        let (config, _) = try configuration(["--ca-dir", directory, "--mode", "reverse:https://127.0.0.1:8443",
                                             "--listen-plain"])
        XCTAssertTrue(config.listenPlain)
        XCTAssertEqual(config.recordedOrigin, "https://127.0.0.1:8443")
        XCTAssertEqual(config.recordedOptions["listenPlain"], "true")
        let (plainless, _) = try configuration(["--ca-dir", directory, "--mode", "reverse:https://127.0.0.1:8443"])
        XCTAssertFalse(plainless.listenPlain)
        XCTAssertNil(plainless.recordedOptions["listenPlain"])
        let (forward, _) = try configuration(["--ca-dir", directory])
        XCTAssertNil(forward.recordedOrigin, "a forward proxy carries any origin")
    }

    func testBadOptionsAreUsageErrorsNamingTheOption() {
        let directory = makeTemporaryDirectory() + "/certs"
        let cases: [([String], String)] = [
            (["--listen", "localhost"], "--listen"),
            (["--listen", "::1:80"], "--listen"),
            (["--listen", ":80"], "--listen"),
            (["--allow", "10.0.0.0/33"], "--allow"),
            (["--allow", "10.0.0.1/8"], "--allow"),
            (["--allow", "10.0.0/8"], "--allow"),
            (["--allow", "not-an-address"], "--allow"),
            (["--allow", "::1/129"], "--allow"),
            (["--listen", "127.0.0.1:70000"], "--listen"),
            (["--mode", "reverse:nohost"], "--mode"),
            (["--mode", "sideways"], "--mode"),
            (["--log-format", "xml"], "--log-format"),
            (["--record-bodies=lots", "--record", "/tmp/x.jsonl"], "--record-bodies"),
            (["--record-bodies"], "--record"),
            (["--upstream-ca", "/tmp/ca.pem", "--insecure-upstream"], "contradict"),
            (["--listen-plain"], "--listen-plain needs --mode reverse"),
        ]
        for (words, expected) in cases {
            let message = usageMessage(["--ca-dir", directory] + words)
            XCTAssertTrue(message?.contains(expected) == true, "\(words): \(message ?? "accepted")")
        }
    }

    func testAMissingClientCertificateFileFails() {
        let directory = makeTemporaryDirectory()
        let message = usageMessage(["--ca-dir", directory + "/certs", "--upstream-client-cert", directory + "/none.p12"])
        XCTAssertTrue(message?.contains("none.p12") == true, message ?? "accepted")
    }

    func testHelpListsTheOptions() {
        let run = intact(["proxy", "--help"])
        XCTAssertEqual(run.status, 0)
        for option in ["--listen HOST:PORT", "--allow CIDR", "--mode MODE", "--passthrough HOST", "--record-bodies[=LIMIT]",
                       "--upstream-client-cert FILE.p12", "--log-format FORMAT", "--keylog FILE"] {
            XCTAssertTrue(run.output.contains(option), "\(option) missing from:\n\(run.output)")
        }
    }
}
