import Evidence
import HTTP
import Hashing
import IntactTestSupport
@testable import Proxy
import XCTest

/// Which digests an exchange's record holds: the same with head digest memos
/// kept across a connection's exchanges as without any, and none at all
/// (lengths only) when nothing reads them (`RecordingSettings.takesDigests`).
final class RecordedDigestsTests: XCTestCase {
    /// Runs one GET through a flow, answered 200 with `body`; returns its record.
    private func exchange(_ request: HTTPRequestHead, response: HTTPResponseHead, body: [UInt8],
                          settings: RecordingSettings = Script.settings,
                          headMemos: HeadDigestMemos? = nil) throws -> ExchangeRecord {
        var script = FlowScript(settings: settings, headMemos: headMemos)
        script.start(request)
        script.send(.requestEnd(trailers: nil))
        script.open()
        script.send(.responseHead(response, wire: Script.wire(response)))
        if !body.isEmpty { script.send(.responseBody(body)) }
        script.send(.responseEnd(trailers: nil))
        return try XCTUnwrap(script.record)
    }

    /// Each message's digest, in leg order (downstream request, response, upstream request, response).
    private func digests(_ record: ExchangeRecord) -> [MessageDigest?] {
        record.legs.flatMap { [$0.request?.digest, $0.response?.digest] }
    }

    func testExchangesSharingTheirConnectionsMemosRecordTheDigestsOfExchangesWithoutAny() throws {
        let memos = HeadDigestMemos(acrossExchanges: true)
        let body = Script.bytes(300)
        // The same request twice, one whose fields changed (a value, an added name), then the first again.
        let requests = [Script.get("/a"), Script.get("/a"),
                        Script.get("/b", extra: [("Accept", "text/html"), ("Cookie", "a=1")]), Script.get("/a")]
        let responses = [Script.ok(length: 300), Script.ok(length: 300),
                         HTTPResponseHead(status: 200, fields: ["Content-Length": "300", "Content-Type": "text/html"]),
                         Script.ok(length: 300)]
        for (request, response) in zip(requests, responses) {
            let shared = try exchange(request, response: response, body: body, headMemos: memos)
            let alone = try exchange(request, response: response, body: body)
            XCTAssertEqual(digests(shared), digests(alone), "\(request.path): a memo never changes a digest")
            XCTAssertEqual(digests(shared).count, 4)
            XCTAssertNotNil(memos.request, "every head keeps its memo for the connection's next exchange")
            XCTAssertNotNil(memos.response)
        }
    }

    func testAMemoOfOneExchangeIsDroppedByItsSecondHead() throws {
        let memos = HeadDigestMemos()
        _ = try exchange(Script.get("/a"), response: Script.ok(length: 3), body: [1, 2, 3], headMemos: memos)
        XCTAssertNil(memos.request, "the upstream request read the memo last")
        XCTAssertNil(memos.response, "the downstream response read the memo last")
    }

    func testWithoutDigestsTheRecordKeepsLengthsAndWhatIsInClearAndHashesNothing() throws {
        let settings = RecordingSettings(tap: "test-tap", clock: Script.clock, takesDigests: false)
        XCTAssertNil(settings.contentDigests)
        let body = Script.bytes(1000)
        let record = try exchange(Script.get("/hello"), response: Script.ok(length: 1000), body: body, settings: settings)
        for leg in record.legs {
            let request = try XCTUnwrap(leg.request), response = try XCTUnwrap(leg.response)
            XCTAssertEqual(request.method, "GET")
            XCTAssertEqual(request.path, "/hello")
            XCTAssertEqual(request.digest.head.method, "GET")
            XCTAssertEqual(request.digest.head.target, .untaken)
            XCTAssertEqual(response.status, 200)
            XCTAssertEqual(response.digest.head.status, 200)
            XCTAssertEqual(response.digest.body.length, 1000, "the length is counted all the same")
            for digest in [request.digest, response.digest] {
                XCTAssertEqual(digest.head.exact, .untaken)
                XCTAssertEqual(digest.head.semantic, .untaken)
                XCTAssertTrue(digest.head.fields.isEmpty)
                XCTAssertEqual(digest.body.sha256, .untaken)
            }
        }
        let taken = try exchange(Script.get("/hello"), response: Script.ok(length: 1000), body: body)
        XCTAssertNotEqual(taken.leg(.upstream)?.response?.digest.body.sha256, .untaken)
        XCTAssertEqual(taken.leg(.upstream)?.response?.digest.body.sha256, SHA256Digest.of(body, using: Script.settings.digests))
        XCTAssertEqual(ExchangeLogLine(record).bytes, ExchangeLogLine(taken).bytes, "the log line reads no digest")
    }

    func testTheDigestOfNothingIsTakenOnceAndEqualsAOneShotOverNoBytes() {
        for function in [DigestFunction.sha256, SecretDigester(key: Array(repeating: 9, count: 32)).digests] {
            var running = function.begin()
            XCTAssertEqual(SHA256Digest.finishing(&running), SHA256Digest.of([UInt8](), using: function))
            var fed = function.begin()
            fed.update([UInt8]())
            XCTAssertEqual(SHA256Digest.finishing(&fed), SHA256Digest.of([UInt8](), using: function))
        }
        XCTAssertEqual(SHA256Digest.of([UInt8](), using: .sha256).hex,
                       "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        let hmac = SecretDigester(key: Array("key".utf8)).digests
        XCTAssertEqual(SHA256Digest.of([UInt8](), using: hmac).hex,
                       "5d5d139563c95b5967b9bd9a8c9b233a9dedb45072794cd232dc1b74832607d0", "RFC 2104 HMAC-SHA-256(\"key\", \"\")")
    }

    /// A whole proxy (`ProxyRuntime`) takes digests exactly when something
    /// reads them: a recording file, or an exchange log that reads digests
    /// (`ProxyConfiguration.exchangeLogReadsDigests`); with neither, its
    /// records (the log's) carry lengths and what is in clear only.
    func testAProxyTakesDigestsExactlyWhenARecordingOrItsLogReadsThem() throws {
        let directory = TemporaryDirectory.create(prefix: "intact-digests-taken")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for (recorded, logReads) in [(false, false), (false, true), (true, false), (true, true)] {
            let playbook = try ProxyPlaybook { configuration in
                configuration.exchangeLogReadsDigests = logReads
                if recorded {
                    configuration.recording = ProxyConfiguration.Recording(path: directory + "/\(logReads).jsonl")
                }
            }
            let expected = recorded || logReads
            XCTAssertEqual(playbook.server.configuration.takesDigests, expected)
            let client = try playbook.connectClient()
            client.send("GET http://origin.test/one HTTP/1.1\r\nHost: origin.test\r\n\r\n")
            let origin = try playbook.acceptDial(host: "origin.test", port: 80)
            origin.expect("GET /one HTTP/1.1\r\nHost: origin.test\r\n\r\n")
            playbook.answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", from: origin, reaches: client)
            let record = try XCTUnwrap(playbook.records.first)
            let context = "recording \(recorded), log reads digests \(logReads)"
            XCTAssertEqual(record.legs.count, 2, context)
            for leg in record.legs {
                let request = try XCTUnwrap(leg.request?.digest), response = try XCTUnwrap(leg.response?.digest)
                XCTAssertEqual(response.body.length, 2, context)
                XCTAssertEqual(request.head.method, "GET", context)
                for digest in [request.head.exact, request.head.semantic, response.head.exact, response.head.semantic,
                               response.body.sha256] {
                    XCTAssertEqual(digest != .untaken, expected, context)
                }
                XCTAssertEqual(response.head.fields.isEmpty, !expected, context)
            }
            if expected {
                XCTAssertEqual(record.leg(.downstream)?.response?.digest.body, record.leg(.upstream)?.response?.digest.body,
                               "\(context): the body forwarded unchanged")
            }
        }
    }
}
