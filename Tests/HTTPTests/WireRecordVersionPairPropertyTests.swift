import HTTP
import XCTest

/// The record of a leg must be what a decode of that leg's wire bytes gives,
/// for every version pair: a message that arrived over HTTP/1.1 or HTTP/2
/// (its head shaped as that version's decoder gives it) is sent over
/// HTTP/1.1 or HTTP/2, requests and responses alike. The sender's record is
/// built the way the Transport engines build it — HTTP/1.1 from the
/// serializer's report (fields and framing as written, trailers only when
/// chunked), HTTP/2 from `asSentOverHTTP2` and the `http2Sent` wire forms —
/// and the decode is the receiving side's: `HTTP1Parser`, or an
/// `HTTP2Session` in the other role fed the frames. Seeded, reproducible by
/// the seed in a failure message; no sockets.
final class WireRecordVersionPairPropertyTests: XCTestCase {
    typealias Generator = HTTP1WireRecordPropertyTests.Generator

    /// One side's view of a message: head values, its digests, body and trailers.
    struct Seen {
        var request: HTTPRequestHead?
        var response: HTTPResponseHead?
        var digest: HeadDigest
        var body: [UInt8]
        var trailers: HTTPFields?
    }

    // MARK: Random messages, as each version's decoder hands them on

    static func fields(_ random: inout Generator, http2: Bool) -> HTTPFields {
        var fields = HTTPFields()
        for _ in 0..<random.next(5) {
            let name = random.pick(["X-", "Accept-", "x-"]) + random.token()
            fields.append(http2 ? HTTPField.lowercaseASCII(name) : name, random.value())
        }
        if random.next(3) == 0 { fields.append(http2 ? "cookie" : "Cookie", "a=\(random.token())") }
        if random.next(3) == 0, http2 { fields.append("cookie", "b=\(random.token())") }
        if !http2 {
            // What an HTTP/1.1 message may carry that HTTP/2 cannot.
            if random.next(3) == 0 { fields.append("Connection", random.pick(["keep-alive", "X-Hop"])) }
            if random.next(4) == 0 { fields.append("X-Hop", "1") }
            if random.next(4) == 0 { fields.append("Keep-Alive", "timeout=5") }
            if random.next(4) == 0 { fields.append("TE", random.pick(["trailers", "gzip"])) }
        }
        return fields
    }

    static func body(_ random: inout Generator) -> [[UInt8]] {
        (0..<random.next(4)).map { _ in (0..<(1 + random.next(64))).map { _ in UInt8(random.next(256)) } }
    }

    static func trailers(_ random: inout Generator) -> HTTPFields? {
        guard random.next(3) == 0 else { return nil }
        var trailers = HTTPFields()
        for _ in 0..<(1 + random.next(2)) { trailers.append("X-T-" + random.token(), random.value()) }
        return trailers
    }

    /// Every request names its authority: HTTP/1.1 needs `Host`, and nghttp2
    /// refuses an HTTP/2 request with neither `:authority` nor `host`.
    static func request(_ random: inout Generator, from source: HTTPVersion, bodyLength: Int?) -> HTTPRequestHead {
        let http2 = source == .http2
        let method = random.pick(bodyLength == nil ? ["GET", "HEAD", "DELETE", "OPTIONS"] : ["POST", "PUT", "PATCH"])
        let authority = random.pick(["origin.test", "origin.test:8443", "127.0.0.1:9"])
        let path = "/" + random.token() + (random.next(2) == 0 ? "?q=" + random.token() : "")
        var fields = Self.fields(&random, http2: http2)
        if let bodyLength, random.next(2) == 0 {
            fields.append(http2 ? "content-length" : "Content-Length", String(bodyLength))
        }
        if http2 {
            return HTTPRequestHead(method: HTTPMethod(method), scheme: "https", authority: authority,
                                   path: path, version: .http2, fields: fields)
        }
        fields.append(random.pick(["Host", "host"]), authority)
        return HTTPRequestHead(method: HTTPMethod(method), authority: fields["host"], path: path, version: .http1_1, fields: fields)
    }

    static func response(_ random: inout Generator, from source: HTTPVersion, bodyLength: Int) -> HTTPResponseHead {
        let http2 = source == .http2
        let status = random.pick([200, 201, 204, 206, 304, 404, 422, 500, 599])
        var fields = Self.fields(&random, http2: http2)
        if random.next(2) == 0 { fields.append(http2 ? "content-length" : "Content-Length", String(bodyLength)) }
        let reason = http2 ? "" : random.pick(["OK", "Fine  By Me", "", "Créé"])
        return HTTPResponseHead(status: HTTPStatus(status), reason: reason, version: source, fields: fields)
    }

    // MARK: HTTP/1.1 leg

    /// Sends a request the way `HTTP1ClientDriver.open` does; returns the record and the bytes.
    static func sendHTTP1(_ head: HTTPRequestHead, body: [[UInt8]], trailers: HTTPFields?) throws -> (Seen, [UInt8]) {
        var head = head
        if head.version == .http2 { head.version = .http1_1 }
        if !head.fields.contains("host"), let authority = head.authority { head.fields.append("Host", authority) }
        // The proxy's framing choice (UpstreamFraming): the declared length, else chunked when there is a body.
        let declared = head.fields["content-length"].flatMap { Int($0) }
        let framing: HTTP1Framing = declared.map { .contentLength($0) } ?? (body.isEmpty && trailers == nil ? .none : .chunked)
        var serializer = HTTP1Serializer()
        let written = try serializer.writeRequestHead(head, framing: framing)
        head.fields = written.fields
        var wire = written.bytes
        for chunk in body where written.framing.allowsBody { wire += try serializer.writeBody(chunk) }
        let carried = serializer.carriesTrailers && trailers?.isEmpty == false ? trailers : nil
        wire += try serializer.writeEnd(trailers: carried)
        let sent = written.framing.allowsBody ? body.flatMap { $0 } : []
        return (Seen(request: head, digest: HeadDigest(request: head, wire: .http1(head: Array(written.rawHead)),
                                                       connectionScheme: "https", using: .sha256),
                     body: sent, trailers: carried), wire)
    }

    /// Sends a response the way `HTTP1ServerDriver.sendHead` does, answering `method` over HTTP/1.1.
    static func sendHTTP1(_ head: HTTPResponseHead, answering method: String, body: [[UInt8]],
                          trailers: HTTPFields?) throws -> (Seen, [UInt8]) {
        let translated = head.version == .http2
        var head = head.carriedByHTTP1()
        var framing: HTTP1Framing?
        if translated, trailers != nil, head.status != 204, head.status != 304, method != "HEAD" {
            // From HTTP/2 with trailers, to a client that sent `TE: trailers`: chunked, so they can follow.
            head.fields.removeAll { $0.lowercasedName == "content-length" }
            framing = .chunked
        }
        var serializer = HTTP1Serializer()
        let written = try serializer.writeResponseHead(head, framing: framing, requestMethod: HTTPMethod(method), requestVersion: .http1_1)
        head.fields = written.fields
        var wire = written.bytes
        var sent: [UInt8] = []
        for chunk in body where written.framing.allowsBody {
            wire += try serializer.writeBody(chunk)
            sent += chunk
        }
        let carried = serializer.carriesTrailers && trailers?.isEmpty == false ? trailers : nil
        wire += try serializer.writeEnd(trailers: carried)
        return (Seen(response: head, digest: HeadDigest(response: head, wire: .http1(head: Array(written.rawHead)), using: .sha256),
                     body: sent, trailers: carried), wire)
    }

    /// Decodes HTTP/1.1 bytes the way the receiving engine's parser does.
    static func decodeHTTP1(_ wire: [UInt8], request: Bool, method: String) throws -> Seen {
        var parser = HTTP1Parser(parsing: request ? .request : .response)
        if !request { parser.expectResponse(to: HTTPMethod(method)) }
        parser.feed(wire)
        parser.finish()
        var seen: Seen?
        while let event = try parser.next() {
            switch event {
            case .requestHead(let parsed):
                seen = Seen(request: parsed.head, digest: HeadDigest(request: parsed.head, wire: .http1(head: parsed.rawHead),
                                                                     connectionScheme: "https", using: .sha256), body: [])
            case .responseHead(let parsed):
                seen = Seen(response: parsed.head, digest: HeadDigest(response: parsed.head, wire: .http1(head: parsed.rawHead), using: .sha256),
                            body: [])
            case .body(let bytes): seen?.body += bytes
            case .end(let trailers):
                seen?.trailers = trailers
                return try XCTUnwrap(seen)
            case .tunnel: break
            }
        }
        throw XCTSkip("the message never ended")
    }

    // MARK: HTTP/2 leg

    /// Sends the request (and, for a response case, `answer`) over an HTTP/2
    /// session pair the way the engines do; returns what each side has of the
    /// message in question: the sender's record and the receiver's decode.
    static func overHTTP2(request: HTTPRequestHead, requestBody: [[UInt8]], requestTrailers: HTTPFields?,
                          answer: (head: HTTPResponseHead, body: [[UInt8]], trailers: HTTPFields?)?) throws -> (Seen, Seen) {
        let pair = HTTP2Pair()
        // HTTP2ClientDriver.open
        var head = request
        head.version = .http2
        head.fields = head.fields.collapsingContentLengthList
        let endStream = requestBody.isEmpty && requestTrailers == nil
        let id = try pair.client.sendRequest(head, endStream: endStream)
        var recordedRequest = Seen(request: head.asSentOverHTTP2,
                                   digest: HeadDigest(request: head.asSentOverHTTP2, wire: .http2Sent(request: head),
                                                      connectionScheme: "https", using: .sha256), body: [])
        for chunk in requestBody {
            try pair.client.sendData(stream: id, bytes: chunk, endStream: false)
            recordedRequest.body += chunk
        }
        if !endStream {
            try pair.client.sendTrailers(stream: id, trailers: requestTrailers ?? HTTPFields())
            recordedRequest.trailers = requestTrailers?.asSentOverHTTP2
        }
        var decodedRequest: Seen?
        var recordedResponse: Seen?
        var decodedResponse: Seen?
        try pair.pump(onClient: { events in
            for event in events {
                switch event {
                case .responseHead(_, let head, let list):
                    decodedResponse = Seen(response: head, digest: HeadDigest(response: head, wire: .http2(fields: list), using: .sha256),
                                           body: [])
                case .data(_, let bytes):
                    decodedResponse?.body += bytes
                    pair.client.consumed(stream: id, bytes: bytes.count)
                case .streamEnded(_, let trailers): decodedResponse?.trailers = trailers
                default: break
                }
            }
        }, onServer: { events in
            for event in events {
                switch event {
                case .requestHead(_, let head, let list):
                    decodedRequest = Seen(request: head, digest: HeadDigest(request: head, wire: .http2(fields: list),
                                                                            connectionScheme: "https", using: .sha256), body: [])
                case .data(_, let bytes):
                    decodedRequest?.body += bytes
                    pair.server.consumed(stream: id, bytes: bytes.count)
                case .streamEnded(_, let trailers):
                    decodedRequest?.trailers = trailers
                    guard let answer else { break }
                    // HTTP2ServerDriver.sendHead, then the body and the end as HTTP2Driver sends them.
                    var response = answer.head
                    response.version = .http2
                    response.reason = ""
                    let bodiless = answer.body.isEmpty && answer.trailers == nil
                    try pair.server.sendResponse(stream: id, head: response, endStream: bodiless)
                    recordedResponse = Seen(response: response.asSentOverHTTP2,
                                            digest: HeadDigest(response: response.asSentOverHTTP2,
                                                               wire: .http2Sent(response: response), using: .sha256), body: [])
                    for chunk in answer.body {
                        try pair.server.sendData(stream: id, bytes: chunk, endStream: false)
                        recordedResponse?.body += chunk
                    }
                    if !bodiless {
                        try pair.server.sendTrailers(stream: id, trailers: answer.trailers ?? HTTPFields())
                        recordedResponse?.trailers = answer.trailers?.asSentOverHTTP2
                    }
                default: break
                }
            }
        })
        let events = "client: \(pair.clientEvents) server: \(pair.serverEvents)"
        if answer == nil { return (recordedRequest, try XCTUnwrap(decodedRequest, events)) }
        return (try XCTUnwrap(recordedResponse, events), try XCTUnwrap(decodedResponse, events))
    }

    // MARK: The property

    /// The record and the decode agree on every value a leg's record holds.
    func assertSame(_ recorded: Seen, _ decoded: Seen, _ label: String) {
        XCTAssertEqual(recorded.digest.exact, decoded.digest.exact, "\(label): exact head digest")
        XCTAssertEqual(recorded.digest.semantic, decoded.digest.semantic, "\(label): semantic head digest")
        XCTAssertEqual(recorded.digest.fields, decoded.digest.fields, "\(label): per-field digests")
        XCTAssertEqual(recorded.body, decoded.body, "\(label): body")
        XCTAssertEqual(recorded.trailers ?? HTTPFields(), decoded.trailers ?? HTTPFields(), "\(label): trailers")
        if let sent = recorded.request, let got = decoded.request {
            XCTAssertEqual(sent.method, got.method, label)
            XCTAssertEqual(sent.authority, got.authority, label)
            XCTAssertEqual(sent.path, got.path, label)
            XCTAssertEqual(sent.version, got.version, label)
            XCTAssertEqual(sent.fields, got.fields, label)
            XCTAssertEqual(sent.connectProtocol, got.connectProtocol, label)
        } else if let sent = recorded.response, let got = decoded.response {
            XCTAssertEqual(sent, got, label)
        } else {
            XCTFail("\(label): a request recorded as a response or the reverse")
        }
    }

    func testEveryVersionPairRecordsWhatTheWireCarries() throws {
        let versions: [HTTPVersion] = [.http1_1, .http2]
        var cases = 0
        for seed in 1...400 {
            var random = Generator(state: UInt64(seed) &* 7919)
            let source = random.pick(versions), target = random.pick(versions)
            let body = Self.body(&random)
            let length = body.reduce(0) { $0 + $1.count }
            let trailers = Self.trailers(&random)
            let label = "seed \(seed) \(source)→\(target)"
            if random.next(2) == 0 {
                let head = Self.request(&random, from: source, bodyLength: body.isEmpty && trailers == nil ? nil : length)
                let requestBody = head.method == "GET" || head.method == "HEAD" ? [] : body
                let requestTrailers = requestBody.isEmpty ? nil : trailers
                if target == .http2 {
                    let (recorded, decoded) = try Self.overHTTP2(request: head, requestBody: requestBody,
                                                                 requestTrailers: requestTrailers, answer: nil)
                    assertSame(recorded, decoded, label + " request")
                } else {
                    let (recorded, wire) = try Self.sendHTTP1(head, body: requestBody, trailers: requestTrailers)
                    assertSame(recorded, try Self.decodeHTTP1(wire, request: true, method: head.method.rawValue), label + " request")
                }
            } else {
                let method = random.pick(["GET", "GET", "HEAD", "POST"])
                let head = Self.response(&random, from: source, bodyLength: length)
                let bodiless = head.status == 204 || head.status == 304 || method == "HEAD"
                // A body must match its declared length; a bodiless answer carries none.
                let answerBody = bodiless ? [] : body
                var answerHead = head
                if bodiless || head.fields["content-length"] == nil {
                    answerHead.fields.removeAll { $0.lowercasedName == "content-length" }
                }
                let answerTrailers = bodiless ? nil : trailers
                if target == .http2 {
                    let request = HTTPRequestHead(method: HTTPMethod(method), scheme: "https", authority: "origin.test", path: "/",
                                                  version: .http2)
                    let (recorded, decoded) = try Self.overHTTP2(request: request, requestBody: [], requestTrailers: nil,
                                                                 answer: (answerHead, answerBody, answerTrailers))
                    assertSame(recorded, decoded, label + " response")
                } else {
                    let (recorded, wire) = try Self.sendHTTP1(answerHead, answering: method, body: answerBody,
                                                              trailers: answerTrailers)
                    assertSame(recorded, try Self.decodeHTTP1(wire, request: false, method: method), label + " response")
                }
            }
            cases += 1
        }
        XCTAssertEqual(cases, 400)
    }
}
