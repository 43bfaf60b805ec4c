import AuthFlow
import Evidence
import Foundation
import TLS
import XCTest
@testable import SignIn

/// The document's second supported restriction: a server behind a gateway
/// that issues certificate challenges, and an app with an imported certificate.
final class ClientCertificateTests: XCTestCase {
    private func requiringServer(recording: Bool = false) throws -> Loopback {
        try Loopback.start(self, recording: recording) { configuration in
            configuration.clientCertificateRoots = .caFile(SharedCA.authority.certificatePath)
            configuration.server.requiresClientCertificate = true
        }
    }

    func testWithAnImportedPKCS12TheClientSignsInAndTheServerRecordsItsSubject() throws {
        let server = try requiringServer(recording: true)
        let issued = try SharedCA.authority.issueClient(commonName: "alice", password: "pw")
        let identity = try PKCS12.importIdentity(issued.pkcs12, password: "pw")
        for protocols in [ClientRunner.Protocols.http1Only, .http2Only] {
            let runner = try ClientRunner(configuration: server.client {
                $0.clientIdentity = identity
                $0.protocols = protocols
            })
            let outcome = runner.runAndWait()
            XCTAssertTrue(outcome.succeeded, "\(protocols): " + FlowReport.text(outcome))
        }
        let recording = try server.serverRecordingRead()
        XCTAssertEqual(recording.records.count, 10)
        XCTAssertTrue(recording.records.allSatisfy { $0.leg(.server)?.tls?.clientCertificateSubject == "CN=alice" },
                      "\(recording.records.map { $0.leg(.server)?.tls?.clientCertificateSubject ?? "none" })")
    }

    func testWithoutACertificateTheDiagnosisNamesTheCertificateChallenge() throws {
        let server = try requiringServer(recording: true)
        for protocols in [ClientRunner.Protocols.http1Only, .http2Only] {
            let outcome = try ClientRunner(configuration: server.client { $0.protocols = protocols }).runAndWait()
            XCTAssertFalse(outcome.succeeded)
            XCTAssertEqual(outcome.diagnosis?.mode, .clientCertRequired, "\(protocols): " + FlowReport.text(outcome))
            XCTAssertEqual(outcome.diagnosis?.step, .protectedRequest)
            XCTAssertEqual(outcome.diagnosis?.quote, DocumentSentence.clientCertificateImport.text)
            guard case .tlsFailed(_, clientCertificateRequested: true)? = outcome.steps.first?.transportFailure else {
                return XCTFail("\(protocols): \(String(describing: outcome.steps.first?.transportFailure))")
            }
        }
        // The server's tap saw the refused handshakes as broken exchanges.
        let recording = try server.serverRecordingRead()
        XCTAssertFalse(recording.records.isEmpty)
        XCTAssertTrue(recording.records.allSatisfy { $0.error?.kind == .tls }, "\(recording.records.map(\.error))")
        // Each is a connection event with its outcome, peer and time, so verify pairs it by time.
        for record in recording.records {
            let event = try XCTUnwrap(record.connection, "\(record)")
            XCTAssertEqual(event.outcome, .handshakeFailed)
            XCTAssertEqual(event.peer?.hasPrefix("127.0.0.1:"), true, "\(event)")
            XCTAssertNotNil(event.at)
        }
    }

    func testACertificateFromAnotherCAIsRefusedWithTheSameDiagnosis() throws {
        let server = try requiringServer()
        let otherCA = try CertificateAuthority.create(in: temporaryDirectory() + "/other")
        let stranger = try PKCS12.importIdentity(try otherCA.issueClient(commonName: "mallory", password: "pw").pkcs12, password: "pw")
        let outcome = try ClientRunner(configuration: server.client { $0.clientIdentity = stranger }).runAndWait()
        XCTAssertEqual(outcome.diagnosis?.mode, .clientCertRequired, FlowReport.text(outcome))
    }
}
