import XCTest
import HTTP

/// Every malformed or ambiguous input is refused with its own error and the
/// status a server would answer, whether it arrives whole or byte by byte.
final class HTTP1ParserRejectionTests: XCTestCase {
    private struct Bad {
        var wire: String
        var error: HTTP1ParseError
        var status: HTTPStatus
        var kind: HTTP1Parser.Kind = .request
        var methods: [HTTPMethod] = []
        var finish = false
        var limits: HTTP1ParserLimits = .standard
    }

    private func check(_ cases: [Bad], file: StaticString = #filePath, line: UInt = #line) {
        for bad in cases {
            let bytes = bad.wire.latin1Bytes
            for piece in [nil, 1] as [Int?] {
                let result = parse(bytes, kind: bad.kind, methods: bad.methods, finish: bad.finish,
                                   pieceSize: piece, limits: bad.limits)
                XCTAssertEqual(result.error, bad.error, "\(bad.wire.debugDescription) piece=\(piece.map(String.init) ?? "whole")",
                               file: file, line: line)
            }
            XCTAssertEqual(bad.error.status, bad.status, "\(bad.error)", file: file, line: line)
            XCTAssertFalse(bad.error.reason.isEmpty)
        }
    }

    private func request(_ fieldLines: String, line: String = "POST / HTTP/1.1", body: String = "") -> String {
        "\(line)\r\nHost: h\r\n\(fieldLines)\r\n\(body)"
    }

    func testTransferEncodingSmuggling() {
        check([
            Bad(wire: request("Content-Length: 3\r\nTransfer-Encoding: chunked\r\n"), error: .contentLengthWithTransferEncoding, status: 400),
            Bad(wire: request("Transfer-Encoding: chunked\r\nContent-Length: 3\r\n"), error: .contentLengthWithTransferEncoding, status: 400),
            Bad(wire: request("Transfer-Encoding: chunked, chunked\r\n"), error: .duplicateChunked, status: 400),
            Bad(wire: request("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n"), error: .duplicateChunked, status: 400),
            Bad(wire: request("Transfer-Encoding : chunked\r\n"), error: .whitespaceBeforeColon(name: "Transfer-Encoding"), status: 400),
            Bad(wire: request("Transfer-Encoding\t: chunked\r\n"), error: .whitespaceBeforeColon(name: "Transfer-Encoding"), status: 400),
            Bad(wire: request("Transfer-Encoding: xchunked\r\n"), error: .obfuscatedTransferEncoding("xchunked"), status: 400),
            Bad(wire: request("Transfer-Encoding: chunkedx\r\n"), error: .obfuscatedTransferEncoding("chunkedx"), status: 400),
            Bad(wire: request("Transfer-Encoding: chunked;q=1\r\n"), error: .obfuscatedTransferEncoding("chunked;q=1"), status: 400),
            Bad(wire: request("Transfer-Encoding: \"chunked\"\r\n"), error: .obfuscatedTransferEncoding("\"chunked\""), status: 400),
            Bad(wire: request("Transfer-Encoding: chunked, \r\n"), error: .obfuscatedTransferEncoding("chunked,"), status: 400),
            Bad(wire: request("Transfer-Encoding: chun ked\r\n"), error: .obfuscatedTransferEncoding("chun ked"), status: 400),
            Bad(wire: request("Transfer-Encoding:\u{0B}chunked\r\n"),
                error: .invalidFieldValue(name: "Transfer-Encoding", byte: 0x0B), status: 400),
            Bad(wire: request("Transfer-Encoding: chunked\u{0B}\r\n"),
                error: .invalidFieldValue(name: "Transfer-Encoding", byte: 0x0B), status: 400),
            Bad(wire: request("Transfer-Encoding: gzip\r\n"), error: .unsupportedTransferCoding("gzip"), status: 501),
            Bad(wire: request("Transfer-Encoding: gzip, chunked\r\n"), error: .unsupportedTransferCoding("gzip"), status: 501),
            Bad(wire: request("Transfer-Encoding: identity\r\n"), error: .unsupportedTransferCoding("identity"), status: 501),
            Bad(wire: request("Transfer-Encoding: chunked, gzip\r\n"), error: .chunkedNotLast, status: 400),
            Bad(wire: request("Transfer-Encoding: chunked\r\n", line: "POST / HTTP/1.0"), error: .transferEncodingInHTTP10, status: 400),
        ])
    }

    func testContentLength() {
        check([
            Bad(wire: request("Content-Length: +5\r\n"), error: .invalidContentLength("+5"), status: 400),
            Bad(wire: request("Content-Length: -1\r\n"), error: .invalidContentLength("-1"), status: 400),
            Bad(wire: request("Content-Length: 1 0\r\n"), error: .invalidContentLength("1 0"), status: 400),
            Bad(wire: request("Content-Length: 5a\r\n"), error: .invalidContentLength("5a"), status: 400),
            Bad(wire: request("Content-Length: 0x5\r\n"), error: .invalidContentLength("0x5"), status: 400),
            Bad(wire: request("Content-Length: \r\n"), error: .invalidContentLength(""), status: 400),
            Bad(wire: request("Content-Length: 5,\r\n"), error: .invalidContentLength("5,"), status: 400),
            Bad(wire: request("Content-Length: 99999999999999999999999\r\n"),
                error: .invalidContentLength("99999999999999999999999"), status: 400),
            Bad(wire: request("Content-Length: 5\r\nContent-Length: 6\r\n"), error: .conflictingContentLengths(["5", "6"]), status: 400),
            Bad(wire: request("Content-Length: 5, 6\r\n"), error: .conflictingContentLengths(["5, 6"]), status: 400),
        ])
    }

    func testChunkedBody() {
        let head = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
        let tiny = HTTP1ParserLimits(maxChunkLineLength: 8)
        check([
            Bad(wire: head + "g\r\n", error: .invalidChunkSize("g"), status: 400),
            Bad(wire: head + "0x5\r\nhello\r\n", error: .invalidChunkSize("0x5"), status: 400),
            Bad(wire: head + "-1\r\n", error: .invalidChunkSize("-1"), status: 400),
            Bad(wire: head + " 5\r\n", error: .invalidChunkSize(" 5"), status: 400),
            Bad(wire: head + "\r\n", error: .invalidChunkSize(""), status: 400),
            Bad(wire: head + "fffffffffffffffff\r\n", error: .chunkSizeTooLarge("fffffffffffffffff"), status: 400),
            Bad(wire: head + "5 \r\nhello\r\n", error: .invalidChunkExtension(" "), status: 400),
            Bad(wire: head + "5;\r\nhello\r\n", error: .invalidChunkExtension(";"), status: 400),
            Bad(wire: head + "5;a=\"x\r\nhello\r\n", error: .invalidChunkExtension(";a=\"x"), status: 400),
            Bad(wire: head + "5;a=b c\r\nhello\r\n", error: .invalidChunkExtension(";a=b c"), status: 400),
            Bad(wire: head + "5\r\nhelloX\r\n", error: .missingChunkDataTerminator, status: 400),
            Bad(wire: head + "5\r\nhello\rX", error: .missingChunkDataTerminator, status: 400),
            Bad(wire: head + "5\nhello\r\n", error: .bareLineFeed, status: 400),
            Bad(wire: head + "5;aaaaaaaaaa\r\n", error: .chunkLineTooLong(limit: 8), status: 400, limits: tiny),
            Bad(wire: head + "5;aaaaaaaaaaaa", error: .chunkLineTooLong(limit: 8), status: 400, limits: tiny),
            Bad(wire: head + "0\r\nContent-Length: 5\r\n\r\n", error: .forbiddenTrailerField("Content-Length"), status: 400),
            Bad(wire: head + "0\r\nTransfer-Encoding: chunked\r\n\r\n", error: .forbiddenTrailerField("Transfer-Encoding"), status: 400),
            Bad(wire: head + "0\r\nX: a\r\n b\r\n\r\n", error: .obsoleteLineFolding, status: 400),
        ])
    }

    func testFieldLines() {
        check([
            Bad(wire: request("X-A: a\r\n folded\r\n"), error: .obsoleteLineFolding, status: 400),
            Bad(wire: request("X-A: a\r\n\tfolded\r\n"), error: .obsoleteLineFolding, status: 400),
            Bad(wire: "GET / HTTP/1.1\r\n Host: h\r\n\r\n", error: .obsoleteLineFolding, status: 400),
            Bad(wire: request("X-A: a\rb\r\n"), error: .invalidFieldValue(name: "X-A", byte: 0x0D), status: 400),
            Bad(wire: request("X-A: a\u{0}b\r\n"), error: .invalidFieldValue(name: "X-A", byte: 0x00), status: 400),
            Bad(wire: request("X-A: a\u{7F}\r\n"), error: .invalidFieldValue(name: "X-A", byte: 0x7F), status: 400),
            Bad(wire: request("X-A: a\nb\r\n"), error: .bareLineFeed, status: 400),
            Bad(wire: "GET / HTTP/1.1\nHost: h\n\n", error: .bareLineFeed, status: 400),
            Bad(wire: "GET / HTTP/1.1\r\nHost: h\n\r\n", error: .bareLineFeed, status: 400),
            Bad(wire: request("X A: b\r\n"), error: .invalidFieldName("X A"), status: 400),
            Bad(wire: request("X(A): b\r\n"), error: .invalidFieldName("X(A)"), status: 400),
            Bad(wire: request("X-\u{E9}: b\r\n"), error: .invalidFieldName("X-\u{E9}"), status: 400),
            Bad(wire: request(": b\r\n"), error: .invalidFieldName(""), status: 400),
            Bad(wire: request("NoColon\r\n"), error: .missingColon, status: 400),
        ])
    }

    func testRequestLineAndTarget() {
        check([
            Bad(wire: "G(T / HTTP/1.1\r\nHost: h\r\n\r\n", error: .invalidMethod("G(T"), status: 400),
            Bad(wire: "GET  / HTTP/1.1\r\nHost: h\r\n\r\n", error: .invalidRequestLine("GET  / HTTP/1.1"), status: 400),
            Bad(wire: "GET / HTTP/1.1 \r\nHost: h\r\n\r\n", error: .invalidRequestLine("GET / HTTP/1.1 "), status: 400),
            Bad(wire: "GET /\r\nHost: h\r\n\r\n", error: .invalidRequestLine("GET /"), status: 400),
            Bad(wire: "GET\t/ HTTP/1.1\r\nHost: h\r\n\r\n", error: .invalidRequestLine("GET\\x09/ HTTP/1.1"), status: 400),
            Bad(wire: "GET / HTTP/1.1\rX\r\nHost: h\r\n\r\n", error: .invalidVersion("HTTP/1.1\rX"), status: 400),
            Bad(wire: "GET example.test HTTP/1.1\r\nHost: h\r\n\r\n", error: .invalidRequestTarget("example.test"), status: 400),
            Bad(wire: "GET /a#frag HTTP/1.1\r\nHost: h\r\n\r\n", error: .invalidRequestTarget("/a#frag"), status: 400),
            Bad(wire: "GET /caf\u{E9} HTTP/1.1\r\nHost: h\r\n\r\n", error: .invalidRequestTarget("/caf\u{E9}"), status: 400),
            Bad(wire: "GET * HTTP/1.1\r\nHost: h\r\n\r\n", error: .invalidRequestTarget("*"), status: 400),
            Bad(wire: "GET ftp://h/ HTTP/1.1\r\nHost: h\r\n\r\n", error: .invalidRequestTarget("ftp://h/"), status: 400),
            Bad(wire: "GET http://user@h/ HTTP/1.1\r\nHost: h\r\n\r\n", error: .invalidRequestTarget("http://user@h/"), status: 400),
            Bad(wire: "GET http:///x HTTP/1.1\r\nHost: h\r\n\r\n", error: .invalidRequestTarget("http:///x"), status: 400),
            Bad(wire: "CONNECT /x HTTP/1.1\r\nHost: h\r\n\r\n", error: .invalidRequestTarget("/x"), status: 400),
            Bad(wire: "CONNECT h HTTP/1.1\r\nHost: h\r\n\r\n", error: .invalidRequestTarget("h"), status: 400),
            Bad(wire: "CONNECT h:99999 HTTP/1.1\r\nHost: h\r\n\r\n", error: .invalidRequestTarget("h:99999"), status: 400),
            Bad(wire: "CONNECT h:443 HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc", error: .contentInConnectRequest, status: 400),
        ])
    }

    func testVersions() {
        check([
            Bad(wire: "GET / HTTP/2.0\r\nHost: h\r\n\r\n", error: .unsupportedVersion("HTTP/2.0"), status: 505),
            Bad(wire: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", error: .unsupportedVersion("HTTP/2.0"), status: 505),
            Bad(wire: "GET / HTTP/3\r\nHost: h\r\n\r\n", error: .unsupportedVersion("HTTP/3"), status: 505),
            Bad(wire: "GET / HTTP/1.2\r\nHost: h\r\n\r\n", error: .unsupportedVersion("HTTP/1.2"), status: 505),
            Bad(wire: "GET / HTTP/0.9\r\nHost: h\r\n\r\n", error: .unsupportedVersion("HTTP/0.9"), status: 505),
            Bad(wire: "GET / http/1.1\r\nHost: h\r\n\r\n", error: .invalidVersion("http/1.1"), status: 400),
            Bad(wire: "GET / HTTP/1\r\nHost: h\r\n\r\n", error: .invalidVersion("HTTP/1"), status: 400),
            Bad(wire: "GET / HTTP/1.1x\r\nHost: h\r\n\r\n", error: .invalidVersion("HTTP/1.1x"), status: 400),
            Bad(wire: "GET / FOO\r\nHost: h\r\n\r\n", error: .invalidVersion("FOO"), status: 400),
        ])
    }

    func testHost() {
        check([
            Bad(wire: "GET / HTTP/1.1\r\nAccept: */*\r\n\r\n", error: .missingHost, status: 400),
            Bad(wire: "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", error: .multipleHosts, status: 400),
            Bad(wire: "GET / HTTP/1.0\r\nHost: a\r\nhost: a\r\n\r\n", error: .multipleHosts, status: 400),
            Bad(wire: "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", error: .invalidHost("a b"), status: 400),
            Bad(wire: "GET / HTTP/1.1\r\nHost: user@h\r\n\r\n", error: .invalidHost("user@h"), status: 400),
            Bad(wire: "GET / HTTP/1.1\r\nHost: h/x\r\n\r\n", error: .invalidHost("h/x"), status: 400),
        ])
    }

    func testLimits() {
        let longTarget = "/" + String(repeating: "a", count: 8 * 1024)
        let manyFields = (0...200).map { "X-\($0): v\r\n" }.joined()
        let bigField = "X-Big: " + String(repeating: "b", count: 64 * 1024) + "\r\n"
        check([
            Bad(wire: "GET \(longTarget) HTTP/1.1\r\nHost: h\r\n\r\n", error: .startLineTooLong(limit: 8192), status: 414),
            // Refused before the line ends: no LF ever comes.
            Bad(wire: "GET \(longTarget)", error: .startLineTooLong(limit: 8192), status: 414),
            Bad(wire: request(manyFields), error: .tooManyFields(limit: 200), status: 431),
            Bad(wire: request(bigField), error: .headerSectionTooLarge(limit: 65536), status: 431),
            Bad(wire: "GET / HTTP/1.1\r\nHost: h\r\n" + String(repeating: "y", count: 70_000),
                error: .headerSectionTooLarge(limit: 65536), status: 431),
        ])
    }

    func testTruncatedMessages() {
        check([
            Bad(wire: "GET / HTTP/1.1\r\nHo", error: .truncated(.head), status: 400, finish: true),
            Bad(wire: "GET / HT", error: .truncated(.head), status: 400, finish: true),
            Bad(wire: request("Content-Length: 5\r\n", body: "abc"), error: .truncated(.body), status: 400, finish: true),
            Bad(wire: request("Content-Length: 5\r\n"), error: .truncated(.body), status: 400, finish: true),
            Bad(wire: request("Transfer-Encoding: chunked\r\n", body: "5\r\nab"), error: .truncated(.chunkedBody), status: 400, finish: true),
            Bad(wire: request("Transfer-Encoding: chunked\r\n", body: "5\r\nhello"), error: .truncated(.chunkedBody), status: 400, finish: true),
            Bad(wire: request("Transfer-Encoding: chunked\r\n", body: "5\r\nhello\r"), error: .truncated(.chunkedBody), status: 400, finish: true),
            Bad(wire: request("Transfer-Encoding: chunked\r\n", body: "5"), error: .truncated(.chunkedBody), status: 400, finish: true),
            Bad(wire: request("Transfer-Encoding: chunked\r\n", body: "0\r\nX: 1\r\n"), error: .truncated(.trailers), status: 400, finish: true),
            Bad(wire: "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nab", error: .truncated(.body), status: 400,
                kind: .response, methods: ["GET"], finish: true),
        ])
    }

    func testResponses() {
        check([
            Bad(wire: "HTTP/1.1 20 OK\r\n\r\n", error: .invalidStatusLine, status: 400, kind: .response, methods: ["GET"]),
            Bad(wire: "HTTP/1.1 200OK\r\n\r\n", error: .invalidStatusLine, status: 400, kind: .response, methods: ["GET"]),
            Bad(wire: "HTTP/1.1 099 Low\r\n\r\n", error: .invalidStatusLine, status: 400, kind: .response, methods: ["GET"]),
            Bad(wire: "HTTP/1.1 2x0 OK\r\n\r\n", error: .invalidStatusLine, status: 400, kind: .response, methods: ["GET"]),
            Bad(wire: "HTTP/1.1 200 O\u{1}K\r\n\r\n", error: .invalidStatusLine, status: 400, kind: .response, methods: ["GET"]),
            Bad(wire: "\r\nHTTP/1.1 200 OK\r\n\r\n", error: .invalidStatusLine, status: 400, kind: .response, methods: ["GET"]),
            Bad(wire: "HTTP/2 200 OK\r\n\r\n", error: .unsupportedVersion("HTTP/2"), status: 505, kind: .response, methods: ["GET"]),
            Bad(wire: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na", error: .unsolicitedResponse, status: 400, kind: .response),
            Bad(wire: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
                error: .contentLengthWithTransferEncoding, status: 400, kind: .response, methods: ["GET"]),
            Bad(wire: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
                error: .unsupportedTransferCoding("gzip"), status: 501, kind: .response, methods: ["GET"]),
        ])
    }

    func testErrorIsStickyAndLaterBytesAreIgnored() {
        var parser = HTTP1Parser(parsing: .request)
        parser.feed(Array("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n".utf8))
        XCTAssertThrowsError(try parser.next()) { XCTAssertEqual($0 as? HTTP1ParseError, .multipleHosts) }
        parser.feed(Array("GET / HTTP/1.1\r\nHost: h\r\n\r\n".utf8))
        XCTAssertThrowsError(try parser.next()) { XCTAssertEqual($0 as? HTTP1ParseError, .multipleHosts) }
    }
}
