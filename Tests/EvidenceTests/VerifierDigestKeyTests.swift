import XCTest
import Evidence
import Hashing
import HTTP

/// Recordings whose taps digested under different keys: `verify` refuses to
/// compare their digests and says the keys differ; taps that share a key
/// compare, whatever each keeps in clear.
final class VerifierDigestKeyTests: XCTestCase {
    private typealias S = VerificationScenario

    private func digester(_ key: UInt8) -> SecretDigester {
        SecretDigester(key: [UInt8](repeating: key, count: SecretDigester.keyByteCount))
    }

    private func scenario(key: UInt8) -> VerificationScenario {
        var scenario = S([S.exchange("/suite/auth?token=T0K3N&codeChallenge=c", trace: "t1",
                                     requestFields: [("Cookie", "JSESSIONID=abc"), ("Authorization", "Bearer x")])])
        scenario.redaction = RedactionPolicy(digester: digester(key))
        return scenario
    }

    func testSameKeyNoWarningAndSameDigestsAtEveryTap() throws {
        let recordings = scenario(key: 1).recordings()
        let report = try Verifier().verify(recordings)
        XCTAssertEqual(report.warnings, [])
        XCTAssertEqual(Set(recordings.compactMap { $0.records.first?.legs.first?.request?.path }).count, 1)
        XCTAssertEqual(Set(recordings.map(\.header.digests)),
                       [RecordingHeader.Digests(algorithm: .hmacSHA256, key: digester(1).fingerprint)])
        XCTAssertEqual(Set(recordings.compactMap { $0.records.first?.legs.first?.request?.digest.head.exact }).count, 1,
                       "one key, one digest of the same head at every tap")
        XCTAssertTrue(report.policyHolds)
    }

    func testDifferentKeysAreRefusedNamingBothKeys() throws {
        var recordings = scenario(key: 1).recordings()
        recordings[2] = scenario(key: 2).recordings()[2]
        XCTAssertNotEqual(recordings[1].records[0].legs[1].request?.digest.head.exact,
                          recordings[2].records[0].legs[0].request?.digest.head.exact, "another key, another digest")
        XCTAssertThrowsError(try Verifier().verify(recordings)) { error in
            guard case .differentDigests(let list)? = error as? VerificationInputError else {
                return XCTFail("expected differentDigests, got \(error)")
            }
            XCTAssertEqual(list.map(\.tap), ["client", "proxy-a", "server"])
            let text = "\(error)"
            XCTAssertTrue(text.contains("the digest keys differ"), text)
            XCTAssertTrue(text.contains("server.jsonl (server): HMAC-SHA-256 digests under key " + digester(2).fingerprint), text)
            XCTAssertTrue(text.contains("client.jsonl (client): HMAC-SHA-256 digests under key " + digester(1).fingerprint), text)
            XCTAssertTrue(text.contains("--digest-key FILE"), text)
        }
    }

    func testPlainDigestsOfAnOlderBuildAgainstKeyedOnesAreRefused() throws {
        var recordings = scenario(key: 1).recordings()
        var older = scenario(key: 1)
        older.digests = .sha256
        recordings[0] = older.recordings()[0]
        XCTAssertEqual(recordings[0].header.digests, .unkeyed)
        XCTAssertThrowsError(try Verifier().verify(recordings)) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("client.jsonl (client): plain SHA-256 digests"), text)
            XCTAssertTrue(text.contains("the digest algorithms differ"), text)
        }
    }

    /// Recordings of an older build: plain SHA-256 digests of messages, secrets
    /// under different keys. The messages compare; the secrets are named as
    /// not comparable instead of changed.
    func testUnkeyedDigestsWithSecretsUnderDifferentKeysWarn() throws {
        func unkeyed(_ key: UInt8) -> VerificationScenario {
            var scenario = scenario(key: key)
            scenario.digests = .sha256
            return scenario
        }
        var recordings = unkeyed(1).recordings()
        recordings[2] = unkeyed(2).recordings()[2]
        XCTAssertNotEqual(recordings[1].records[0].legs[1].request?.path, recordings[2].records[0].legs[0].request?.path,
                          "the token's digest differs under another key")
        let report = try Verifier().verify(recordings)
        let warning = try XCTUnwrap(report.warnings.first)
        XCTAssertTrue(warning.contains("not digest secrets under the same digest key"), warning)
        XCTAssertTrue(warning.contains("server.jsonl (server): key " + digester(2).fingerprint), warning)
        XCTAssertEqual(report.exchanges.count, 1, "still paired across the taps")
        XCTAssertEqual(report.exchanges.first?.hops.map(\.verdict), [.identical, .identical, .identical])
        XCTAssertTrue(report.policyHolds)
    }

    /// A tap that records secrets in clear still keys its digests with the
    /// setup's key, so it compares with the others; only its secret values
    /// are named as not comparable.
    func testSecretsInClearUnderTheSameKeyCompareAndAreNamed() throws {
        var recordings = scenario(key: 1).recordings()
        var clear = scenario(key: 1)
        clear.redaction = RedactionPolicy(recordSecrets: true, digester: digester(1))
        recordings[0] = clear.recordings()[0]
        XCTAssertEqual(recordings[0].header.digests, recordings[1].header.digests)
        let report = try Verifier().verify(recordings)
        XCTAssertTrue(report.warnings.first?.contains("client.jsonl (client): secrets in clear") ?? false, "\(report.warnings)")
        XCTAssertEqual(report.exchanges.first?.hops.map(\.verdict), [.identical, .identical, .identical])
    }
}
