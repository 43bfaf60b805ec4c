import AuthFlow
import Evidence
import Faults
import Foundation
import TLS
import IntactTestSupport
import XCTest

/// TLS faults through the whole flow: the proxy's handshake with the client
/// changed per connection, the client's diagnosis, the proxy's record.
final class TLSFaultFlowTests: XCTestCase {
    func testACertificateFromAnUnknownCAFailsTheClientsHandshakeAndTheRecordSaysWhy() throws {
        let run = try FaultFlowRun.run(rules: """
            {"rules": [{"name": "untrusted", "match": {}, "actions": [{"action": "unknown-ca-certificate"}]}]}
            """)
        XCTAssertFalse(run.outcome.succeeded)
        let diagnosis = try XCTUnwrap(run.outcome.diagnosis)
        XCTAssertEqual(diagnosis.mode, .transportFailure)
        XCTAssertEqual(diagnosis.step, .protectedRequest)
        guard case .tlsFailed(_, clientCertificateRequested: false)? = run.outcome.steps.last?.transportFailure else {
            return XCTFail("expected a TLS failure: \(String(describing: run.outcome.steps.last?.transportFailure))")
        }
        let record = try XCTUnwrap(run.proxyRecords(with: "untrusted").first)
        XCTAssertEqual(record.error?.kind, .tls)
        XCTAssertEqual(record.faults.first?.detail,
                       "unknown-ca-certificate on the connection: server certificate from an unknown CA presented")
    }

    func testAClientCertificateFromAnotherCAThanTheOneRequiredIsRefused() throws {
        let other = try CertificateAuthority.create(in: makeTemporaryDirectory(prefix: "intact-other-ca") + "/ca")
        // The client presents a certificate from the demo CA; the gateway wants one from `other`.
        let run = try FaultFlowRun.run(try FaultPreset.rules(specification: "client-cert-required:ca=\(other.certificatePath)"),
                                       protocols: .http2Only, clientCertificate: true)
        try assertDiagnosis(run, preset: "client-cert-required", at: .protectedRequest)
        let record = try XCTUnwrap(run.proxyRecords(with: "client-cert-required").first)
        XCTAssertEqual(record.error?.kind, .tls)
        XCTAssertTrue(record.faults.first?.detail?.contains(other.certificatePath) ?? false)
    }
}
