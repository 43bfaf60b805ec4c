import XCTest
import Evidence
import HTTP
import Compression

/// Validates the export against the HAR 1.2 spec's required fields and types,
/// reading it back with JSONSerialization as an outside tool would.
final class HARExporterTests: XCTestCase {
    private func export(storeLimit: Int = 0, mutate: (inout ExchangeRecord) -> Void = { _ in }) throws -> [String: Any] {
        var broken = SampleRecords.record(1, storeLimit: storeLimit)
        mutate(&broken)
        let recording = Recording(path: "a.jsonl", header: SampleRecords.header,
                                  records: [SampleRecords.record(2, storeLimit: storeLimit), broken])
        let bytes = try HARExporter.export([recording], creatorVersion: "0.1.0-test")
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    private func assertTypes(_ object: Any?, _ expected: [String: Any.Type], _ context: String,
                             file: StaticString = #filePath, line: UInt = #line) {
        guard let dictionary = object as? [String: Any] else {
            return XCTFail("\(context) is not an object", file: file, line: line)
        }
        for (key, type) in expected {
            guard let value = dictionary[key] else {
                XCTFail("\(context).\(key) is missing", file: file, line: line)
                continue
            }
            let ok: Bool
            switch type {
            case is String.Type: ok = value is String
            case is Double.Type: ok = value is NSNumber
            case is [Any].Type: ok = value is [Any]
            case is [String: Any].Type: ok = value is [String: Any]
            default: ok = false
            }
            XCTAssertTrue(ok, "\(context).\(key) should be \(type), is \(Swift.type(of: value))", file: file, line: line)
        }
    }

    private func assertNameValueList(_ list: Any?, _ context: String, file: StaticString = #filePath, line: UInt = #line) {
        guard let items = list as? [Any] else { return XCTFail("\(context) is not an array", file: file, line: line) }
        for (i, item) in items.enumerated() {
            assertTypes(item, ["name": String.self, "value": String.self], "\(context)[\(i)]", file: file, line: line)
        }
    }

    func testExportHasEveryRequiredHAR12Field() throws {
        let har = try export()
        assertTypes(har, ["log": [String: Any].self], "root")
        let log = try XCTUnwrap(har["log"] as? [String: Any])
        assertTypes(log, ["version": String.self, "creator": [String: Any].self, "entries": [Any].self], "log")
        XCTAssertEqual(log["version"] as? String, "1.2")
        assertTypes(log["creator"], ["name": String.self, "version": String.self], "log.creator")
        let entries = try XCTUnwrap(log["entries"] as? [[String: Any]])
        XCTAssertEqual(entries.count, 2, "one entry per exchange, whatever its legs")

        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for (i, entry) in entries.enumerated() {
            let at = "entries[\(i)]"
            assertTypes(entry, ["startedDateTime": String.self, "time": Double.self, "request": [String: Any].self,
                                "response": [String: Any].self, "cache": [String: Any].self, "timings": [String: Any].self], at)
            XCTAssertNotNil(iso.date(from: entry["startedDateTime"] as? String ?? ""), "\(at).startedDateTime is not ISO 8601")
            assertTypes(entry["request"], ["method": String.self, "url": String.self, "httpVersion": String.self,
                                           "cookies": [Any].self, "headers": [Any].self, "queryString": [Any].self,
                                           "headersSize": Double.self, "bodySize": Double.self], "\(at).request")
            assertTypes(entry["response"], ["status": Double.self, "statusText": String.self, "httpVersion": String.self,
                                            "cookies": [Any].self, "headers": [Any].self, "content": [String: Any].self,
                                            "redirectURL": String.self, "headersSize": Double.self, "bodySize": Double.self],
                        "\(at).response")
            let request = try XCTUnwrap(entry["request"] as? [String: Any])
            let response = try XCTUnwrap(entry["response"] as? [String: Any])
            assertNameValueList(request["headers"], "\(at).request.headers")
            assertNameValueList(request["queryString"], "\(at).request.queryString")
            assertNameValueList(request["cookies"], "\(at).request.cookies")
            assertNameValueList(response["headers"], "\(at).response.headers")
            assertNameValueList(response["cookies"], "\(at).response.cookies")
            assertTypes(response["content"], ["size": Double.self, "mimeType": String.self], "\(at).response.content")
            assertTypes(entry["timings"], ["send": Double.self, "wait": Double.self, "receive": Double.self], "\(at).timings")
            let timings = try XCTUnwrap(entry["timings"] as? [String: Double])
            for key in ["send", "wait", "receive"] { XCTAssertGreaterThanOrEqual(timings[key] ?? -1, 0, "\(at).timings.\(key)") }
            XCTAssertEqual(entry["time"] as? Double ?? -1, timings["send"]! + timings["wait"]! + timings["receive"]!, accuracy: 1e-9)
            XCTAssertNotNil(URL(string: request["url"] as? String ?? ""), "\(at).request.url")
        }

        let first = entries[0]
        let request = try XCTUnwrap(first["request"] as? [String: Any])
        XCTAssertEqual(request["url"] as? String, "https://app.test/suite/auth?next=%2Fhome&x=1")
        XCTAssertEqual((request["queryString"] as? [[String: String]])?.first, ["name": "next", "value": "/home"])
        XCTAssertEqual(first["_tap"] as? String, "proxy-a")
        XCTAssertEqual(first["_leg"] as? String, "downstream")
        XCTAssertEqual(first["_exchangeID"] as? String, "ex-1", "entries are ordered by start time")
        XCTAssertEqual(first["_traceID"] as? String, "trace-7")
        XCTAssertNotNil((first["_requestDigest"] as? [String: Any])?["head"])
        XCTAssertEqual((first["_tls"] as? [String: Any])?["alpn"] as? String, "http/1.1")
        let upstream = try XCTUnwrap((first["_intact"] as? [String: Any])?["upstream"] as? [String: Any])
        XCTAssertEqual(upstream["connection"] as? String, "u-1")
        XCTAssertEqual((upstream["request"] as? [String: Any])?["url"] as? String, "https://app.test/suite/auth?next=%2Fhome&x=1")
        XCTAssertEqual((upstream["response"] as? [String: Any])?["status"] as? Int, 302)
        XCTAssertNotNil((upstream["requestDigest"] as? [String: Any])?["head"])
        XCTAssertNotNil(upstream["timings"] as? [String: Any])
        let response = try XCTUnwrap(first["response"] as? [String: Any])
        XCTAssertEqual(response["status"] as? Int, 302)
        XCTAssertEqual(response["redirectURL"] as? String, "https://app.test/suite/home")
        XCTAssertEqual(response["cookies"] as? [Any] as? [NSObject], [], "redacted cookies are not exported")
        let headers = try XCTUnwrap(request["headers"] as? [[String: Any]])
        XCTAssertEqual(headers.first { $0["name"] as? String == "Authorization" }?["_redacted"] as? Bool, true)
        XCTAssertGreaterThan(request["headersSize"] as? Int ?? 0, 100)
        let timings = try XCTUnwrap(first["timings"] as? [String: Double])
        XCTAssertEqual(timings["send"], 2)
        XCTAssertEqual(timings["wait"], 10.5)
        XCTAssertEqual(timings["receive"], 2.5)
    }

    func testStoredBodiesAndCookiesInClear() throws {
        let har = try export(storeLimit: 1024) { record in
            record = SampleRecords.record(1, redaction: RedactionPolicy(recordSecrets: true), storeLimit: 1024)
        }
        let entries = try XCTUnwrap((har["log"] as? [String: Any])?["entries"] as? [[String: Any]])
        let request = try XCTUnwrap(entries[0]["request"] as? [String: Any])
        let postData = try XCTUnwrap(request["postData"] as? [String: Any])
        assertTypes(postData, ["mimeType": String.self, "text": String.self, "params": [Any].self], "postData")
        XCTAssertEqual(postData["text"] as? String, #"{"user":"u1"}"#)
        XCTAssertEqual((request["cookies"] as? [[String: String]])?.map { $0["name"] }, ["JSESSIONID", "lb"])
        let response = try XCTUnwrap(entries[0]["response"] as? [String: Any])
        XCTAssertEqual((response["content"] as? [String: Any])?["text"] as? String, "moved")
        let cookie = try XCTUnwrap((response["cookies"] as? [[String: Any]])?.first)
        XCTAssertEqual(cookie["name"] as? String, "JSESSIONID")
        XCTAssertEqual(cookie["path"] as? String, "/suite")
        XCTAssertEqual(cookie["httpOnly"] as? Bool, true)
    }

    func testLegWithoutResponseGetsTheEmptyResponseAndTheError() throws {
        let har = try export { record in
            record.legs[1].response = nil
            record.error = ExchangeRecord.Failure(kind: .reset, location: "upstream stream 1", message: "RST_STREAM CANCEL")
        }
        let entries = try XCTUnwrap((har["log"] as? [String: Any])?["entries"] as? [[String: Any]])
        let entry = try XCTUnwrap(entries.first { $0["_exchangeID"] as? String == "ex-1" })
        let upstream = try XCTUnwrap((entry["_intact"] as? [String: Any])?["upstream"] as? [String: Any])
        XCTAssertNil(upstream["response"], "no response crossed the upstream leg")
        XCTAssertEqual((entry["_error"] as? [String: Any])?["where"] as? String, "upstream stream 1")
        // A downstream leg without a response gets HAR's empty response.
        let har2 = try export { record in
            record.legs[0].response = nil
            record.legs[1].response = nil
        }
        let broken = try XCTUnwrap(((har2["log"] as? [String: Any])?["entries"] as? [[String: Any]])?
            .first { $0["_exchangeID"] as? String == "ex-1" })
        let response = try XCTUnwrap(broken["response"] as? [String: Any])
        XCTAssertEqual(response["status"] as? Int, 0)
        XCTAssertEqual(response["bodySize"] as? Int, -1)
    }

    /// A gzip or deflate body is decoded for content.text, with the sizes the spec asks for.
    func testCompressedBodiesAreDecodedForContentText() throws {
        let text = String(repeating: "compressible text, ", count: 50)
        for (coding, format) in [("gzip", CompressionFormat.gzip), ("deflate", .zlib), ("deflate", .rawDeflate)] {
            let compressed = Compressor.compress(Array(text.utf8), format: format)
            var record = SampleRecords.record(1)
            var response = try XCTUnwrap(record.legs[0].response)
            response.fields.append(RecordedField(name: "Content-Encoding", value: coding))
            response.body = StoredBody(base64: Data(compressed).base64EncodedString(), truncated: false)
            response.digest.body.length = compressed.count
            record.legs[0].response = response
            let content = try XCTUnwrap(try responseContent(of: record))
            XCTAssertEqual(content["text"] as? String, text, "\(format)")
            XCTAssertNil(content["encoding"])
            XCTAssertEqual(content["size"] as? Int, text.utf8.count)
            XCTAssertEqual(content["compression"] as? Int, text.utf8.count - compressed.count)
            XCTAssertNil(content["_decodingError"])
        }
    }

    func testBodyThatDoesNotDecodeKeepsItsBytesAndSaysWhy() throws {
        var record = SampleRecords.record(1)
        var response = try XCTUnwrap(record.legs[0].response)
        response.fields.append(RecordedField(name: "Content-Encoding", value: "gzip"))
        let bytes: [UInt8] = [0x1f, 0x8b, 0x08, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
        response.body = StoredBody(base64: Data(bytes).base64EncodedString(), truncated: false)
        record.legs[0].response = response
        let content = try XCTUnwrap(try responseContent(of: record))
        XCTAssertEqual(content["encoding"] as? String, "base64")
        XCTAssertEqual(content["text"] as? String, Data(bytes).base64EncodedString())
        XCTAssertTrue((content["_decodingError"] as? String)?.hasPrefix("gzip content coding:") ?? false, "\(content)")
        XCTAssertNil(content["compression"])
    }

    private func responseContent(of record: ExchangeRecord) throws -> [String: Any]? {
        let recording = Recording(path: "a.jsonl", header: SampleRecords.header, records: [record])
        let har = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(try HARExporter.export([recording], creatorVersion: "t")))
                                as? [String: Any])
        let entry = ((har["log"] as? [String: Any])?["entries"] as? [[String: Any]])?.first
        return (entry?["response"] as? [String: Any])?["content"] as? [String: Any]
    }
}
