import Compression
import Foundation
import AuthFlow
import HTTP
import XCTest
@testable import Faults

/// Test scaffolding: builds heads, runs an exchange's parts through an
/// engine, and reads back what the proxy would do.
enum Fixture {
    static let host = "app.example.test"

    /// The step-11 bootstrap response's fields: three separate Set-Cookie fields.
    static let bootstrapFields: [(String, String)] = [
        ("Content-Type", "application/json"),
        ("Set-Cookie", "JSESSIONID=s1; Path=/suite; Secure; HttpOnly"),
        ("Set-Cookie", "__appianCsrfToken=c1; Path=/suite; Secure"),
        ("Set-Cookie", "__appianMultipartCsrfToken=m1; Path=/suite; Secure"),
    ]

    static func request(_ method: String = "GET", _ path: String, _ fields: [(String, String)] = []) -> HTTPRequestHead {
        HTTPRequestHead(method: HTTPMethod(method), path: path, fields: HTTPFields([HTTPField(name: "Host", value: host)] + fields.map { HTTPField(name: $0.0, value: $0.1) }))
    }

    static func response(_ status: Int, _ fields: [(String, String)] = []) -> HTTPResponseHead {
        HTTPResponseHead(status: HTTPStatus(status), fields: HTTPFields(fields.map { HTTPField(name: $0.0, value: $0.1) }))
    }

    /// A response with a body and a matching Content-Length.
    static func response(_ status: Int, _ fields: [(String, String)] = [], body: String) -> (HTTPResponseHead, [[UInt8]]) {
        (response(status, fields + [("Content-Length", String(body.utf8.count))]), [Array(body.utf8)])
    }

    static func rules(_ json: String) -> [FaultRule] {
        do {
            return try FaultRuleFile.parse(Array(json.utf8))
        } catch {
            XCTFail("rules do not parse: \(error)")
            return []
        }
    }

    static func engine(_ json: String, seed: UInt64 = 1, bufferLimit: Int = FaultEngine.defaultBufferLimit) -> FaultEngine {
        FaultEngine(rules: rules(json), seed: seed, bufferLimit: bufferLimit)
    }
}

/// One exchange driven through the engine, with everything it output.
struct Exchange {
    var faults: ExchangeFaults
    var requestOut: [RequestFaultOutput] = []
    var responseOut: [ResponseFaultOutput] = []

    init(_ engine: FaultEngine, step: AuthStep = .other, request: HTTPRequestHead, requestBody: [[UInt8]] = [],
         response: HTTPResponseHead? = nil, responseBody: [[UInt8]] = []) {
        faults = engine.begin(ExchangeContext(step: step, request: request))
        requestOut += faults.request(.head(request))
        for chunk in requestBody { requestOut += faults.request(.body(chunk)) }
        requestOut += faults.request(.end(trailers: nil))
        guard let response else { return }
        responseOut += faults.response(.head(response))
        for chunk in responseBody { responseOut += faults.response(.body(chunk)) }
        responseOut += faults.response(.end(trailers: nil))
    }

    init(_ engine: FaultEngine, step: AuthStep = .other, request: HTTPRequestHead, response: (HTTPResponseHead, [[UInt8]])) {
        self.init(engine, step: step, request: request, response: response.0, responseBody: response.1)
    }
}

/// Reading outputs.
extension Array {
    func forwardedHead<H>() -> H? where Element == FaultOutput<HTTPPart<H>> {
        for case .forward(.head(let head)) in self { return head }
        return nil
    }

    func forwardedChunks<H>() -> [[UInt8]] where Element == FaultOutput<HTTPPart<H>> {
        var out: [[UInt8]] = []
        for case .forward(.body(let chunk)) in self { out.append(chunk) }
        return out
    }

    func forwardedBody<H>() -> [UInt8] where Element == FaultOutput<HTTPPart<H>> {
        forwardedChunks().flatMap { $0 }
    }

    func forwardedText<H>() -> String where Element == FaultOutput<HTTPPart<H>> {
        String(decoding: forwardedBody(), as: UTF8.self)
    }

    func ended<H>() -> Bool where Element == FaultOutput<HTTPPart<H>> {
        contains { if case .forward(.end) = $0 { return true } else { return false } }
    }

    func commands<H>() -> [NetworkCommand] where Element == FaultOutput<HTTPPart<H>> {
        var out: [NetworkCommand] = []
        for case .network(let command) in self { out.append(command) }
        return out
    }

    func answer<H>() -> [HTTPResponsePart]? where Element == FaultOutput<HTTPPart<H>> {
        for case .answer(let parts) in self { return parts }
        return nil
    }

    func failure<H>() -> FaultFailure? where Element == FaultOutput<HTTPPart<H>> {
        for case .fail(let failure) in self { return failure }
        return nil
    }
}

/// Reading a canned answer.
extension Array where Element == HTTPResponsePart {
    var head: HTTPResponseHead? {
        for case .head(let head) in self { return head }
        return nil
    }

    var bodyText: String {
        var bytes: [UInt8] = []
        for case .body(let chunk) in self { bytes += chunk }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Decompresses a gzip body (zlib; CompressionTests checks it against the `gzip` tool).
func gunzip(_ data: [UInt8]) throws -> [UInt8] {
    try Decompressor.decompress(data, format: .gzip, outputLimit: 16 << 20)
}
