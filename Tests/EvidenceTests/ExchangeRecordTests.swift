import XCTest
import Evidence
import HTTP
import Hashing

final class ExchangeRecordTests: XCTestCase {
    func testSecretsAreRedactedToTheirDigest() throws {
        let record = SampleRecords.record(1)
        let request = try XCTUnwrap(record.legs[0].request)
        let authorization = try XCTUnwrap(request.fields.first { $0.name == "Authorization" })
        XCTAssertTrue(authorization.isRedacted)
        XCTAssertEqual(authorization.value, SecretDigester.ephemeral.digest(Array("Bearer secret".utf8)))
        XCTAssertNotEqual(authorization.value, "sha256:" + SHA256Digest.of(Array("Bearer secret".utf8)).hex,
                          "never a plain digest that a guess can be tested against")
        XCTAssertEqual(request.fields.first { $0.name == "Cookie" }?.isRedacted, true)
        XCTAssertEqual(request.fields.first { $0.name == "Content-Type" }, RecordedField(name: "Content-Type", value: "application/json"))
        XCTAssertEqual(record.legs[0].response?.fields.first { $0.name == "Set-Cookie" }?.isRedacted, true)
        let json = String(decoding: try JSONEncoder().encode(record), as: UTF8.self)
        XCTAssertFalse(json.contains("Bearer secret"))
        XCTAssertFalse(json.contains("JSESSIONID=abc") || json.contains("JSESSIONID=def") || json.contains("\"abc\"")
                       || json.contains("\"def\""), "no cookie value in clear")
        // Cookies are recorded part by part: names and attributes in clear, each value digested.
        XCTAssertTrue(json.contains("JSESSIONID") && json.contains("HttpOnly"))
        XCTAssertTrue(json.contains(RedactionPolicy().redactedValue("def")))
    }

    func testRecordSecretsAndExtraNames() throws {
        let clear = SampleRecords.record(1, redaction: RedactionPolicy(recordSecrets: true))
        XCTAssertEqual(clear.legs[0].request?.firstValue("authorization"), "Bearer secret")
        let extra = RedactionPolicy(extraSecretNames: ["Intact-Trace"])
        XCTAssertTrue(extra.isSecret("intact-trace"))
        XCTAssertEqual(extra.record(HTTPField(name: "Intact-Trace", value: "t")).value,
                       extra.redactedValue("t"))
        XCTAssertFalse(RedactionPolicy().isSecret("Intact-Trace"))
        XCTAssertTrue(RedactionPolicy().isSecret("Proxy-AUTHORIZATION"))
        XCTAssertTrue(RedactionPolicy().isSecret("set-cookie"))
        XCTAssertFalse(RedactionPolicy().isSecret("Set-Cookie2"))
    }

    func testTraceIDAndIDsAreRecorded() {
        let record = SampleRecords.record(4)
        XCTAssertEqual(record.traceID, "trace-7")
        XCTAssertEqual(record.exchangeID, "ex-4")
        XCTAssertEqual(record.leg(.downstream)?.connectionID, "c-4")
        XCTAssertEqual(record.leg(.upstream)?.connectionID, "u-4")
        XCTAssertNil(record.leg(.client))
        XCTAssertEqual(record.legs[0].request?.scheme, "https", "origin form takes the connection's scheme")
    }

    func testFailureEncodesWhereAndRoundTrips() throws {
        var record = SampleRecords.record(2)
        record.legs[1].response = nil
        record.error = ExchangeRecord.Failure(kind: .tls, location: "upstream TLS handshake", message: "alert 42 bad certificate")
        let data = try JSONEncoder().encode(record)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
        let error = try XCTUnwrap(object["error"] as? [String: Any])
        XCTAssertEqual(error["where"] as? String, "upstream TLS handshake")
        XCTAssertEqual(error["kind"] as? String, "tls")
        XCTAssertEqual(try JSONDecoder().decode(ExchangeRecord.self, from: data), record)
    }

    func testBodyRecorderStoresUpToTheLimit() throws {
        var recorder = BodyRecorder(storeLimit: 10, using: .sha256)
        recorder.update(Array(0..<6))
        recorder.update(Array(6..<16))
        let (digest, stored) = recorder.finish()
        XCTAssertEqual(digest.length, 16)
        XCTAssertEqual(digest.sha256, SHA256Digest.of(Array(0..<16)))
        XCTAssertEqual(stored?.bytes, Array(0..<10))
        XCTAssertEqual(stored?.truncated, true)

        var unlimited = BodyRecorder(storeLimit: 100, using: .sha256)
        unlimited.update(Array(0..<16))
        XCTAssertEqual(unlimited.finish().stored, StoredBody(base64: Data(Array(0..<16)).base64EncodedString(), truncated: false))
        var none = BodyRecorder(using: .sha256)
        none.update([1])
        XCTAssertNil(none.finish().stored)
    }

    func testTimestampsAreEpochMilliseconds() throws {
        let data = try JSONEncoder().encode(MessageTimings(start: Timestamp(millisecondsSince1970: 1_700_000_000_123.5)))
        XCTAssertEqual(String(decoding: data, as: UTF8.self), #"{"start":1700000000123.5}"#)
    }
}
