import Foundation
import Proxy
import XCTest
@testable import IntactCLI

/// `--upstream-proxy`, `--no-upstream-proxy`, and `HTTPS_PROXY`/`NO_PROXY`
/// when the option is absent, said at start.
final class UpstreamProxyOptionTests: XCTestCase {
    private func configure(_ words: [String], environment: [String: String]) throws -> (ProxyConfiguration, String) {
        let error = CapturedOutput()
        let context = CommandContext(standardOutput: CapturedOutput().writer, standardError: error.writer,
                                     environment: environment)
        let directory = makeTemporaryDirectory()
        let configuration = try ProxyCommand.makeConfiguration(parsed(["proxy", "--ca-dir", directory + "/ca"] + words),
                                                               context)
        return (configuration, error.text)
    }

    func testTheOptionWinsOverTheEnvironmentAndHidesCredentials() throws {
        let (configuration, said) = try configure(
            ["--upstream-proxy", "http://ann:secret@127.0.0.1:3128", "--no-upstream-proxy", "localhost",
             "--no-upstream-proxy", ".internal.test"],
            environment: ["HTTPS_PROXY": "http://127.0.0.1:9999", "HOME": "/nonexistent"])
        let proxy = try XCTUnwrap(configuration.upstreamProxy)
        XCTAssertEqual(proxy.description, "http://127.0.0.1:3128")
        XCTAssertEqual(proxy.address.authorization, "Basic " + Data("ann:secret".utf8).base64EncodedString())
        XCTAssertNil(proxy.address(for: "localhost"))
        XCTAssertNil(proxy.address(for: "api.internal.test"))
        XCTAssertNotNil(proxy.address(for: "example.test"))
        XCTAssertTrue(said.contains("intact proxy: upstream connections go through http://127.0.0.1:3128 except to "
                                    + "localhost, .internal.test (--upstream-proxy)\n"), said)
        XCTAssertFalse(said.contains("secret"), said)
        XCTAssertEqual(configuration.recordedOptions["upstreamProxy"], "http://127.0.0.1:3128")
    }

    func testHTTPSProxyAndNoProxyAreHonouredWhenTheOptionIsAbsentAndSaidSo() throws {
        let (configuration, said) = try configure([], environment: ["https_proxy": "http://127.0.0.1:3128/",
                                                                    "NO_PROXY": "localhost, 127.0.0.1"])
        let proxy = try XCTUnwrap(configuration.upstreamProxy)
        XCTAssertNil(proxy.address(for: "127.0.0.1"))
        XCTAssertNotNil(proxy.address(for: "example.test"))
        XCTAssertTrue(said.contains("intact proxy: upstream connections go through http://127.0.0.1:3128 except to "
                                    + "localhost, 127.0.0.1 (from HTTPS_PROXY and NO_PROXY; --upstream-proxy overrides)"), said)
        let (direct, quiet) = try configure([], environment: [:])
        XCTAssertNil(direct.upstreamProxy)
        XCTAssertFalse(quiet.contains("upstream connections"), quiet)
    }

    func testMalformedUpstreamProxiesAreNamed() {
        for (words, environment, expected) in [
            (["--upstream-proxy", "https://127.0.0.1:3128"], [:], "option --upstream-proxy expects http://[USER:PASSWORD@]HOST:PORT, got 'https://127.0.0.1:3128'"),
            (["--upstream-proxy", "127.0.0.1"], [:], "got '127.0.0.1'"),
            (["--upstream-proxy", "http://user@127.0.0.1:3128"], [:], "got 'http://user@127.0.0.1:3128'"),
            (["--no-upstream-proxy", "a.test"], [:], "--no-upstream-proxy needs --upstream-proxy (or HTTPS_PROXY)"),
            ([], ["HTTPS_PROXY": "socks5://127.0.0.1:1080"], "HTTPS_PROXY is not http://[USER:PASSWORD@]HOST:PORT: 'socks5://127.0.0.1:1080'"),
        ] as [([String], [String: String], String)] {
            XCTAssertThrowsError(try configure(words, environment: environment), "\(words)") { error in
                let message = (error as? UsageError)?.message ?? "\(error)"
                XCTAssertTrue(message.contains(expected), message)
            }
        }
    }
}
