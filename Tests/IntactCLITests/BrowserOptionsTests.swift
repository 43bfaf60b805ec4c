import AuthFlow
import Browser
import Foundation
import IntactTestSupport
import SignIn
import XCTest
@testable import IntactCLI

final class BrowserOptionsTests: XCTestCase {
    private let url = "https://127.0.0.1:8443/suite/rest/whatever"

    func testTheSimulatedBrowserOnTheAppsPathIsTheDefault() throws {
        let configuration = try ClientCommand.runnerConfiguration(parsed(["client", url]), environment: [:])
        guard case .simulated = configuration.browser else { return XCTFail("\(configuration.browser)") }
        XCTAssertEqual(configuration.browserPath, .sameAsApp)
        guard case .sameAsApp = configuration.browserIdentity else { return XCTFail() }
    }

    func testChromiumMissingNamesThePackage() {
        XCTAssertThrowsError(try ClientCommand.runnerConfiguration(parsed(["client", url, "--browser", "chromium"]),
                                                                   environment: ["PATH": "/nonexistent"])) { error in
            XCTAssertTrue("\(error)".contains("install the Debian package chromium (apt-get install chromium)"), "\(error)")
        }
    }

    func testChromiumAndItsTimeoutReachTheRunner() throws {
        let directory = makeTemporaryDirectory()
        let fake = directory + "/chromium"
        FileManager.default.createFile(atPath: fake, contents: Data("#!/bin/sh\n".utf8), attributes: [.posixPermissions: 0o755])
        let configuration = try ClientCommand.runnerConfiguration(
            parsed(["client", url, "--browser", "chromium", "--browser-timeout", "5s"]), environment: ["PATH": directory])
        guard case .chromium(let settings) = configuration.browser else { return XCTFail("\(configuration.browser)") }
        XCTAssertEqual(settings.executable, fake)
        XCTAssertEqual(settings.timeout, .seconds(5))
    }

    func testTheAppAndTheBrowserTakeTheirOwnPaths() throws {
        let configuration = try ClientCommand.runnerConfiguration(parsed([
            "client", url, "--app-proxy", "http://127.0.0.1:3128", "--browser-proxy", "direct", "--browser-client-cert", "none",
        ]), environment: ["HTTPS_PROXY": "http://127.0.0.1:9"])
        XCTAssertEqual(configuration.proxy, ForwardProxy(host: "127.0.0.1", port: 3128), "--app-proxy wins over HTTPS_PROXY")
        XCTAssertEqual(configuration.browserPath, .direct)
        guard case .none = configuration.browserIdentity else { return XCTFail() }
        let direct = try ClientCommand.runnerConfiguration(parsed(["client", url, "--app-proxy", "direct", "--browser-proxy",
                                                                   "http://127.0.0.1:8080"]),
                                                           environment: ["HTTPS_PROXY": "http://127.0.0.1:9"])
        XCTAssertNil(direct.proxy)
        XCTAssertEqual(direct.browserPath, .proxy(ForwardProxy(host: "127.0.0.1", port: 8080)))
    }

    func testABadPathIsAUsageError() {
        let run = intact(["client", url, "--browser-proxy", "socks5://h:1"])
        XCTAssertEqual(run.status, 2)
        XCTAssertTrue(run.error.contains("expects http://HOST:PORT or direct"), run.error)
    }

    func testDemoRefusesABrowserCertificateWithoutTheSplit() {
        let alone = intact(["demo", "--browser-client-cert"])
        XCTAssertEqual(alone.status, 2)
        XCTAssertTrue(alone.error.contains("--browser-client-cert goes with --split client-cert-app-only"), alone.error)
    }

    /// A demo refused for its options claims no output directory: the
    /// default `./intact-demo-DATE-TIME` is made only once every option is
    /// known good (it used to be made first and left behind, empty).
    func testARefusedDemoLeavesNoDirectoryBehind() throws {
        let directory = makeTemporaryDirectory()
        let previous = FileManager.default.currentDirectoryPath
        XCTAssertTrue(FileManager.default.changeCurrentDirectoryPath(directory))
        defer { _ = FileManager.default.changeCurrentDirectoryPath(previous) }
        for arguments in [["demo", "--browser-client-cert"], ["demo", "--public-host", "bad_name"],
                          ["demo", "--public-host", "intact-hsts.test", "--keep"], ["demo", "--fault", "no-such-fault"]] {
            let run = intact(arguments)
            XCTAssertEqual(run.status, 2, "\(arguments): \(run.error)")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory), [])
    }

    func testChromiumTakesABrowserCertificateInPEMAndBadFilesAreNamed() throws {
        let directory = makeTemporaryDirectory()
        let fake = directory + "/chromium"
        FileManager.default.createFile(atPath: fake, contents: Data("#!/bin/sh\n".utf8), attributes: [.posixPermissions: 0o755])
        let made = try ToolRun.openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                        "-keyout", directory + "/key.pem", "-out", directory + "/cert.pem", "-days", "1",
                                        "-subj", "/CN=browser user"])
        XCTAssertEqual(made.status, 0, made.error)
        let both = directory + "/both.pem"
        try (Data(contentsOf: URL(fileURLWithPath: directory + "/cert.pem")) + Data(contentsOf: URL(fileURLWithPath: directory + "/key.pem")))
            .write(to: URL(fileURLWithPath: both))
        let configuration = try ClientCommand.runnerConfiguration(
            parsed(["client", url, "--browser", "chromium", "--browser-client-cert", both]), environment: ["PATH": directory])
        guard case .identity(let identity) = configuration.browserIdentity else { return XCTFail("\(configuration.browserIdentity)") }
        XCTAssertEqual(identity.subject, "CN=browser user")
        for (file, expected) in [(directory + "/none.p12", "No such file or directory"),
                                 (directory + "/cert.pem", "not a PEM private key"),
                                 (fake, "neither PEM (a certificate and its private key) nor PKCS#12")] {
            let run = intact(["client", url, "--browser-client-cert", file])
            XCTAssertEqual(run.status, 1, run.error)
            XCTAssertTrue(run.error.contains("cannot use browser client certificate \(file): "), run.error)
            XCTAssertTrue(run.error.contains(expected), run.error)
        }
    }

    func testABadResolveOrPublicHostIsAUsageError() throws {
        let configuration = try ClientCommand.runnerConfiguration(
            parsed(["client", "https://intact-hsts.test:8443/suite/rest/x", "--resolve", "intact-hsts.test:8443:127.0.0.1"]), environment: [:])
        XCTAssertEqual(configuration.resolve.address(host: "intact-hsts.test", port: 8443), "127.0.0.1")
        for (arguments, expected) in [
            (["client", url, "--resolve", "intact.test:x:127.0.0.1"], "--resolve 'intact.test:x:127.0.0.1': the port 'x' is not a number"),
            (["client", url, "--resolve", "a.test:1:127.0.0.1", "--resolve", "a.test:1:127.0.0.2"], "a.test:1 is already given"),
            (["demo", "--public-host", "127.0.0.1"], "--public-host expects a host name such as intact-hsts.test (not an IP address)"),
            (["demo", "--public-host", "bad_name"], "--public-host expects a host name"),
            (["demo", "--public-host", "intact-hsts.test", "--keep"], "--public-host does not go with --keep"),
        ] {
            let run = intact(arguments)
            XCTAssertEqual(run.status, 2, "\(arguments): \(run.error)")
            XCTAssertTrue(run.error.contains(expected), run.error)
        }
    }

    func testHelpNamesTheBrowserOptions() {
        let client = intact(["client", "--help"])
        for option in ["--browser simulated|chromium", "--chromium PATH", "--browser-timeout", "--app-proxy URL|direct",
                       "--browser-proxy URL|direct", "--browser-client-cert FILE|none", "--resolve HOST:PORT:ADDRESS"] {
            XCTAssertTrue(client.output.contains(option), "\(option) missing")
        }
        let demo = intact(["demo", "--help"])
        XCTAssertTrue(demo.output.contains("--split NAME"), demo.output)
        XCTAssertTrue(demo.output.contains("per-app-vpn-browser-off"), demo.output)
        XCTAssertTrue(demo.output.contains("--public-host NAME"), demo.output)
    }
}
