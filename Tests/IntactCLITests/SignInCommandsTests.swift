import AuthFlow
import Evidence
import Foundation
import SignIn
import IntactTestSupport
import XCTest
@testable import IntactCLI

/// `intact server` and `intact client` together, in-process, over loopback.
final class SignInCommandsTests: XCTestCase {
    /// Runs `intact server` with `options` on an ephemeral port while `body` runs; returns its exit status and output.
    private func withServer(_ options: [String], _ body: (MockServerHost.Started) throws -> Void) throws -> Invocation {
        let output = CapturedOutput()
        let error = CapturedOutput()
        var thrown: (any Error)?
        let status = try ServerCommand.serve(parsed(["server", "--listen", "127.0.0.1:0"] + options),
                                             CommandContext(standardOutput: output.writer, standardError: error.writer)) { started in
            do { try body(started) } catch let failure { thrown = failure }
        }
        if let thrown { throw thrown }
        return Invocation(status: status, output: output.text, error: error.text)
    }

    func testCurlGetsThe401JSONAndTheClientSignsInWithBothRecordings() throws {
        let directory = makeTemporaryDirectory()
        let ca = directory + "/certs/ca-cert.pem"
        var clientRun: Invocation?
        let server = try withServer(["--ca-dir", directory + "/certs", "--record", directory + "/server.jsonl"]) { started in
            let url = "https://127.0.0.1:\(started.listenAddress.port)/suite/rest/whatever"
            let curl = try ToolRun.run("/usr/bin/curl", ["-sS", "--cacert", ca, url, "-w", "\n%{http_code} %{http_version}"])
            XCTAssertEqual(curl.status, 0, curl.error)
            let lines = curl.output.split(separator: "\n")
            XCTAssertEqual(lines.last, "401 2", curl.output)
            let json = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: String]
            XCTAssertEqual(json, ["contextUrl": "https://127.0.0.1:\(started.listenAddress.port)/suite",
                                  "tokenUrl": "https://127.0.0.1:\(started.listenAddress.port)/suite/mobileAuthTokenConsumer"])
            clientRun = intact(["client", url, "--ca", ca, "--expect-echo", "--record", directory + "/client.jsonl"])
        }
        XCTAssertEqual(server.status, 0, server.error)
        XCTAssertTrue(server.output.contains("intact server: listening on 127.0.0.1:"), server.output)
        XCTAssertTrue(server.output.contains("(created now); trust \(ca)"), server.output)
        XCTAssertTrue(server.output.contains("Stopped after 6 exchanges."), server.output)
        let client = try XCTUnwrap(clientRun)
        XCTAssertEqual(client.status, 0, client.output + client.error)
        XCTAssertTrue(client.output.contains("5. follow-up (after sign-in), app: pass"), client.output)
        XCTAssertTrue(client.output.contains("Signed in as demo; the follow-up request succeeded"), client.output)
        XCTAssertTrue(client.output.hasSuffix("Recorded 5 exchanges to \(directory)/client.jsonl.\n"), client.output)
        let clientRecording = try RecordingReader.read(path: directory + "/client.jsonl")
        let serverRecording = try RecordingReader.read(path: directory + "/server.jsonl")
        XCTAssertEqual(clientRecording.header.tap, "client")
        XCTAssertEqual(serverRecording.header.tap, "server")
        let traced = Set(clientRecording.records.compactMap(\.traceID))
        XCTAssertEqual(traced.count, 5)
        XCTAssertTrue(traced.isSubset(of: Set(serverRecording.records.compactMap(\.traceID))))
    }

    func testAGatewayThatRequiresAClientCertificate() throws {
        let directory = makeTemporaryDirectory()
        let ca = directory + "/certs/ca-cert.pem"
        XCTAssertEqual(intact(["ca", "issue-client", "alice", "--dir", directory + "/certs", "--out", directory + "/alice.p12"]).status, 0)
        var withCertificate: Invocation?
        var without: Invocation?
        var withoutJSON: Invocation?
        let server = try withServer(["--ca-dir", directory + "/certs", "--require-client-cert", ca]) { started in
            let url = "https://127.0.0.1:\(started.listenAddress.port)/suite/rest/whatever"
            withCertificate = intact(["client", url, "--ca", ca, "--client-cert", directory + "/alice.p12", "--http1"])
            without = intact(["client", url, "--ca", ca])
            withoutJSON = intact(["client", url, "--ca", ca, "--json", "--no-trace"])
        }
        XCTAssertEqual(server.status, 0)
        XCTAssertTrue(server.output.contains("client cert:      required, issued by the CA in \(ca)"), server.output)
        XCTAssertEqual(withCertificate?.status, 0, withCertificate?.output ?? "")
        let refused = try XCTUnwrap(without)
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.output.contains("Sign-in FAILED at protected-request (steps 1-5): client-cert-required"), refused.output)
        XCTAssertTrue(refused.output.contains(DocumentSentence.clientCertificateImport.text), refused.output)
        let json = try XCTUnwrap(withoutJSON)
        XCTAssertEqual(json.status, 1)
        let outcome = try JSONDecoder().decode(FlowOutcome.self, from: Data(json.output.utf8))
        XCTAssertEqual(outcome.diagnosis?.mode, .clientCertRequired)
        XCTAssertNil(outcome.steps.first?.traceID)
    }

    func testAnUnreachableServerIsATransportFailure() {
        let run = intact(["client", "https://127.0.0.1:1/suite/rest/whatever", "--timeout", "5s"])
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.output.contains("Sign-in FAILED at protected-request (steps 1-5): transport-failure"), run.output)
        XCTAssertTrue(run.output.contains("connect failed"), run.output)
    }
}
