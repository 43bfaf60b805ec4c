import Foundation
import Glibc
import IntactTestSupport
import XCTest
@testable import Browser

/// The process driver with stand-ins for Chromium (shell scripts that crash,
/// hang or talk nonsense): bounded time, the process group killed, no profile left.
final class ChromiumBrowserTests: XCTestCase {
    private let task = BrowserSignIn.Task(loginURL: "https://127.0.0.1:9/suite?codeChallenge=C&scheme=s",
                                          callbackScheme: "s", username: "u", password: "p")

    /// An executable script `body` in a fresh directory.
    private func fakeBrowser(_ body: String) throws -> (path: String, directory: String) {
        let directory = makeTemporaryDirectory(prefix: "intact-fake-chromium")
        let path = directory + "/chromium"
        try ("#!/bin/sh\n" + body + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
        return (path, directory)
    }

    /// True while `pid` runs (a zombie waiting for its reaper has ended).
    private func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return stat[stat.index(close, offsetBy: 2)] != "Z"
    }

    private func profiles() -> Set<String> {
        Set(((try? FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())) ?? [])
            .filter { $0.hasPrefix("intact-chromium-") })
    }

    private func run(_ executable: String, timeout: Duration = .seconds(10)) -> BrowserRun {
        ChromiumBrowser(settings: ChromiumSettings(executable: executable, timeout: timeout)).signInAndWait(task)
    }

    func testABrowserThatCrashesAtOnceIsDiagnosedWithItsExitAndOutput() throws {
        let before = profiles()
        let fake = try fakeBrowser("echo 'Trace/breakpoint trap: cannot start' >&2\nexit 3")
        let run = run(fake.path)
        guard case .browserEnded(let termination, let last)? = run.failure else { return XCTFail("\(String(describing: run.failure))") }
        XCTAssertTrue(termination.contains("exited with status 3"), termination)
        XCTAssertTrue(termination.contains("cannot start"), "its last output is named: \(termination)")
        XCTAssertEqual(last, "started")
        XCTAssertEqual(profiles(), before, "no profile left behind")
    }

    func testABrowserThatHangsIsStoppedAtTheLimitWithItsWholeGroup() throws {
        let before = profiles()
        let fake = try fakeBrowser("sleep 60 &\necho $! > \"$(dirname \"$0\")/child.pid\"\nexec sleep 60")
        let started = ContinuousClock.now
        let run = run(fake.path, timeout: .milliseconds(800))
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(8), "bounded by the limit, not by the browser")
        guard case .timedOut(let seconds, let last)? = run.failure else { return XCTFail("\(String(describing: run.failure))") }
        XCTAssertEqual(seconds, 0.8, accuracy: 0.001)
        XCTAssertEqual(last, "started", "no DevTools answer ever came")
        let child = try XCTUnwrap(pid_t(String(contentsOfFile: fake.directory + "/child.pid", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)))
        XCTAssertFalse(isRunning(child), "the browser's child was killed with its group")
        XCTAssertEqual(profiles(), before)
    }

    func testABrowserThatWritesNonsenseIsAProtocolError() throws {
        let fake = try fakeBrowser("printf 'not json\\000' >&4\nexec sleep 60")
        let run = run(fake.path)
        guard case .protocolError(let reason)? = run.failure else { return XCTFail("\(String(describing: run.failure))") }
        XCTAssertTrue(reason.contains("not JSON"), reason)
    }

    func testTheDevToolsPipeIsOnDescriptorsThreeAndFour() throws {
        // Answers createTarget with an error, on fd 4, after reading the command from fd 3.
        let fake = try fakeBrowser("""
            command=$(dd bs=1 count=40 <&3 2>/dev/null)
            case "$command" in *Target.createTarget*) printf '{"id":1,"error":{"code":-1,"message":"no tabs here"}}\\000' >&4;; esac
            exec sleep 60
            """)
        let run = run(fake.path)
        XCTAssertEqual(run.failure.map(String.init(describing:)), "DevTools: Target.createTarget refused: no tabs here (DevTools error -1)")
    }

    func testAMissingExecutableNamesThePackage() {
        XCTAssertThrowsError(try ChromiumSettings.locate(environment: ["PATH": "/nonexistent"])) { error in
            XCTAssertEqual("\(error)", "--browser chromium needs Chromium, and chromium or chromium-browser is not on PATH: "
                           + "install the Debian package chromium (apt-get install chromium)")
        }
        XCTAssertThrowsError(try ChromiumSettings.locate("/nonexistent/chromium", environment: [:])) { error in
            XCTAssertEqual("\(error)", "/nonexistent/chromium is not an executable file")
        }
    }

    func testAMissingCertutilNamesItsPackage() {
        XCTAssertThrowsError(try ChromiumProfile.create(trustedCA: "/x.pem", environment: ["PATH": "/nonexistent"])) { error in
            XCTAssertEqual(error as? BrowserLaunchError, .toolMissing(tool: "certutil", package: "libnss3-tools"))
        }
    }

    func testTheCommandLineKeepsBackgroundTrafficOffTheProxyAndProxiesLoopback() {
        let settings = ChromiumSettings(executable: "/usr/bin/chromium", path: .forwardProxy(host: "127.0.0.1", port: 8080), http1Only: true)
        let arguments = settings.arguments(profile: "/p", runningAsRoot: true)
        XCTAssertTrue(arguments.contains("--remote-debugging-pipe"))
        XCTAssertTrue(arguments.contains("--user-data-dir=/p"))
        XCTAssertTrue(arguments.contains("--proxy-server=http://127.0.0.1:8080"))
        let bypass = arguments.first { $0.hasPrefix("--proxy-bypass-list=") }
        XCTAssertEqual(bypass?.hasPrefix("--proxy-bypass-list=<-loopback>;*.google.com;"), true)
        XCTAssertTrue(arguments.contains("--disable-http2"))
        XCTAssertTrue(arguments.contains("--no-sandbox"))
        let direct = ChromiumSettings(executable: "c").arguments(profile: "/p", runningAsRoot: false)
        XCTAssertTrue(direct.contains("--no-proxy-server"))
        XCTAssertFalse(direct.contains("--no-sandbox"))
    }
}
