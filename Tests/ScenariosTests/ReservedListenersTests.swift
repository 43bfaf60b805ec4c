import Foundation
import Glibc
import IntactTestSupport
import XCTest
@testable import Scenarios

/// The runner reserves each listening socket once and never closes one
/// before the child that serves it holds its own copy.
final class ReservedListenersTests: XCTestCase {
    private func inode(of descriptor: Int32) -> UInt {
        var status = stat()
        XCTAssertEqual(fstat(descriptor, &status), 0)
        return UInt(status.st_ino)
    }

    func testFiveDistinctPortsListenFromTheReservationOn() throws {
        let reserved = try ReservedListeners(fixed: nil)
        XCTAssertEqual(Set(reserved.ports.listeners.map(\.port)).count, 5)
        for (role, port) in reserved.ports.listeners {
            XCTAssertNotNil(reserved.descriptor(role))
            XCTAssertTrue(LoopbackSocket.isListening(port: port), "\(role) listens before anything starts")
        }
    }

    func testAFixedPortThatIsTakenIsNamed() throws {
        // Every fixed port is one `first` holds (ports next to them may belong to
        // anyone), so the first one reserved, the mock server's, is named.
        let first = try ReservedListeners(fixed: nil)
        XCTAssertThrowsError(try ReservedListeners(fixed: first.ports)) { error in
            XCTAssertEqual(error as? ScenarioError, .portInUse(port: first.ports.server, role: "the mock server"))
        }
    }

    /// The child gets the very socket the runner reserved (same inode) at
    /// descriptor 3, the port never stops listening, and the runner's copy
    /// is closed only once the child holds one: stopping the child closes the port.
    func testTheRunnerHandsTheSocketOverAndClosesItsCopyOnlyAfterTheSpawn() throws {
        let directory = makeTemporaryDirectory(prefix: "intact-scenario-test")
        let reserved = try ReservedListeners(fixed: nil)
        let plan = ScenarioPlan(scenario: try ScenarioFixtures.example("nginx/good"), ports: reserved.ports,
                                runDirectory: directory, intactExecutable: "/bin/false",
                                loadBalancerExecutable: "/bin/false", listening: .inheritReserved)
        let runner = ScenarioRunner(options: ScenarioRunner.Options(intactExecutable: "/bin/false", runParent: directory))
        let socket = try XCTUnwrap(reserved.descriptor(.tapB))
        let reservedInode = inode(of: socket)
        let port = reserved.ports.tapB
        let pidFile = directory + "/stub.pid"
        let stub = ProcessCommand(role: .tapB, executable: "/bin/sh",
                                  arguments: ["-c", "echo $$ > \(pidFile).new; mv \(pidFile).new \(pidFile); exec sleep 30"],
                                  inheritsListener: true)
        try runner.start(stub, plan: plan, reserved: reserved)
        defer { runner.stopAll() }
        XCTAssertNil(reserved.descriptor(.tapB), "the runner closed its copy once the child held one")
        XCTAssertNotNil(reserved.descriptor(.server), "other reservations are kept")
        var pidText: String?
        for _ in 0..<3000 where pidText == nil {
            pidText = try? String(contentsOfFile: pidFile, encoding: .utf8)
            if pidText == nil { usleep(5000) }
        }
        let pid = try XCTUnwrap(pidText.flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) })
        let link = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/3")
        XCTAssertEqual(link, "socket:[\(reservedInode)]", "the child holds the reserved socket at descriptor 3")
        XCTAssertTrue(LoopbackSocket.isListening(port: port), "the port listens without a gap")
        runner.stopAll()
        XCTAssertFalse(LoopbackSocket.isListening(port: port), "the port closes with the child that held it")
    }

    func testTheConfigurationCheckBorrowsTheLoadBalancersSocketAndTheRunnerKeepsIt() throws {
        let directory = makeTemporaryDirectory(prefix: "intact-scenario-test")
        let reserved = try ReservedListeners(fixed: nil)
        let socket = try XCTUnwrap(reserved.descriptor(.loadBalancer))
        let check = ProcessCommand(role: .configCheck, executable: "/bin/sh",
                                   arguments: ["-c", "readlink /proc/self/fd/3"], inheritsListener: true)
        let child = try ChildProcess.spawn(check, outputFile: directory + "/out", errorFile: directory + "/out",
                                           listener: socket)
        XCTAssertEqual(child.wait(timeout: 30), .exited(0))
        XCTAssertEqual(try String(contentsOfFile: directory + "/out", encoding: .utf8), "socket:[\(inode(of: socket))]\n")
        XCTAssertEqual(reserved.descriptor(.loadBalancer), socket)
        XCTAssertTrue(LoopbackSocket.isListening(port: reserved.ports.loadBalancer))
    }
}
