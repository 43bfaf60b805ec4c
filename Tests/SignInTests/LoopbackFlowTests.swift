import AuthFlow
import Evidence
import Foundation
import HTTP
import TLS
import XCTest
@testable import SignIn

/// The whole flow, client → server over loopback TLS, with both recordings.
final class LoopbackFlowTests: XCTestCase {
    private func signIn(protocols: ClientRunner.Protocols, expectedVersion: HTTPVersion) throws {
        let server = try Loopback.start(self, recording: true)
        let clientPath = temporaryDirectory() + "/client.jsonl"
        let clientRecorder = try TapRecorder(path: clientPath, settings: .init(tap: "client", role: .client),
                                             toolVersion: "test", mode: "client")
        let runner = try ClientRunner(configuration: server.client { $0.protocols = protocols }, recorder: clientRecorder)
        let outcome = runner.runAndWait()
        XCTAssertTrue(outcome.succeeded, FlowReport.text(outcome))
        XCTAssertEqual(outcome.username, "demo")
        XCTAssertEqual(outcome.steps.map(\.step), [.protectedRequest, .loginPage, .credentials, .tokenExchange, .followUp])
        XCTAssertEqual(outcome.steps.map { $0.response?.status }, [401, 200, 302, 200, 200])
        XCTAssertNil(clientRecorder.close())

        let client = try RecordingReader.read(path: clientPath)
        let serverSide = try server.serverRecordingRead()
        XCTAssertEqual(client.records.count, 5)
        XCTAssertEqual(serverSide.records.count, 5)
        XCTAssertEqual(server.host.exchangeCount, 5)
        // Pairs by trace id, with the same step label on both sides.
        XCTAssertEqual(client.records.map(\.traceID), serverSide.records.map(\.traceID))
        XCTAssertEqual(client.records.map(\.authFlowStep), ["challenge-401", "login-page", "callback-redirect", "bootstrap",
                                                           "authenticated-request"])
        XCTAssertEqual(serverSide.records.map(\.authFlowStep), client.records.map(\.authFlowStep))
        for (sent, received) in zip(client.records, serverSide.records) {
            let clientLeg = try XCTUnwrap(sent.leg(.client))
            let serverLeg = try XCTUnwrap(received.leg(.server))
            // Nothing between them: every digest agrees, exact ones included.
            XCTAssertEqual(clientLeg.request?.digest, serverLeg.request?.digest, "\(sent.traceID ?? "")")
            XCTAssertEqual(clientLeg.response?.digest, serverLeg.response?.digest, "\(sent.traceID ?? "")")
            XCTAssertEqual(serverLeg.request?.version, expectedVersion)
            XCTAssertEqual(serverLeg.tls?.alpn, expectedVersion == .http2 ? "h2" : "http/1.1")
        }
    }

    func testSignInOverHTTP1WritesBothRecordings() throws {
        try signIn(protocols: .http1Only, expectedVersion: .http1_1)
    }

    func testSignInOverHTTP2WritesBothRecordings() throws {
        try signIn(protocols: .http2Only, expectedVersion: .http2)
    }

    func testTheServerPicksHTTP2WhenOfferedBoth() throws {
        try signIn(protocols: .http2OrHTTP1, expectedVersion: .http2)
    }
}
