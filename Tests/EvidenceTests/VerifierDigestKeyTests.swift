import XCTest
import Evidence
import Hashing
import HTTP

/// Recordings whose taps digested secrets under different keys: `verify`
/// says so, and does not call the secrets changed.
final class VerifierDigestKeyTests: XCTestCase {
    private typealias S = VerificationScenario

    private func scenario(key: UInt8) -> VerificationScenario {
        var scenario = S([S.exchange("/suite/auth?token=T0K3N&codeChallenge=c", trace: "t1",
                                     requestFields: [("Cookie", "JSESSIONID=abc"), ("Authorization", "Bearer x")])])
        scenario.redaction = RedactionPolicy(digester: SecretDigester(key: [UInt8](repeating: key, count: 32)))
        return scenario
    }

    func testSameKeyNoWarningAndSameDigestsAtEveryTap() throws {
        let recordings = scenario(key: 1).recordings()
        let report = try Verifier().verify(recordings)
        XCTAssertEqual(report.warnings, [])
        XCTAssertEqual(Set(recordings.compactMap { $0.records.first?.legs.first?.request?.path }).count, 1)
        XCTAssertTrue(report.policyHolds)
    }

    func testDifferentKeysAreNamedAndSecretsAreNotReportedChanged() throws {
        var recordings = scenario(key: 1).recordings()
        recordings[2] = scenario(key: 2).recordings()[2]
        XCTAssertNotEqual(recordings[1].records[0].legs[1].request?.path, recordings[2].records[0].legs[0].request?.path,
                          "the token's digest differs under another key")
        let report = try Verifier().verify(recordings)
        let warning = try XCTUnwrap(report.warnings.first)
        XCTAssertTrue(warning.contains("not digest secrets under the same digest key"), warning)
        XCTAssertTrue(warning.contains("server.jsonl (server): key " + SecretDigester(key: [UInt8](repeating: 2, count: 32)).fingerprint),
                      warning)
        XCTAssertEqual(report.exchanges.count, 1, "still paired across the taps")
        XCTAssertEqual(report.exchanges.first?.hops.map(\.verdict), [.identical, .identical, .identical])
        XCTAssertTrue(report.policyHolds)
    }

    func testSecretsInClearAgainstDigestsIsNamedToo() throws {
        var recordings = scenario(key: 1).recordings()
        var clear = scenario(key: 1)
        clear.redaction = RedactionPolicy(recordSecrets: true)
        recordings[0] = clear.recordings()[0]
        let report = try Verifier().verify(recordings)
        XCTAssertTrue(report.warnings.first?.contains("client.jsonl (client): secrets in clear") ?? false, "\(report.warnings)")
    }
}
