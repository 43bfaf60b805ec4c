import Evidence
import Foundation
import HTTP
import Proxy
import XCTest

/// Checks a HAR document against what HAR 1.2 requires of every object
/// (http://www.softwareishard.com/blog/har-12-spec/); returns the problems.
enum HARValidation {
    static func problems(_ data: Data) -> [String] {
        guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return ["not a JSON object"] }
        var problems: [String] = []
        func require(_ object: [String: Any]?, _ keys: [String: Any.Type], at path: String) {
            guard let object else { return problems.append("\(path) missing") }
            for (key, type) in keys {
                guard let value = object[key] else { problems.append("\(path).\(key) missing"); continue }
                let ok: Bool
                switch type {
                case is String.Type: ok = value is String
                case is Double.Type: ok = value is NSNumber
                case is [Any].Type: ok = value is [Any]
                default: ok = value is [String: Any]
                }
                if !ok { problems.append("\(path).\(key) has the wrong type") }
            }
        }
        func nameValues(_ list: Any?, at path: String) {
            for (index, item) in ((list as? [Any]) ?? []).enumerated() {
                require(item as? [String: Any], ["name": String.self, "value": String.self], at: "\(path)[\(index)]")
            }
        }
        let log = root["log"] as? [String: Any]
        require(log, ["version": String.self, "creator": [String: Any].self, "entries": [Any].self], at: "log")
        require(log?["creator"] as? [String: Any], ["name": String.self, "version": String.self], at: "log.creator")
        if log?["version"] as? String != "1.2" { problems.append("log.version is not 1.2") }
        for (index, item) in ((log?["entries"] as? [Any]) ?? []).enumerated() {
            let path = "log.entries[\(index)]"
            let entry = item as? [String: Any]
            require(entry, ["startedDateTime": String.self, "time": Double.self, "request": [String: Any].self,
                            "response": [String: Any].self, "cache": [String: Any].self, "timings": [String: Any].self],
                    at: path)
            let request = entry?["request"] as? [String: Any]
            require(request, ["method": String.self, "url": String.self, "httpVersion": String.self,
                              "cookies": [Any].self, "headers": [Any].self, "queryString": [Any].self,
                              "headersSize": Double.self, "bodySize": Double.self], at: path + ".request")
            nameValues(request?["cookies"], at: path + ".request.cookies")
            nameValues(request?["headers"], at: path + ".request.headers")
            nameValues(request?["queryString"], at: path + ".request.queryString")
            if let post = request?["postData"] {
                require(post as? [String: Any], ["mimeType": String.self], at: path + ".request.postData")
            }
            let response = entry?["response"] as? [String: Any]
            require(response, ["status": Double.self, "statusText": String.self, "httpVersion": String.self,
                               "cookies": [Any].self, "headers": [Any].self, "content": [String: Any].self,
                               "redirectURL": String.self, "headersSize": Double.self, "bodySize": Double.self],
                    at: path + ".response")
            nameValues(response?["cookies"], at: path + ".response.cookies")
            nameValues(response?["headers"], at: path + ".response.headers")
            require(response?["content"] as? [String: Any], ["size": Double.self, "mimeType": String.self],
                    at: path + ".response.content")
            require(entry?["timings"] as? [String: Any], ["send": Double.self, "wait": Double.self, "receive": Double.self],
                    at: path + ".timings")
            if let date = entry?["startedDateTime"] as? String, ISO8601DateFormatter.withFraction.date(from: date) == nil {
                problems.append("\(path).startedDateTime \(date) is not ISO 8601")
            }
        }
        return problems
    }
}

extension ISO8601DateFormatter {
    static var withFraction: ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }
}

final class HARCommandTests: XCTestCase {
    /// A recording of one proxied exchange (made by the proxy's exchange flow), plus a torn last line.
    func writeRecording() throws -> String {
        let path = makeTemporaryDirectory() + "/run.jsonl"
        let writer = try RecordingWriter(path: path, header: RecordingHeader(toolVersion: "test", tap: "cli", mode: "forward"))
        let settings = RecordingSettings(tap: "cli", bodyStoreLimit: 1024)
        let target = UpstreamTarget(scheme: .https, host: "origin.test", port: 443)!
        var flow = ExchangeFlow(id: ExchangeID(connection: ConnectionID(.downstream, 1), sequence: 1), target: target,
                                client: .init(connection: ConnectionID(.downstream, 1), bodyFraming: .contentLength(2)),
                                hooks: [], settings: settings)
        let request = HTTPRequestHead(method: "POST", path: "/suite/auth?x=1",
                                      fields: ["Host": "origin.test", "Content-Length": "2", "Cookie": "a=b"])
        let response = HTTPResponseHead(status: 200, fields: ["Content-Length": "2", "Content-Type": "text/plain"])
        let io = SentActions(responseWire: .http1(head: Array("HTTP/1.1 200 OK\r\n".utf8)))
        var records = [flow.start(request, wire: .http1(head: Array("POST /suite/auth?x=1 HTTP/1.1\r\n".utf8)), io)]
        records.append(flow.handle(.upstreamOpened(connection: ConnectionID(.upstream, 1), tls: nil, streamID: nil, sent: request,
                                                   wire: .http1(head: Array("POST /suite/auth?x=1 HTTP/1.1\r\n".utf8))), io))
        records.append(flow.handle(.requestBody([0x7B, 0x7D]), io))
        records.append(flow.handle(.requestEnd(trailers: nil), io))
        records.append(flow.handle(.responseHead(response, wire: .http1(head: Array("HTTP/1.1 200 OK\r\n".utf8))), io))
        records.append(flow.handle(.responseBody(Array("ok".utf8)), io))
        records.append(flow.handle(.responseEnd(trailers: nil), io))
        for case let record? in records { writer.append(record) }
        XCTAssertNil(writer.closeAndWait())
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data("{\"type\":\"exch".utf8))
        handle.closeFile()
        return path
    }

    func testExportWritesValidHAR12WithBothLegsAndWarnsAboutATornLine() throws {
        let recording = try writeRecording()
        let output = makeTemporaryDirectory() + "/run.har"
        let run = intact(["har", recording, "-o", output])
        XCTAssertEqual(run.status, 0, run.error)
        XCTAssertTrue(run.error.contains("warning"), run.error)
        XCTAssertTrue(run.error.contains("Wrote \(output): 1 exchange"), run.error)
        let data = try Data(contentsOf: URL(fileURLWithPath: output))
        XCTAssertEqual(HARValidation.problems(data), [])
        let entries = try XCTUnwrap(((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["log"]
                                     as? [String: Any])?["entries"] as? [[String: Any]])
        XCTAssertEqual(entries.compactMap { $0["_leg"] as? String }, ["downstream"], "one entry per exchange")
        XCTAssertTrue(entries.allSatisfy { $0["_requestDigest"] != nil && $0["_tap"] as? String == "cli" })
        let upstream = (entries.first?["_intact"] as? [String: Any])?["upstream"] as? [String: Any]
        XCTAssertNotNil(upstream?["request"], "the upstream leg is in _intact")
        XCTAssertNotNil(upstream?["requestDigest"])
        let content = (entries.first?["response"] as? [String: Any])?["content"] as? [String: Any]
        XCTAssertEqual(content?["text"] as? String, "ok", "bodies are exported when recorded")
    }

    func testExportToStandardOutput() throws {
        let run = intact(["har", try writeRecording()])
        XCTAssertEqual(run.status, 0, run.error)
        XCTAssertEqual(HARValidation.problems(Data(run.output.utf8)), [])
    }

    func testAMissingRecordingFailsNamingTheFile() {
        let run = intact(["har", "/nonexistent/run.jsonl"])
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.error.contains("/nonexistent/run.jsonl"), run.error)
        XCTAssertEqual(intact(["har"]).status, 2)
    }
}

/// Carries out an exchange's commands as if every send went through, each
/// response head as written in `responseWire`.
private final class SentActions: ExchangeActions {
    let responseWire: HeadDigest.WireForm

    init(responseWire: HeadDigest.WireForm) {
        self.responseWire = responseWire
    }

    func perform(_ command: ExchangeCommand, for exchange: ExchangeID) -> CommandOutcome {
        switch command {
        case .sendResponse(.head(let head)): return .headSent(head, wire: responseWire)
        case .sendResponse(.end(let trailers)): return .endSent(trailers: trailers)
        default: return .done
        }
    }
}
