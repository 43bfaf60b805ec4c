import HTTP
import XCTest
@testable import Faults

/// Body actions: streaming and buffering, framing fix-ups, the buffer limit.
final class ExchangeFaultsBodyTests: XCTestCase {
    private func engine(_ actions: String, leg: String = "response", bufferLimit: Int = FaultEngine.defaultBufferLimit) -> FaultEngine {
        Fixture.engine("{\"rules\": [{\"name\": \"b\", \"match\": {\"leg\": \"\(leg)\"}, \"actions\": [\(actions)]}]}", bufferLimit: bufferLimit)
    }

    private func respond(_ engine: FaultEngine, _ chunks: [String], fields: [(String, String)] = [], method: String = "GET", status: Int = 200) -> Exchange {
        Exchange(engine, request: Fixture.request(method, "/suite/rest/x"), response: Fixture.response(status, fields),
                 responseBody: chunks.map { Array($0.utf8) })
    }

    func testReplaceBodyFixesLengthAndType() throws {
        let x = respond(engine(#"{"action": "replace-body", "body": "<p>no</p>", "contentType": "text/html"}"#),
                        ["{\"contextUrl\":", "\"x\"}"], fields: [("Content-Type", "application/json"), ("Content-Length", "18")])
        let head: HTTPResponseHead = try XCTUnwrap(x.responseOut.forwardedHead())
        XCTAssertEqual(head.fields["Content-Type"], "text/html")
        XCTAssertEqual(head.fields["Content-Length"], "9")
        XCTAssertEqual(x.responseOut.forwardedText(), "<p>no</p>")
        XCTAssertTrue(x.responseOut.ended())
        XCTAssertEqual(x.faults.applied.map(\.change), ["body replaced: 18 → 9 bytes"])
    }

    func testRegexBodyHoldsTheHeadAndMatchesAcrossChunks() throws {
        var faults = engine(#"{"action": "regex-body", "pattern": "token=([a-z]+)", "template": "token=X$1"}"#, leg: "request")
            .begin(ExchangeContext(step: .tokenPost, request: Fixture.request("POST", "/t")))
        let head = Fixture.request("POST", "/t", [("Content-Length", "25")])
        XCTAssertEqual(faults.request(.head(head)), [], "the head waits for the body")
        XCTAssertEqual(faults.request(.body(Array("token=ab".utf8))), [])
        XCTAssertEqual(faults.request(.body(Array("cd&codeVerifier=v".utf8))), [])
        let out = faults.request(.end(trailers: nil))
        let sent: HTTPRequestHead = try XCTUnwrap(out.forwardedHead())
        XCTAssertEqual(sent.fields["Content-Length"], "26")
        XCTAssertEqual(out.forwardedText(), "token=Xabcd&codeVerifier=v")
        XCTAssertEqual(out.last, .forward(.end(trailers: nil)))
        XCTAssertEqual(faults.applied.map(\.change), ["1 match of /token=([a-z]+)/ replaced: 25 → 26 bytes"])
    }

    func testTruncateStreamsAcrossChunkBoundaries() throws {
        let x = respond(engine(#"{"action": "truncate-body", "bytes": 7}"#), ["abcd", "efgh", "ijkl"], fields: [("Content-Length", "12")])
        let head: HTTPResponseHead = try XCTUnwrap(x.responseOut.forwardedHead())
        XCTAssertEqual(head.fields["Content-Length"], "7")
        XCTAssertEqual(x.responseOut.forwardedChunks().map { String(decoding: $0, as: UTF8.self) }, ["abcd", "efg"])
        XCTAssertTrue(x.responseOut.ended())
        XCTAssertEqual(x.faults.applied.map(\.change), ["body cut at 7 of 12 bytes"])
        // The head goes on before any body arrives: nothing is buffered.
        if case .forward(.head) = x.responseOut.first {} else { XCTFail("head first: \(x.responseOut)") }
    }

    func testTruncateWithoutADeclaredLengthLeavesFramingToTheCodec() throws {
        let chunked = respond(engine(#"{"action": "truncate-body", "bytes": 3}"#), ["abcdef"], fields: [("Transfer-Encoding", "chunked")])
        let head: HTTPResponseHead = try XCTUnwrap(chunked.responseOut.forwardedHead())
        XCTAssertEqual(head.fields["Transfer-Encoding"], "chunked")
        XCTAssertNil(head.fields["Content-Length"])
        XCTAssertEqual(chunked.responseOut.forwardedText(), "abc")
    }

    func testRechunkCutsExactChunksAcrossInputBoundaries() throws {
        let x = respond(engine(#"{"action": "rechunk-body", "bytes": 4}"#), ["abcde", "fgh", "ijklmnopq"], fields: [("Content-Length", "17")])
        XCTAssertEqual(x.responseOut.forwardedChunks().map { String(decoding: $0, as: UTF8.self) }, ["abcd", "efgh", "ijkl", "mnop", "q"])
        let head: HTTPResponseHead = try XCTUnwrap(x.responseOut.forwardedHead())
        XCTAssertEqual(head.fields["Content-Length"], "17")
        XCTAssertEqual(x.faults.applied.map(\.change), ["body re-cut into 5 chunks of 4 bytes"])
    }

    func testGzipOutputDecompressesWithGzip() throws {
        let json = String(repeating: "{\"contextUrl\": \"https://app.example.test/suite\"}\n", count: 40)
        let x = respond(engine(#"{"action": "gzip-body"}"#), [String(json.prefix(100)), String(json.dropFirst(100))],
                        fields: [("Content-Type", "application/json"), ("Content-Length", String(json.utf8.count))])
        let head: HTTPResponseHead = try XCTUnwrap(x.responseOut.forwardedHead())
        let body = x.responseOut.forwardedBody()
        XCTAssertEqual(head.fields["Content-Encoding"], "gzip")
        XCTAssertEqual(head.fields["Content-Length"], String(body.count))
        XCTAssertLessThan(body.count, json.utf8.count / 4)
        XCTAssertEqual(try gunzip(body), Array(json.utf8))
    }

    func testGzipLeavesAnEncodedBodyAlone() throws {
        let x = respond(engine(#"{"action": "gzip-body"}"#), ["zz"], fields: [("Content-Encoding", "br"), ("Content-Length", "2")])
        XCTAssertEqual(x.responseOut.forwardedText(), "zz")
        XCTAssertEqual(x.faults.applied.map(\.change), ["not compressed: the body is already br-encoded"])
    }

    func testBufferedThenStreamedStagesChain() throws {
        let x = respond(engine(#"{"action": "regex-body", "pattern": "a", "template": "AA"}, {"action": "rechunk-body", "bytes": 3}"#),
                        ["xaxa", "x"], fields: [("Content-Length", "5")])
        XCTAssertEqual(x.responseOut.forwardedChunks().map { String(decoding: $0, as: UTF8.self) }, ["xAA", "xAA", "x"])
        let head: HTTPResponseHead = try XCTUnwrap(x.responseOut.forwardedHead())
        XCTAssertEqual(head.fields["Content-Length"], "7")
    }

    func testRewriteURLsInJSONAndHTMLBodies() throws {
        let rewrite = engine(#"{"action": "rewrite-urls", "host": "internal.example.test", "scheme": "http", "in": ["body"]}"#)
        let json = #"{"contextUrl": "https://app.example.test/suite", "tokenUrl": "https:\/\/app.example.test:8443\/suite\/mobileAuthTokenConsumer"}"#
        let x = respond(rewrite, [json], fields: [("Content-Length", String(json.utf8.count))])
        XCTAssertEqual(x.responseOut.forwardedText(), #"{"contextUrl": "http://internal.example.test/suite", "tokenUrl": "http:\/\/internal.example.test:8443\/suite\/mobileAuthTokenConsumer"}"#)
        let head: HTTPResponseHead = try XCTUnwrap(x.responseOut.forwardedHead())
        XCTAssertEqual(head.fields["Content-Length"], String(x.responseOut.forwardedBody().count))

        let paths = engine(#"{"action": "rewrite-urls", "pathFrom": "/suite", "pathTo": "/x", "in": ["body"]}"#)
        let html = #"<a href="https://app.example.test/suite/login">in</a> <a href="https://app.example.test/suitex">out</a>"#
        let y = respond(paths, [html])
        XCTAssertEqual(y.responseOut.forwardedText(), #"<a href="https://app.example.test/x/login">in</a> <a href="https://app.example.test/suitex">out</a>"#)
        XCTAssertEqual(y.faults.applied.count, 1)
    }

    func testBufferLimitFailsTheExchangeCleanly() throws {
        var faults = engine(#"{"action": "regex-body", "pattern": "a", "template": "b"}"#, bufferLimit: 10)
            .begin(ExchangeContext(step: .other, request: Fixture.request("GET", "/")))
        _ = faults.request(.head(Fixture.request("GET", "/")))
        XCTAssertEqual(faults.response(.head(Fixture.response(200))), [])
        XCTAssertEqual(faults.response(.body(Array(repeating: 0x61, count: 8))), [])
        let out = faults.response(.body(Array(repeating: 0x61, count: 8)))
        let failure = try XCTUnwrap(out.failure())
        XCTAssertEqual(out.count, 1, "nothing was sent before the failure")
        XCTAssertEqual(failure.rule, "b")
        XCTAssertEqual(failure.action, .regexBody)
        XCTAssertTrue(failure.reason.contains("10-byte buffering limit"), failure.reason)
        XCTAssertEqual(faults.response(.end(trailers: nil)), [])
        XCTAssertEqual(faults.applied.last?.change, "exchange failed: \(failure.reason)")
    }

    func testBodylessResponsesAreLeftAlone() throws {
        let replace = engine(#"{"action": "replace-body", "body": "x"}, {"action": "gzip-body"}"#)
        for (method, status) in [("HEAD", 200), ("GET", 204), ("GET", 304)] {
            let x = respond(replace, [], fields: [("Content-Length", "40")], method: method, status: status)
            let head: HTTPResponseHead = try XCTUnwrap(x.responseOut.forwardedHead())
            XCTAssertEqual(head.fields["Content-Length"], "40")
            XCTAssertNil(head.fields["Content-Encoding"])
            XCTAssertEqual(x.responseOut.forwardedBody(), [])
            XCTAssertEqual(x.faults.applied, [])
        }
    }

    func testTrailersPassThrough() {
        var faults = engine(#"{"action": "rechunk-body", "bytes": 2}"#).begin(ExchangeContext(step: .other, request: Fixture.request("GET", "/")))
        _ = faults.response(.head(Fixture.response(200, [("Transfer-Encoding", "chunked")])))
        XCTAssertEqual(faults.response(.body([1, 2, 3])), [.forward(.body([1, 2]))])
        XCTAssertEqual(faults.response(.end(trailers: ["Digest": "x"])), [.forward(.body([3])), .forward(.end(trailers: ["Digest": "x"]))])
    }
}
