import AuthFlow
import Foundation
import SignIn
import XCTest
@testable import IntactCLI

/// Parses `words` (after `intact`) into the arguments of a runnable command.
func parsed(_ words: [String]) throws -> ParsedArguments {
    guard case .run(let arguments) = try ArgumentParser(root: CommandRegistry.root).parse(words) else {
        throw UsageError("asked for help", path: CommandPath(commands: [CommandRegistry.root]))
    }
    return arguments
}

final class ServerCommandTests: XCTestCase {
    func testHelpListsTheOptionsAndLabelsTheSyntheticParts() {
        let run = intact(["server", "--help"])
        XCTAssertEqual(run.status, 0)
        for option in ["--listen ADDR", "--external-url URL", "--users FILE", "--token-ttl DURATION", "--session-idle DURATION",
                       "--schemes LIST", "--require-client-cert CA", "--record FILE", "--tap NAME", "--ca-dir DIR",
                       "--cert FILE", "--key FILE", "--token-field NAME", "--verifier-field NAME", "--token-encoding form|json"] {
            XCTAssertTrue(run.output.contains(option), "\(option) missing from:\n\(run.output)")
        }
        XCTAssertTrue(run.output.contains("synthetic: token POST field carrying the sign-in token (default: token)"), run.output)
        XCTAssertTrue(run.output.contains("bootstrap response (synthetic)"), run.output)
        XCTAssertTrue(run.output.contains("(default: 127.0.0.1:8443)"), run.output)
        XCTAssertTrue(run.output.contains("the name in the recording") || run.output.contains("(default: server)"), run.output)
    }

    func testDefaultsFollowTheFlowSpecification() throws {
        let context = CommandContext(standardOutput: CapturedOutput().writer, standardError: CapturedOutput().writer,
                                     environment: ["HOME": "/home/ann"])
        let configuration = try ServerCommand.hostConfiguration(parsed(["server"]), context)
        XCTAssertEqual(configuration.listenAddress.description, "127.0.0.1:8443")
        XCTAssertTrue(configuration.externalOriginFollowsListener)
        XCTAssertEqual(configuration.server.externalOrigin.serialized, "https://127.0.0.1:8443")
        XCTAssertEqual(configuration.server.contextURL.serialized, "https://127.0.0.1:8443/suite")
        XCTAssertEqual(configuration.server.users, [.demo])
        XCTAssertEqual(configuration.server.tokenLifetime, 120)
        XCTAssertEqual(configuration.server.sessionIdleTimeout, 65 * 60)
        XCTAssertEqual(configuration.server.allowedCallbackSchemes, MockServerConfiguration.defaultCallbackSchemes)
        XCTAssertEqual(configuration.server.tokenPost, TokenPostFormat())
        XCTAssertFalse(configuration.server.requiresClientCertificate)
        XCTAssertNil(configuration.clientCertificateRoots)
        XCTAssertEqual(configuration.alpn, ["h2", "http/1.1"])
        guard case .developmentCA(let directory) = configuration.certificate else { return XCTFail("mints from the CA") }
        XCTAssertEqual(directory, "/home/ann/.local/share/intact")
    }

    func testOptionsReachTheMockServerConfiguration() throws {
        let directory = makeTemporaryDirectory()
        let users = directory + "/users.json"
        try Data(#"{"users": [{"username": "alice", "password": "pw"}]}"#.utf8).write(to: URL(fileURLWithPath: users))
        let configuration = try ServerCommand.hostConfiguration(parsed([
            "server", "--listen", "[::1]:0", "--external-url", "https://mysite.test:443/appian", "--users", users,
            "--token-ttl", "500ms", "--session-idle", "2m", "--schemes", "appian, custom", "--require-client-cert", "ca.pem",
            "--token-field", "t", "--verifier-field", "v", "--token-encoding", "json", "--cert", "c.pem", "--key", "k.pem",
            "--no-trace-echo", "--max-body", "100",
        ]))
        XCTAssertEqual(configuration.listenAddress.description, "[::1]:0")
        XCTAssertFalse(configuration.externalOriginFollowsListener)
        XCTAssertEqual(configuration.server.contextURL.serialized, "https://mysite.test/appian")
        XCTAssertEqual(configuration.server.tokenURL.serialized, "https://mysite.test/appian/mobileAuthTokenConsumer")
        XCTAssertEqual(configuration.server.users.map(\.username), ["alice"])
        XCTAssertEqual(configuration.server.tokenLifetime, 0.5)
        XCTAssertEqual(configuration.server.sessionIdleTimeout, 120)
        XCTAssertEqual(configuration.server.allowedCallbackSchemes, ["appian", "custom"])
        XCTAssertEqual(configuration.server.tokenPost, TokenPostFormat(tokenField: "t", verifierField: "v", encoding: .json))
        XCTAssertTrue(configuration.server.requiresClientCertificate)
        XCTAssertEqual(configuration.clientCertificateRoots, .caFile("ca.pem"))
        XCTAssertFalse(configuration.server.echoesTraceField)
        XCTAssertEqual(configuration.server.maxRequestBodyBytes, 100)
        guard case .files(let certificate, let key) = configuration.certificate else { return XCTFail("uses the files") }
        XCTAssertEqual([certificate, key], ["c.pem", "k.pem"])
    }

    func testBadValuesAreUsageErrorsNamingTheOption() {
        let cases: [([String], String)] = [
            (["--listen", "localhost:8443"], "option --listen expects an IP address and port"),
            (["--external-url", "mysite.test"], "option --external-url expects an https URL"),
            (["--token-ttl", "soon"], "option --token-ttl expects a positive duration"),
            (["--token-ttl", "-1"], "option --token-ttl expects a positive duration"),
            (["--token-encoding", "xml"], "option --token-encoding expects form or json, got 'xml'"),
            (["--token-field", "x", "--verifier-field", "x"], "--token-field and --verifier-field must differ"),
            (["--cert", "c.pem"], "--cert and --key go together"),
            (["--cert", "c.pem", "--key", "k.pem", "--ca-dir", "d"], "give either --cert and --key or --ca-dir"),
            (["--schemes", "a b"], "option --schemes expects URL schemes"),
            (["--external-url", "https://h.test/x", "--context", "y"], "either in --external-url or with --context"),
        ]
        for (options, message) in cases {
            let run = intact(["server"] + options)
            XCTAssertEqual(run.status, 2, "\(options): \(run.error)")
            XCTAssertTrue(run.error.contains(message), "\(options): \(run.error)")
            XCTAssertTrue(run.error.contains("Usage: intact server"), run.error)
        }
    }

    func testABadUsersFileIsReportedWithItsLineColumnAndReason() throws {
        let file = makeTemporaryDirectory() + "/users.json"
        try Data(#"{"users": []}"#.utf8).write(to: URL(fileURLWithPath: file))
        let run = intact(["server", "--users", file])
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(run.error, "intact: \(file):1:11: at users: the users file lists no users\n")
    }
}
