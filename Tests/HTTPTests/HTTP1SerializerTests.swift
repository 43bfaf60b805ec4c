import XCTest
import HTTP

final class HTTP1SerializerTests: XCTestCase {
    /// Parsing then writing every corpus message with its parsed framing gives
    /// back the exact head bytes, the exact message for canonical input, and
    /// always a message that parses into the same events.
    func testCorpusRoundTrips() throws {
        for entry in HTTP1Corpus.all {
            let events = parse(entry.bytes, kind: entry.kind, methods: entry.methods, finish: entry.finish).events
            var serializer = HTTP1Serializer()
            var out: [UInt8] = []
            for event in events {
                switch event {
                case .requestHead(let parsed):
                    let written = try serializer.writeRequestHead(parsed.head, framing: parsed.framing)
                    XCTAssertEqual(Array(written.rawHead), parsed.rawHead, entry.name)
                    XCTAssertEqual(written.fields, parsed.head.fields, entry.name)
                    out += written.bytes
                case .responseHead(let parsed):
                    let written = try serializer.writeResponseHead(parsed.head, framing: parsed.framing, requestMethod: parsed.requestMethod)
                    XCTAssertEqual(Array(written.rawHead), parsed.rawHead, entry.name)
                    out += written.bytes
                case .body(let bytes):
                    out += try serializer.writeBody(bytes)
                case .end(let trailers):
                    out += try serializer.writeEnd(trailers: trailers)
                case .tunnel(let leftover):
                    out += leftover
                }
            }
            if entry.exactRoundTrip {
                XCTAssertEqual(String(latin1: out), entry.wire, entry.name)
            }
            let again = parse(out, kind: entry.kind, methods: entry.methods, finish: entry.finish)
            XCTAssertNil(again.error, entry.name)
            XCTAssertEqual(coalesced(again.events).map(describe), entry.expected, entry.name)
        }
    }

    func testResponseWithoutFramingFieldsIsSentChunkedInHTTP11() throws {
        var serializer = HTTP1Serializer()
        let head = try serializer.writeResponseHead(HTTPResponseHead(status: 200, fields: ["Server": "intact"]))
        XCTAssertEqual(String(decoding: head.bytes, as: UTF8.self), "HTTP/1.1 200 OK\r\nServer: intact\r\nTransfer-Encoding: chunked\r\n\r\n")
        XCTAssertEqual(head.framing, .chunked)
        XCTAssertEqual(head.fields.map(\.name), ["Server", "Transfer-Encoding"])
        XCTAssertEqual(try serializer.writeBody([]), [])
        XCTAssertEqual(String(decoding: try serializer.writeBody(Array(repeating: 0x61, count: 26)), as: UTF8.self),
                       "1a\r\n" + String(repeating: "a", count: 26) + "\r\n")
        XCTAssertEqual(String(decoding: try serializer.writeEnd(trailers: ["Digest": "x"]), as: UTF8.self), "0\r\nDigest: x\r\n\r\n")
        // Ready for the next message on the same connection.
        XCTAssertNoThrow(try serializer.writeResponseHead(HTTPResponseHead(status: 204)))
    }

    func testHTTP10ResponseIsCloseDelimitedAndEndsTheConnection() throws {
        var serializer = HTTP1Serializer()
        let head = try serializer.writeResponseHead(HTTPResponseHead(status: 200, version: .http1_0))
        XCTAssertEqual(head.framing, .closeDelimited)
        XCTAssertEqual(try serializer.writeBody([1, 2]), [1, 2])
        XCTAssertEqual(try serializer.writeEnd(), [])
        XCTAssertThrowsError(try serializer.writeResponseHead(HTTPResponseHead(status: 200))) {
            XCTAssertEqual($0 as? HTTP1SerializerError, .connectionEnded)
        }
    }

    /// An HTTP/1.1 status line answering an HTTP/1.0 request: never chunked
    /// (the client would not understand it), close-delimited without a length,
    /// even when chunked is asked for; trailers cannot be carried.
    func testResponseToAnHTTP10RequestIsNeverChunked() throws {
        var serializer = HTTP1Serializer()
        let head = try serializer.writeResponseHead(HTTPResponseHead(status: 200, fields: ["Server": "intact"]),
                                                    requestVersion: .http1_0)
        XCTAssertEqual(String(decoding: head.bytes, as: UTF8.self), "HTTP/1.1 200 OK\r\nServer: intact\r\n\r\n")
        XCTAssertEqual(head.framing, .closeDelimited)
        XCTAssertFalse(serializer.carriesTrailers)
        XCTAssertEqual(try serializer.writeBody([1, 2]), [1, 2])
        XCTAssertThrowsError(try serializer.writeEnd(trailers: ["Digest": "x"])) {
            XCTAssertEqual($0 as? HTTP1SerializerError, .trailersRequireChunked)
        }
        var asked = HTTP1Serializer()
        XCTAssertEqual(try asked.writeResponseHead(HTTPResponseHead(status: 200), framing: .chunked,
                                                   requestVersion: .http1_0).framing, .closeDelimited)
        var sized = HTTP1Serializer()
        XCTAssertEqual(try sized.writeResponseHead(HTTPResponseHead(status: 200, fields: ["Content-Length": "2"]),
                                                   requestVersion: .http1_0).framing, .contentLength(2))
        var chunked = HTTP1Serializer()
        _ = try chunked.writeResponseHead(HTTPResponseHead(status: 200))
        XCTAssertTrue(chunked.carriesTrailers)
    }

    /// From HTTP/2 (no reason phrase) to HTTP/1.x: RFC 9110's phrase, or an
    /// empty one for a code it does not name; an HTTP/1.x head is left as it is.
    func testHeadsFromHTTP2GetTheStandardReasonPhrase() throws {
        XCTAssertEqual(HTTPResponseHead(status: 200, reason: "", version: .http2).carriedByHTTP1().reason, "OK")
        XCTAssertEqual(HTTPResponseHead(status: 422, reason: "", version: .http2).carriedByHTTP1().reason, "Unprocessable Content")
        XCTAssertEqual(HTTPResponseHead(status: 103, reason: "", version: .http2).carriedByHTTP1().reason, "Early Hints")
        let unknown = HTTPResponseHead(status: 599, reason: "", version: .http2).carriedByHTTP1()
        XCTAssertEqual(unknown.reason, "")
        XCTAssertEqual(unknown.version, .http1_1)
        var serializer = HTTP1Serializer()
        XCTAssertEqual(String(decoding: try serializer.writeResponseHead(unknown, framing: .contentLength(0)).bytes, as: UTF8.self),
                       "HTTP/1.1 599 \r\nContent-Length: 0\r\n\r\n")
        let odd = HTTPResponseHead(status: 200, reason: "Fine  By Me", version: .http1_1)
        XCTAssertEqual(odd.carriedByHTTP1(), odd)
        XCTAssertEqual(HTTPResponseHead(status: 200, reason: "", version: .http2).carriedByHTTP1(as: .http1_0).version, .http1_0)
    }

    func testRequestFramingIsAddedOrChecked() throws {
        var serializer = HTTP1Serializer()
        let get = HTTPRequestHead(method: "GET", authority: "h", path: "/", fields: ["Host": "h"])
        let written = try serializer.writeRequestHead(get)
        XCTAssertEqual(written.framing, .none)
        XCTAssertThrowsError(try serializer.writeBody([1])) { XCTAssertEqual($0 as? HTTP1SerializerError, .bodyNotAllowed) }
        XCTAssertEqual(try serializer.writeEnd(), [])

        let post = HTTPRequestHead(method: "POST", path: "/p", fields: ["Host": "h"])
        let fixed = try serializer.writeRequestHead(post, framing: .contentLength(3))
        XCTAssertEqual(String(decoding: fixed.bytes, as: UTF8.self), "POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\n")
        XCTAssertThrowsError(try serializer.writeBody([1, 2, 3, 4])) {
            XCTAssertEqual($0 as? HTTP1SerializerError, .bodyExceedsContentLength(3))
        }
        XCTAssertEqual(try serializer.writeBody([1, 2]), [1, 2])
        XCTAssertThrowsError(try serializer.writeEnd()) {
            XCTAssertEqual($0 as? HTTP1SerializerError, .bodyShorterThanContentLength(missing: 1))
        }
        XCTAssertThrowsError(try serializer.writeRequestHead(get)) { XCTAssertEqual($0 as? HTTP1SerializerError, .messageInProgress) }
        _ = try serializer.writeBody([3])
        XCTAssertThrowsError(try serializer.writeEnd(trailers: ["X": "1"])) {
            XCTAssertEqual($0 as? HTTP1SerializerError, .trailersRequireChunked)
        }
        XCTAssertEqual(try serializer.writeEnd(), [])
        XCTAssertThrowsError(try serializer.writeEnd()) { XCTAssertEqual($0 as? HTTP1SerializerError, .noMessageInProgress) }
    }

    func testFramingThatContradictsTheFieldsIsRefused() {
        var serializer = HTTP1Serializer()
        let post = HTTPRequestHead(method: "POST", path: "/", fields: ["Host": "h", "Content-Length": "5"])
        XCTAssertThrowsError(try serializer.writeRequestHead(post, framing: .chunked)) {
            XCTAssertEqual($0 as? HTTP1SerializerError, .framingConflict(requested: .chunked, declared: .contentLength(5)))
        }
        let old = HTTPRequestHead(method: "POST", path: "/", version: .http1_0)
        XCTAssertThrowsError(try serializer.writeRequestHead(old, framing: .chunked)) {
            XCTAssertEqual($0 as? HTTP1SerializerError, .framingNotAllowed(.chunked))
        }
        XCTAssertThrowsError(try serializer.writeRequestHead(old, framing: .closeDelimited)) {
            XCTAssertEqual($0 as? HTTP1SerializerError, .framingNotAllowed(.closeDelimited))
        }
        let gzip = HTTPResponseHead(status: 200, fields: ["Transfer-Encoding": "gzip"])
        XCTAssertThrowsError(try serializer.writeResponseHead(gzip)) {
            XCTAssertEqual($0 as? HTTP1SerializerError, .invalidFramingFields(.unsupportedTransferCoding("gzip")))
        }
        XCTAssertThrowsError(try serializer.writeResponseHead(HTTPResponseHead(status: 204), framing: .contentLength(3))) {
            XCTAssertEqual($0 as? HTTP1SerializerError, .framingConflict(requested: .contentLength(3), declared: .none))
        }
    }

    func testNoBodyFramingOnABodyCapableResponseSendsAZeroLength() throws {
        var serializer = HTTP1Serializer()
        let head = try serializer.writeResponseHead(HTTPResponseHead(status: 200), framing: HTTP1Framing.none)
        XCTAssertEqual(head.framing, .contentLength(0))
        XCTAssertEqual(head.fields["content-length"], "0")
    }

    func testNoBodyAndTunnelResponses() throws {
        var serializer = HTTP1Serializer()
        let interim = try serializer.writeResponseHead(HTTPResponseHead(status: 100), requestMethod: "PUT")
        XCTAssertEqual(String(decoding: interim.bytes, as: UTF8.self), "HTTP/1.1 100 Continue\r\n\r\n")
        let head = try serializer.writeResponseHead(HTTPResponseHead(status: 200, fields: ["Content-Length": "9"]), requestMethod: "HEAD")
        XCTAssertEqual(head.framing, .none)
        XCTAssertThrowsError(try serializer.writeBody([1])) { XCTAssertEqual($0 as? HTTP1SerializerError, .bodyNotAllowed) }
        XCTAssertEqual(try serializer.writeEnd(), [])
        let tunnel = try serializer.writeResponseHead(HTTPResponseHead(status: 200, reason: "Connection Established"), requestMethod: "CONNECT")
        XCTAssertEqual(tunnel.framing, .tunnel)
        XCTAssertThrowsError(try serializer.writeBody([1])) { XCTAssertEqual($0 as? HTTP1SerializerError, .connectionEnded) }
    }

    func testNothingCanInjectALine() {
        var serializer = HTTP1Serializer()
        let injected = HTTPRequestHead(method: "GET", path: "/", fields: ["Host": "h\r\nX-Injected: 1"])
        XCTAssertThrowsError(try serializer.writeRequestHead(injected)) {
            XCTAssertEqual($0 as? HTTP1SerializerError, .invalidField(HTTPField(name: "Host", value: "h\r\nX-Injected: 1")))
        }
        XCTAssertThrowsError(try serializer.writeRequestHead(HTTPRequestHead(method: "GET", path: "/", fields: ["Bad Name": "v"]))) {
            XCTAssertEqual($0 as? HTTP1SerializerError, .invalidField(HTTPField(name: "Bad Name", value: "v")))
        }
        XCTAssertThrowsError(try serializer.writeRequestHead(HTTPRequestHead(method: "G T", path: "/"))) {
            XCTAssertEqual($0 as? HTTP1SerializerError, .invalidMethod("G T"))
        }
        XCTAssertThrowsError(try serializer.writeRequestHead(HTTPRequestHead(method: "GET", path: "/a b"))) {
            XCTAssertEqual($0 as? HTTP1SerializerError, .invalidTarget("/a b"))
        }
        XCTAssertThrowsError(try serializer.writeRequestHead(HTTPRequestHead(method: "GET", path: "/", version: .http2))) {
            XCTAssertEqual($0 as? HTTP1SerializerError, .unsupportedVersion(.http2))
        }
        XCTAssertThrowsError(try serializer.writeResponseHead(HTTPResponseHead(status: 200, reason: "OK\r\nX: 1"))) {
            XCTAssertEqual($0 as? HTTP1SerializerError, .invalidReason("OK\r\nX: 1"))
        }
        XCTAssertThrowsError(try serializer.writeResponseHead(HTTPResponseHead(status: 42))) {
            XCTAssertEqual($0 as? HTTP1SerializerError, .invalidStatus(42))
        }
        XCTAssertThrowsError(try serializer.writeBody([1])) { XCTAssertEqual($0 as? HTTP1SerializerError, .noMessageInProgress) }
    }

    func testTargetFormsAndLatin1Values() throws {
        var serializer = HTTP1Serializer()
        let absolute = HTTPRequestHead(method: "GET", scheme: "http", authority: "h:8080", path: "/x", targetForm: .absolute,
                                       fields: ["Host": "h:8080", "X-Name": String(latin1: [0x63, 0xE9])])
        let bytes = try serializer.writeRequestHead(absolute).bytes
        XCTAssertEqual(bytes, Array("GET http://h:8080/x HTTP/1.1\r\nHost: h:8080\r\nX-Name: c".utf8) + [0xE9] + Array("\r\n\r\n".utf8))
        _ = try serializer.writeEnd()
        let connect = HTTPRequestHead(method: "CONNECT", authority: "h:443", path: "", targetForm: .authority, fields: ["Host": "h:443"])
        XCTAssertEqual(String(decoding: try serializer.writeRequestHead(connect).bytes, as: UTF8.self),
                       "CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n")
    }
}
