import AuthFlow
import Evidence
import Foundation
import TLS
import Wire
import XCTest
@testable import Scenarios

/// Two Intact reverse proxies in a row on loopback, each a child process of
/// the built `intact` run exactly as a user runs it:
///
///     client → tap A → [nothing, or the test's intermediary on `ports.middle`] → tap B → mock server
///
/// Every part records (`client`, `tap-a`, `tap-b`, `server`), so the four
/// recordings verify as one path. The test owns the instance on one thread.
final class TapChain {
    /// The taps' and the server's ports; `middle` is where tap A sends its
    /// requests when something sits between the taps.
    struct Ports {
        var tapA: Int
        var middle: Int
        var tapB: Int
        var server: Int
    }

    let intact: String
    let directory: String
    let ports: Ports
    /// The four listening sockets, reserved once; each goes to what serves it.
    private let reserved: ReservedListeners
    var caDirectory: String { directory + "/ca" }
    var caCertificate: String { caDirectory + "/" + CertificateAuthority.certificateFileName }
    var origin: String { "https://127.0.0.1:\(ports.tapA)" }
    private var children: [ChildProcess] = []

    /// Lays the chain out in `directory` on ports it reserves (listening
    /// sockets it hands to the children), with its development CA. Starts nothing.
    init(intact: String, directory: String) throws {
        self.intact = intact
        self.directory = directory
        reserved = try ReservedListeners(fixed: nil)
        let free = reserved.ports
        ports = Ports(tapA: free.tapA, middle: free.loadBalancer, tapB: free.tapB, server: free.server)
        _ = try CertificateAuthority.loadOrCreate(in: directory + "/ca")
    }

    private func recording(_ tap: String) -> [String] {
        ["--record", directory + "/\(tap).jsonl", "--tap", tap]
    }

    /// Starts the mock server, tap B in front of it, and tap A in front of
    /// `tapAUpstream` (tap B's port for a chain with nothing between).
    func start(tapAUpstream: Int) throws {
        try start(.server, [
            "server", "--listen-fd", "3", "--external-url", origin, "--ca-dir", caDirectory,
        ] + recording("server"))
        try start(.tapB, [
            "proxy", "--listen-fd", "3", "--mode", "reverse:https://127.0.0.1:\(ports.server)",
            "--ca-dir", caDirectory, "--upstream-ca", caCertificate,
        ] + recording("tap-b"))
        try start(.tapA, [
            "proxy", "--listen-fd", "3", "--mode", "reverse:https://127.0.0.1:\(tapAUpstream)",
            "--ca-dir", caDirectory, "--upstream-ca", caCertificate,
        ] + recording("tap-a"))
    }

    /// Starts `role` on the socket reserved for it (connections wait in its
    /// backlog until the child accepts), then closes the chain's copy.
    private func start(_ role: ProcessCommand.Role, _ arguments: [String]) throws {
        let log = directory + "/\(role.rawValue).log"
        let command = ProcessCommand(role: role, executable: intact, arguments: arguments, inheritsListener: true)
        let child = try ChildProcess.spawn(command, outputFile: log, errorFile: log, listener: reserved.descriptor(role))
        reserved.handedOver(role)
        children.append(child)
    }

    /// The socket reserved for `ports.middle`, for the test's own intermediary.
    func takeMiddleSocket() throws -> ListeningSocket {
        let descriptor = try XCTUnwrap(reserved.descriptor(.loadBalancer), "the middle socket was taken before")
        let socket = try ListeningSocket(inheriting: dup(descriptor))
        reserved.handedOver(.loadBalancer)
        return socket
    }

    /// Runs `intact client` through tap A to its end and reads its JSON outcome.
    func runClient() throws -> ClientObservation {
        let output = directory + "/client.json"
        let client = try ChildProcess.spawn(ProcessCommand(role: .client, executable: intact, arguments: [
            "client", origin + ScenarioPlan.resourcePath, "--ca", caCertificate, "--json",
        ] + recording("client")), outputFile: output, errorFile: directory + "/client.log")
        let ended = try XCTUnwrap(client.wait(timeout: 60), "the client did not finish within 60 s")
        let data = try Data(contentsOf: URL(fileURLWithPath: output))
        return ClientObservation(termination: ended, outcome: try JSONDecoder().decode(FlowOutcome.self, from: data))
    }

    /// Stops the taps and the server, newest first, so their recordings are complete.
    func stop() {
        for child in children.reversed() { child.stop(grace: 5) }
        children.removeAll()
    }

    /// Verifies the four recordings in path order under the strict policy.
    func verify() throws -> VerificationReport {
        let taps = ScenarioPlan.tapNames
        let recordings = try taps.map { try RecordingReader.read(path: directory + "/\($0).jsonl") }
        return try Verifier(Verifier.Configuration(policy: .strict, path: taps)).verify(recordings)
    }
}
