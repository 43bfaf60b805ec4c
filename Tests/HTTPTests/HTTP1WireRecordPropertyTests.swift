import HTTP
import XCTest

/// What a proxy records of a response it sends to an HTTP/1.x client must be
/// what a parser reads back from the bytes: random heads (from HTTP/2 or
/// HTTP/1.1, with or without a length), bodies and trailers, written for an
/// HTTP/1.0 or HTTP/1.1 request the way the server engine writes them
/// (`carriedByHTTP1`, the serializer's framing, trailers only when chunked).
/// The "record" is built from the serializer's own report (fields as sent,
/// `carriesTrailers`), never from what it was asked to write.
final class HTTP1WireRecordPropertyTests: XCTestCase {
    /// A small deterministic generator (a 64-bit LCG), so a failure can be replayed by its seed.
    struct Generator {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(bound))
        }
        mutating func pick<T>(_ values: [T]) -> T { values[next(values.count)] }
        mutating func token() -> String {
            String((0..<(1 + next(8))).map { _ in pick(Array("abcdefghijklmnopqrstuvwxyz0123456789-")) })
        }
        mutating func value() -> String {
            String((0..<next(20)).map { _ in pick(Array("abc XYZ 0123;=,/:\"()é")) }).trimmingCharacters(in: .whitespaces)
        }
    }

    struct Case {
        var source: HTTPResponseHead
        var requestMethod: HTTPMethod
        var requestVersion: HTTPVersion
        var chunks: [[UInt8]]
        var trailers: HTTPFields?
    }

    static func makeCase(_ random: inout Generator) -> Case {
        let requestMethod: HTTPMethod = random.pick(["GET", "GET", "HEAD", "POST"])
        let requestVersion = random.pick([HTTPVersion.http1_0, .http1_1, .http1_1])
        let status: HTTPStatus = random.pick([200, 201, 203, 204, 206, 299, 304, 404, 422, 500, 599])
        let fromHTTP2 = random.next(2) == 0
        var fields = HTTPFields()
        for _ in 0..<random.next(5) { fields.append("X-" + random.token(), random.value()) }
        let bodyAllowed = status != 204 && status != 304 && requestMethod != "HEAD"
        var chunks: [[UInt8]] = []
        if bodyAllowed {
            for _ in 0..<random.next(4) { chunks.append((0..<(1 + random.next(40))).map { _ in UInt8(random.next(256)) }) }
        }
        if bodyAllowed, random.next(2) == 0 { fields.append("Content-Length", String(chunks.reduce(0) { $0 + $1.count })) }
        var trailers: HTTPFields?
        if bodyAllowed, random.next(2) == 0 {
            var t = HTTPFields()
            for _ in 0..<(1 + random.next(2)) { t.append("x-t-" + random.token(), random.value()) }
            trailers = t
        }
        let reason = fromHTTP2 ? "" : random.pick(["OK", "Fine  By Me", "", "Créé"])
        let source = HTTPResponseHead(status: status, reason: reason, version: fromHTTP2 ? .http2 : .http1_1, fields: fields)
        return Case(source: source, requestMethod: requestMethod, requestVersion: requestVersion, chunks: chunks,
                    trailers: trailers)
    }

    func testTheRecordedResponseEqualsADecodeOfTheBytesWritten() throws {
        for seed in 1...400 {
            var random = Generator(state: UInt64(seed))
            let example = Self.makeCase(&random)
            var serializer = HTTP1Serializer()
            let head = example.source.carriedByHTTP1()
            let written = try serializer.writeResponseHead(head, requestMethod: example.requestMethod,
                                                           requestVersion: example.requestVersion)
            var wire = written.bytes
            for chunk in example.chunks where written.framing.allowsBody { wire += try serializer.writeBody(chunk) }
            let carried = serializer.carriesTrailers && example.trailers?.isEmpty == false ? example.trailers : nil
            wire += try serializer.writeEnd(trailers: carried)

            // The record, from the serializer's report.
            var recorded = head
            recorded.fields = written.fields
            let recordedBody = written.framing.allowsBody ? example.chunks.flatMap { $0 } : []

            let (events, error) = parse(wire, kind: .response, methods: [example.requestMethod],
                                        finish: written.framing == .closeDelimited)
            XCTAssertNil(error, "seed \(seed)")
            var decodedBody: [UInt8] = []
            var decodedTrailers: HTTPFields?
            var ended = false
            for event in events {
                switch event {
                case .responseHead(let parsed):
                    XCTAssertEqual(parsed.head, recorded, "seed \(seed)")
                    XCTAssertEqual(parsed.rawHead, Array(written.rawHead), "seed \(seed)")
                case .body(let bytes): decodedBody += bytes
                case .end(let trailers): (decodedTrailers, ended) = (trailers, true)
                case .requestHead, .tunnel: XCTFail("seed \(seed): \(event)")
                }
            }
            XCTAssertTrue(ended, "seed \(seed)")
            XCTAssertEqual(decodedBody, recordedBody, "seed \(seed)")
            XCTAssertEqual(decodedTrailers, carried, "seed \(seed)")
            if example.requestVersion == .http1_0 { XCTAssertNotEqual(written.framing, .chunked, "seed \(seed)") }
            if example.source.version == .http2 {
                XCTAssertEqual(recorded.reason, HTTPResponseHead.rfc9110Reason(recorded.status) ?? "", "seed \(seed)")
            } else {
                XCTAssertEqual(recorded.reason, example.source.reason, "seed \(seed)")
            }
        }
    }
}
