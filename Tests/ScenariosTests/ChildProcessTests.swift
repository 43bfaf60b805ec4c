import Foundation
import Glibc
import IntactTestSupport
import XCTest
@testable import Scenarios

final class ChildProcessTests: XCTestCase {
    private func shell(_ script: String) -> ProcessCommand {
        ProcessCommand(role: .server, executable: "/bin/sh", arguments: ["-c", script])
    }

    func testExitStatusAndSeparateOutputFiles() throws {
        let directory = makeTemporaryDirectory(prefix: "intact-scenario-test")
        let child = try ChildProcess.spawn(shell("echo out; echo err >&2; exit 3"),
                                           outputFile: directory + "/out", errorFile: directory + "/err")
        XCTAssertEqual(child.wait(timeout: 30), .exited(3))
        XCTAssertEqual(child.termination, .exited(3))
        XCTAssertEqual(try String(contentsOfFile: directory + "/out", encoding: .utf8), "out\n")
        XCTAssertEqual(try String(contentsOfFile: directory + "/err", encoding: .utf8), "err\n")
    }

    func testOneFileMergesBothStreamsAndStandardInputIsEmpty() throws {
        let log = makeTemporaryDirectory(prefix: "intact-scenario-test") + "/log"
        let child = try ChildProcess.spawn(shell("echo a; echo b >&2; cat; echo end"), outputFile: log, errorFile: log)
        XCTAssertEqual(child.wait(timeout: 30), .exited(0))
        XCTAssertEqual(try String(contentsOfFile: log, encoding: .utf8), "a\nb\nend\n")
    }

    func testStopEndsAChildWithSIGTERM() throws {
        let log = makeTemporaryDirectory(prefix: "intact-scenario-test") + "/log"
        let child = try ChildProcess.spawn(shell("exec sleep 30"), outputFile: log, errorFile: log)
        XCTAssertNil(child.wait(timeout: 0.05))
        XCTAssertNil(child.termination)
        XCTAssertEqual(child.stop(grace: 30), .signalled(SIGTERM))
        XCTAssertEqual(kill(child.pid, 0), -1, "the PID is reaped")
    }

    func testStopKillsAChildThatIgnoresSIGTERMAfterTheGracePeriod() throws {
        let log = makeTemporaryDirectory(prefix: "intact-scenario-test") + "/log"
        let child = try ChildProcess.spawn(shell("trap '' TERM; echo ready; while :; do sleep 1; done"),
                                           outputFile: log, errorFile: log)
        // Wait until the trap is installed, or SIGTERM could land before it.
        while (try? String(contentsOfFile: log, encoding: .utf8)) != "ready\n" { usleep(2000) }
        XCTAssertEqual(child.stop(grace: 0.2), .signalled(SIGKILL))
    }

    func testTheChildRunsInItsOwnProcessGroup() throws {
        let log = makeTemporaryDirectory(prefix: "intact-scenario-test") + "/log"
        let child = try ChildProcess.spawn(shell("exec sleep 30"), outputFile: log, errorFile: log)
        defer { child.stop(grace: 5) }
        XCTAssertEqual(getpgid(child.pid), child.pid)
    }

    func testReleasingARunningChildKillsIt() throws {
        let log = makeTemporaryDirectory(prefix: "intact-scenario-test") + "/log"
        var child: ChildProcess? = try ChildProcess.spawn(shell("exec sleep 30"), outputFile: log, errorFile: log)
        let pid = try XCTUnwrap(child?.pid)
        child = nil
        XCTAssertEqual(kill(pid, 0), -1, "killed and reaped on release")
    }

    func testAMissingExecutableIsASpawnError() {
        let log = makeTemporaryDirectory(prefix: "intact-scenario-test") + "/log"
        let command = ProcessCommand(role: .loadBalancer, executable: "/nonexistent/nginx", arguments: [])
        assertThrows(.spawnFailed(executable: "/nonexistent/nginx", reason: "No such file or directory")) {
            try ChildProcess.spawn(command, outputFile: log, errorFile: log)
        }
    }

    func testShellQuotingOfPrintedCommands() {
        let command = ProcessCommand(role: .loadBalancer, executable: "/usr/sbin/nginx",
                                     arguments: ["-g", "daemon off;", "-p", "/tmp/a b/", "it's", "127.0.0.1:80", ""])
        XCTAssertEqual(command.description, #"/usr/sbin/nginx -g 'daemon off;' -p '/tmp/a b/' 'it'\''s' 127.0.0.1:80 ''"#)
    }
}
