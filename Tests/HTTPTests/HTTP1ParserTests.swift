import XCTest
import HTTP

final class HTTP1ParserTests: XCTestCase {
    func testCorpusParsesIntoExpectedEvents() {
        for entry in HTTP1Corpus.all {
            let result = parse(entry.bytes, kind: entry.kind, methods: entry.methods, finish: entry.finish)
            XCTAssertNil(result.error, entry.name)
            XCTAssertEqual(coalesced(result.events).map(describe), entry.expected, entry.name)
        }
    }

    func testFeedingInPiecesGivesTheSameEvents() {
        for entry in HTTP1Corpus.all {
            let whole = parse(entry.bytes, kind: entry.kind, methods: entry.methods, finish: entry.finish)
            for piece in [1, 2, 7] {
                let pieces = parse(entry.bytes, kind: entry.kind, methods: entry.methods, finish: entry.finish, pieceSize: piece)
                XCTAssertNil(pieces.error, "\(entry.name) piece=\(piece)")
                XCTAssertEqual(coalesced(pieces.events), coalesced(whole.events), "\(entry.name) piece=\(piece)")
            }
        }
    }

    func testRawHeadIsTheExactWireSpanWithoutTheBlankLine() throws {
        let wire = "POST /p HTTP/1.1\r\nHost: h\r\nx-Mixed-CASE:  spaced \t\r\nContent-Length: 2\r\n\r\nab"
        let events = parse(Array(wire.utf8), kind: .request).events
        guard case .requestHead(let head)? = events.first else { return XCTFail("no head") }
        XCTAssertEqual(String(decoding: head.rawHead, as: UTF8.self),
                       "POST /p HTTP/1.1\r\nHost: h\r\nx-Mixed-CASE:  spaced \t\r\nContent-Length: 2\r\n")
        XCTAssertEqual(head.head.fields[1], HTTPField(name: "x-Mixed-CASE", value: "spaced"))

        let bare = parse(Array("\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n".utf8), kind: .request).events
        guard case .requestHead(let second)? = bare.first else { return XCTFail("no head") }
        XCTAssertEqual(String(decoding: second.rawHead, as: UTF8.self), "GET / HTTP/1.1\r\nHost: h\r\n")

        let noFields = parse(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8), kind: .response, methods: ["GET"]).events
        guard case .responseHead(let interim)? = noFields.first else { return XCTFail("no head") }
        XCTAssertEqual(String(decoding: interim.rawHead, as: UTF8.self), "HTTP/1.1 100 Continue\r\n")
    }

    func testBodyStreamsBeforeTheMessageIsComplete() throws {
        var parser = HTTP1Parser(parsing: .request)
        parser.feed(Array("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nabc".utf8))
        XCTAssertEqual(try parser.parseAvailable().dropFirst().map(describe), ["body abc"])
        parser.feed(Array("defghij".utf8))
        XCTAssertEqual(try parser.parseAvailable().map(describe), ["body defghij", "end"])

        var chunked = HTTP1Parser(parsing: .response)
        chunked.expectResponse(to: "GET")
        chunked.feed(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n0123".utf8))
        XCTAssertEqual(try chunked.parseAvailable().dropFirst().map(describe), ["body 0123"])
        chunked.feed(Array("456789abcdef\r\n0\r\n\r\n".utf8))
        XCTAssertEqual(try chunked.parseAvailable().map(describe), ["body 456789abcdef", "end"])
    }

    func testTheEndIsKnownToComeNextOnceAFixedLengthBodyIsAllReturned() throws {
        var parser = HTTP1Parser(parsing: .response)
        parser.expectResponse(to: "GET")
        parser.feed(Array("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nabc".utf8))
        XCTAssertNotNil(try parser.next(), "the head")
        XCTAssertFalse(parser.endsMessageNext)
        XCTAssertEqual(try parser.next().map(describe), "body abc")
        XCTAssertFalse(parser.endsMessageNext, "three bytes of the body are still to come")
        parser.feed(Array("def".utf8))
        XCTAssertEqual(try parser.next().map(describe), "body def")
        XCTAssertTrue(parser.endsMessageNext, "the last byte ended the message; no byte is needed for its end")
        XCTAssertEqual(try parser.next().map(describe), "end")
        XCTAssertFalse(parser.endsMessageNext)

        var chunked = HTTP1Parser(parsing: .response)
        chunked.expectResponse(to: "GET")
        chunked.feed(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc".utf8))
        XCTAssertEqual(try chunked.parseAvailable().dropFirst().map(describe), ["body abc"])
        XCTAssertFalse(chunked.endsMessageNext, "a chunked body ends only with its last chunk, not yet read")
    }

    func testConnectPausesUntilTheTunnelIsAccepted() throws {
        var parser = HTTP1Parser(parsing: .request)
        parser.feed(Array("CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n\u{16}\u{03}".utf8))
        XCTAssertEqual(try parser.parseAvailable().count, 2)
        XCTAssertTrue(parser.isAwaitingTunnelDecision)
        XCTAssertNil(try parser.next())
        var accepted = parser
        XCTAssertTrue(accepted.acceptTunnel())
        XCTAssertEqual(try accepted.next(), .tunnel(leftover: [0x16, 0x03]))
        accepted.feed([0x01])
        XCTAssertEqual(try accepted.next(), .tunnel(leftover: [0x01]))
        XCTAssertNil(try accepted.next())
        XCTAssertFalse(accepted.acceptTunnel())
    }

    func testRefusedConnectResumesWithTheNextRequest() throws {
        var parser = HTTP1Parser(parsing: .request)
        parser.feed(Array("CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n".utf8))
        XCTAssertEqual(try parser.parseAvailable().count, 2)
        XCTAssertTrue(parser.refuseTunnel())
        XCTAssertFalse(parser.isAwaitingTunnelDecision)
        XCTAssertEqual(try parser.parseAvailable().map(describe),
                       ["GET origin scheme=- authority=h path=/ HTTP/1.1 fields=1 none keepAlive=true", "end"])
    }

    func testUpgradeNeedsTheConnectionOptionAndHTTP11() {
        let notListed = parse(Array("GET / HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\n\r\n".utf8), kind: .request).events
        XCTAssertEqual(notListed.first.map(describe), "GET origin scheme=- authority=h path=/ HTTP/1.1 fields=2 none keepAlive=true")
        let old = parse(Array("GET / HTTP/1.0\r\nConnection: upgrade\r\nUpgrade: websocket\r\nExpect: 100-continue\r\n\r\n".utf8), kind: .request).events
        XCTAssertEqual(old.first.map(describe), "GET origin scheme=- authority=- path=/ HTTP/1.0 fields=3 none keepAlive=false")
    }

    func testBytesAfterConnectionCloseAreDiscarded() throws {
        var parser = HTTP1Parser(parsing: .request)
        parser.feed(Array("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\nGET /smuggled HTTP/1.1\r\n\r\n".utf8))
        XCTAssertEqual(try parser.parseAvailable().count, 2)
        XCTAssertNil(try parser.next())
        XCTAssertEqual(parser.discardedByteCount, 26)
    }

    func testFinishBetweenMessagesIsClean() throws {
        var parser = HTTP1Parser(parsing: .request)
        parser.feed(Array("GET / HTTP/1.1\r\nHost: h\r\n\r\n\r\n".utf8))
        XCTAssertEqual(try parser.parseAvailable().count, 2)
        parser.finish()
        XCTAssertNil(try parser.next())

        var responses = HTTP1Parser(parsing: .response)
        responses.finish()
        XCTAssertNil(try responses.next())
    }

    func testResponseFramingFollowsTheMethodsInOrder() throws {
        var parser = HTTP1Parser(parsing: .response)
        parser.expectResponse(to: "HEAD")
        parser.feed(Array("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n".utf8))
        XCTAssertEqual(try parser.parseAvailable().map(describe), ["HTTP/1.1 200 OK fields=1 none keepAlive=true to=HEAD", "end"])
        parser.feed(Array("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc".utf8))
        XCTAssertThrowsError(try parser.next()) { XCTAssertEqual($0 as? HTTP1ParseError, .unsolicitedResponse) }
    }

    func testStatusLineWithoutReasonSeparator() {
        let events = parse(Array("HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n".utf8), kind: .response, methods: ["GET"]).events
        XCTAssertEqual(events.map(describe), ["HTTP/1.1 200  fields=1 contentLength(0) keepAlive=true to=GET", "end"])
    }

    func testDefaultLimitsAcceptWhatFits() {
        let target = "/" + String(repeating: "a", count: 8192 - "GET  HTTP/1.1".count - 1)
        let line = "GET \(target) HTTP/1.1"
        XCTAssertEqual(line.utf8.count, 8192)
        XCTAssertNil(parse(Array("\(line)\r\nHost: h\r\n\r\n".utf8), kind: .request, pieceSize: 1).error)

        let fields = (1..<200).map { "X-\($0): v\r\n" }.joined()
        let full = parse(Array("GET / HTTP/1.1\r\nHost: h\r\n\(fields)\r\n".utf8), kind: .request)
        XCTAssertNil(full.error)
        guard case .requestHead(let head)? = full.events.first else { return XCTFail("no head") }
        XCTAssertEqual(head.head.fields.count, 200)
    }

    /// A 60 KiB head fed one byte at a time: each byte is scanned once, so
    /// this stays linear (a rescanning parser would do ~2 billion byte visits).
    func testLargeHeadFedByteAtATime() {
        let fields = (0..<150).map { "X-Field-\($0): " + String(repeating: "v", count: 380) + "\r\n" }.joined()
        let wire = Array("GET / HTTP/1.1\r\nHost: h\r\n\(fields)\r\n".utf8)
        XCTAssertGreaterThan(wire.count, 57_000)
        let result = parse(wire, kind: .request, pieceSize: 1)
        XCTAssertNil(result.error)
        guard case .requestHead(let head)? = result.events.first else { return XCTFail("no head") }
        XCTAssertEqual(head.head.fields.count, 151)
        XCTAssertEqual(head.rawHead, Array(wire.dropLast(2)))
    }

    /// Many pipelined messages fed in pieces that end mid-head, so consumed
    /// bytes are dropped while a head is half read.
    func testLongPipelineAcrossBufferCompaction() {
        let one = "POST /item HTTP/1.1\r\nHost: h\r\nContent-Length: 40\r\n\r\n" + String(repeating: "p", count: 40)
        let wire = Array(String(repeating: one, count: 300).utf8)
        let whole = parse(wire, kind: .request)
        XCTAssertNil(whole.error)
        XCTAssertEqual(whole.events.count(where: { if case .end = $0 { true } else { false } }), 300)
        for piece in [4999, 6007] {
            let pieces = parse(wire, kind: .request, pieceSize: piece)
            XCTAssertNil(pieces.error)
            XCTAssertEqual(coalesced(pieces.events), coalesced(whole.events))
        }
    }

    func testCustomLimits() {
        let limits = HTTP1ParserLimits(maxStartLineLength: 16, maxHeaderSectionLength: 20, maxFieldCount: 2)
        XCTAssertNil(parse(Array("GET /12 HTTP/1.1\r\nHost: h\r\nA: 1234\r\n\r\n".utf8), kind: .request, limits: limits).error)
        XCTAssertEqual(parse(Array("GET /123 HTTP/1.1\r\nHost: h\r\n\r\n".utf8), kind: .request, limits: limits).error,
                       .startLineTooLong(limit: 16))
        XCTAssertEqual(parse(Array("GET / HTTP/1.1\r\nHost: h\r\nA: 12345\r\n\r\n".utf8), kind: .request, limits: limits).error,
                       .headerSectionTooLarge(limit: 20))
        XCTAssertEqual(parse(Array("GET / HTTP/1.1\r\nHost: h\r\nA:1\r\nB:2\r\n\r\n".utf8), kind: .request, limits: limits).error,
                       .tooManyFields(limit: 2))
    }

    func testTrailersAreCheckedAgainstTheLimits() {
        let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n"
        let limits = HTTP1ParserLimits(maxHeaderSectionLength: 40, maxFieldCount: 1)
        let long = String(repeating: "x", count: 40)
        XCTAssertNil(parse(Array("\(head)A: 1\r\n\r\n".utf8), kind: .response, methods: ["GET"], limits: limits).error)
        XCTAssertEqual(parse(Array("\(head)A: 1\r\nB: 2\r\n\r\n".utf8), kind: .response, methods: ["GET"], limits: limits).error,
                       .tooManyFields(limit: 1))
        XCTAssertEqual(parse(Array("\(head)A: \(long)\r\n\r\n".utf8), kind: .response, methods: ["GET"], limits: limits).error,
                       .headerSectionTooLarge(limit: 40))
    }
}
