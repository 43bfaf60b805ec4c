import AuthFlow
import Evidence
import Foundation
import IntactTestSupport
import SignIn
import XCTest
@testable import IntactCLI

final class ClientCommandTests: XCTestCase {
    private let url = "https://127.0.0.1:8443/suite/rest/whatever"

    func testHelpListsTheOptions() {
        let run = intact(["client", "--help"])
        XCTAssertEqual(run.status, 0)
        for option in ["URL", "--proxy URL", "--ca FILE", "--client-cert FILE", "--client-cert-password PASSWORD",
                       "--user NAME", "--password PASSWORD", "--http1", "--http2", "--scheme SCHEME", "--record FILE",
                       "--tap NAME", "--json", "--no-trace", "--token-encoding form|json"] {
            XCTAssertTrue(run.output.contains(option), "\(option) missing from:\n\(run.output)")
        }
        XCTAssertTrue(run.output.contains("Exit status 0 only when the sign-in completed"), run.output)
        XCTAssertTrue(run.output.contains("(default: client)"), run.output)
    }

    func testDefaults() throws {
        let configuration = try ClientCommand.runnerConfiguration(parsed(["client", url]), environment: [:])
        XCTAssertEqual(configuration.flow.resourceURL.serialized, url)
        XCTAssertEqual(configuration.flow.callbackScheme, "com.appian.tempo")
        XCTAssertEqual(configuration.flow.username, MockUser.demo.username)
        XCTAssertEqual(configuration.flow.password, MockUser.demo.password)
        XCTAssertEqual(configuration.flow.traceRunID?.count, 12)
        XCTAssertFalse(configuration.flow.expectsTraceEcho)
        XCTAssertNil(configuration.proxy)
        XCTAssertEqual(configuration.trust, .systemStore)
        XCTAssertNil(configuration.clientIdentity)
        XCTAssertEqual(configuration.protocols, .http2OrHTTP1)
        XCTAssertEqual(configuration.exchangeTimeout, .seconds(10))
    }

    func testOptionsReachTheRunner() throws {
        let configuration = try ClientCommand.runnerConfiguration(parsed([
            "client", url, "--proxy", "http://127.0.0.1:3128", "--ca", "ca.pem", "--user", "alice", "--password", "pw",
            "--http1", "--scheme", "appian", "--no-trace", "--expect-echo", "--timeout", "250ms",
            "--follow-up-method", "post", "--token-encoding", "json",
        ]), environment: ["HTTPS_PROXY": "http://10.0.0.1:1"])
        XCTAssertEqual(configuration.proxy, ForwardProxy(host: "127.0.0.1", port: 3128))
        XCTAssertEqual(configuration.trust, .caFile("ca.pem"))
        XCTAssertEqual(configuration.flow.username, "alice")
        XCTAssertEqual(configuration.flow.password, "pw")
        XCTAssertEqual(configuration.protocols, .http1Only)
        XCTAssertEqual(configuration.flow.callbackScheme, "appian")
        XCTAssertNil(configuration.flow.traceRunID)
        XCTAssertFalse(configuration.flow.expectsTraceEcho, "no echo to expect without a trace field")
        XCTAssertEqual(configuration.exchangeTimeout, .milliseconds(250))
        XCTAssertEqual(configuration.flow.followUpMethod, "POST")
        XCTAssertEqual(configuration.flow.tokenPost.encoding, .json)
    }

    func testTheProxyComesFromHTTPSProxyUnlessNoProxyExemptsTheHost() throws {
        let arguments = try parsed(["client", url])
        let target = AbsoluteURL(url)!
        XCTAssertEqual(try ClientCommand.proxy(arguments, environment: ["HTTPS_PROXY": "http://127.0.0.1:8080/"], target: target),
                       ForwardProxy(host: "127.0.0.1", port: 8080))
        XCTAssertEqual(try ClientCommand.proxy(arguments, environment: ["https_proxy": "[::1]:3128"], target: target),
                       ForwardProxy(host: "::1", port: 3128))
        XCTAssertNil(try ClientCommand.proxy(arguments, environment: ["HTTPS_PROXY": "http://127.0.0.1:8080",
                                                                      "NO_PROXY": "example.test, 127.0.0.1"], target: target))
        XCTAssertThrowsError(try ClientCommand.proxy(arguments, environment: ["HTTPS_PROXY": "socks5://h:1"], target: target))
    }

    func testBadValuesAreUsageErrors() {
        let cases: [([String], String)] = [
            (["http://127.0.0.1/suite/rest/x"], "URL must be an https URL"),
            ([url, "--http1", "--http2"], "give --http1 or --http2, not both"),
            ([url, "--proxy", "https://p:1"], "option --proxy expects http://HOST:PORT"),
            ([url, "--timeout", "0"], "option --timeout expects a positive duration"),
        ]
        for (words, message) in cases {
            let run = intact(["client"] + words)
            XCTAssertEqual(run.status, 2, "\(words): \(run.error)")
            XCTAssertTrue(run.error.contains(message), "\(words): \(run.error)")
        }
    }

    func testAnUnreadableClientCertificateIsACommandFailure() {
        let run = intact(["client", url, "--client-cert", "/nonexistent/me.p12"])
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.error.hasPrefix("intact: cannot use client certificate /nonexistent/me.p12:"), run.error)
    }

    /// A recording is never overwritten: the refusal says what to do instead,
    /// the two-clients workflow included.
    func testRecordingToAnExistingFileSaysWhatToDoInstead() throws {
        let directory = makeTemporaryDirectory()
        let file = directory + "/client.jsonl"
        XCTAssertTrue(FileManager.default.createFile(atPath: file, contents: Data("{}\n".utf8)))
        // A key of the test's own, made beforehand: the default one beside the machine's CA is
        // made (and announced on standard error) by whichever test runs first on a fresh machine.
        let key = directory + "/digest.key"
        _ = try DigestKeyFile.loadOrCreate(at: key)
        let run = intact(["client", url, "--record", file, "--digest-key", key])
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(run.error, "intact: \(file): recording already exists, and a recording is never overwritten or "
                       + "appended to: give --record another file (a second client of the same run its own, with its own "
                       + "--tap: intact verify takes both), or move this one away first\n")
        XCTAssertEqual(try String(contentsOfFile: file, encoding: .utf8), "{}\n", "left as it was")
    }
}
