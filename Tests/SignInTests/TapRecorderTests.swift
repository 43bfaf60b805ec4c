import Evidence
import Foundation
import HTTP
import Hashing
import IntactTestSupport
@testable import SignIn
import XCTest

final class TapRecorderTests: XCTestCase {
    func testRecordsOneLegPerExchangeWithDigestsFromTheWireFormAndRedactedSecrets() throws {
        let path = temporaryDirectory() + "/server.jsonl"
        let recorder = try TapRecorder(path: path, settings: .init(tap: "server", role: .server, bodyStoreLimit: 4),
                                       toolVersion: "test", mode: "server", options: ["listen": "127.0.0.1:0"])
        let requestHead = HTTPRequestHead(method: "POST", path: "/suite/auth",
                                          fields: ["Host": "a.test", "Cookie": "JSESSIONID=x", "Intact-Trace": "r-3"])
        let raw = Array("POST /suite/auth HTTP/1.1\r\nHost: a.test\r\nCookie: JSESSIONID=x\r\nIntact-Trace: r-3\r\n".utf8)
        let digests = recorder.settings.redaction.digests
        var request = MessageObservation(request: requestHead, wire: .http1(head: raw), connectionScheme: "https",
                                         storeLimit: 4, using: digests, start: .now(), headersDone: .now())
        request.append(Array("un=d".utf8))
        request.append(Array("&pw=x".utf8))
        let responseHead = HTTPResponseHead(status: 302, version: .http2, fields: ["set-cookie": "JSESSIONID=y"])
        var response = MessageObservation(response: responseHead, wire: .http2Response(responseHead), storeLimit: 4,
                                          using: digests, start: .now(), headersDone: .now())
        let redaction = recorder.settings.redaction
        recorder.record(traceID: "r-3", step: "callback-redirect", connectionID: "c1",
                        tls: TLSDetails(version: "TLSv1.3", alpn: "h2"),
                        request: request.finish(end: .now(), redaction: redaction),
                        response: response.finish(complete: false, end: .now(), redaction: redaction))
        XCTAssertNil(recorder.close())

        let recording = try RecordingReader.read(path: path)
        XCTAssertEqual(recording.header.tap, "server")
        XCTAssertEqual(recording.header.mode, "server")
        XCTAssertEqual(recording.header.options["listen"], "127.0.0.1:0")
        XCTAssertEqual(recording.records.count, 1)
        let record = recording.records[0]
        XCTAssertEqual(record.exchangeID, "server-1")
        XCTAssertEqual(record.traceID, "r-3")
        XCTAssertEqual(record.authFlowStep, "callback-redirect")
        XCTAssertEqual(record.legs.map(\.role), [.server])
        let leg = try XCTUnwrap(record.leg(.server))
        XCTAssertEqual(leg.tls?.alpn, "h2")
        let recordedRequest = try XCTUnwrap(leg.request)
        XCTAssertEqual(recording.header.digests, RecordingHeader.Digests(digests))
        XCTAssertEqual(recording.header.digests.algorithm, .hmacSHA256)
        XCTAssertEqual(recordedRequest.digest.head.exact, SHA256Digest.of(raw, using: digests))
        XCTAssertNotEqual(recordedRequest.digest.head.exact, SHA256Digest.of(raw), "keyed, never plain SHA-256")
        XCTAssertEqual(recordedRequest.digest.body.length, 9)
        XCTAssertEqual(recordedRequest.digest.body.sha256, SHA256Digest.of(Array("un=d&pw=x".utf8), using: digests))
        XCTAssertEqual(recordedRequest.body?.bytes, Array("un=d".utf8))
        XCTAssertEqual(recordedRequest.body?.truncated, true)
        XCTAssertEqual(recordedRequest.scheme, "https")
        XCTAssertTrue(recordedRequest.firstValue("Cookie")?.hasPrefix(RedactionPolicy.redactedPrefix) ?? false)
        XCTAssertEqual(leg.response?.status, 302)
        XCTAssertEqual(leg.response?.complete, false)
        XCTAssertEqual(leg.response?.version, .http2)
    }

    func testExchangeIDsAreUniqueAndNamedAfterTheTap() throws {
        let recorder = try TapRecorder(path: temporaryDirectory() + "/c.jsonl", settings: .init(tap: "phone", role: .client),
                                       toolVersion: "test", mode: "client")
        XCTAssertEqual((0..<3).map { _ in recorder.nextExchangeID() }, ["phone-1", "phone-2", "phone-3"])
        XCTAssertNil(recorder.close())
    }

    func testAnExistingRecordingIsNeverOverwritten() throws {
        let path = temporaryDirectory() + "/exists.jsonl"
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data("keep".utf8)))
        XCTAssertThrowsError(try TapRecorder(path: path, settings: .init(tap: "server", role: .server),
                                             toolVersion: "test", mode: "server")) { error in
            XCTAssertEqual((error as? RecordingWriteError)?.kind, .alreadyExists)
        }
        XCTAssertEqual(FileManager.default.contents(atPath: path), Data("keep".utf8))
    }
}

extension XCTestCase {
    /// A fresh directory, removed when the test ends.
    func temporaryDirectory() -> String {
        makeTemporaryDirectory(prefix: "intact-signin")
    }
}
