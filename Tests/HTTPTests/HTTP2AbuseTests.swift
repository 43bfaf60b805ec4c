import HTTP
import XCTest

/// Abuse cases crafted as raw frames against a server session, each with the
/// result the session promises: a stream error (RST_STREAM, event with the
/// reason) or a connection error (GOAWAY, one `.connectionError`).
final class HTTP2AbuseTests: XCTestCase {
    private let goaway = RawFrame.Kind.goaway.rawValue
    private let rstStream = RawFrame.Kind.rstStream.rawValue

    /// A server session that has accepted a well-formed client preface, its own preface drained.
    private func server(_ configuration: HTTP2Configuration = HTTP2Configuration()) -> HTTP2Session {
        let server = HTTP2Session(role: .server, configuration: configuration)
        XCTAssertEqual(server.receive(RawFrame.preface + RawFrame.settings()), [])
        _ = server.takeOutbound()
        return server
    }

    /// Feeds bytes, drains output, returns every event and the frames sent.
    private func exchange(_ server: HTTP2Session, _ bytes: [UInt8]) -> (events: [HTTP2Event], frames: [RawFrame.Parsed]) {
        var events = server.receive(bytes)
        let out = server.takeOutbound()
        events += server.takeEvents()
        return (events, RawFrame.parse(out))
    }

    private func requestHeads(_ events: [HTTP2Event]) -> [HTTP2StreamID] {
        events.compactMap { if case .requestHead(let id, _, _) = $0 { return id } else { return nil } }
    }

    func testBadClientPrefaceIsConnectionErrorWithGoAway() {
        let server = HTTP2Session(role: .server)
        let events = server.receive(Array("GET / HTTP/1.1\r\nHost: a.test\r\n\r\n".utf8))
        XCTAssertEqual(events, [.connectionError(.badClientPreface)])
        let frames = RawFrame.parse(server.takeOutbound())
        XCTAssertEqual(frames.last?.type, goaway)
        XCTAssertEqual(frames.last?.errorCode, HTTP2ErrorCode.protocolError.rawValue)
        XCTAssertTrue(server.isFinished)
        XCTAssertEqual(server.receive(RawFrame.preface), [], "nothing is read after a connection error")
        XCTAssertEqual(server.connectionError, .badClientPreface)
    }

    func testMalformedHeadsAreStreamErrorsWithTheirReason() {
        let valid = [(":method", "GET"), (":scheme", "https"), (":authority", "a.test"), (":path", "/")]
        let cases: [(String, [(String, String)], String)] = [
            ("uppercase name", valid + [("X-Upper", "1")], "name: [X-Upper]"),
            ("connection-specific field", valid + [("connection", "close")], "name: [connection]"),
            ("transfer-encoding", valid + [("transfer-encoding", "chunked")], "name: [transfer-encoding]"),
            ("te other than trailers", valid + [("te", "gzip")], "name: [te]"),
            ("missing :path", Array(valid.prefix(3)), "missing :path"),
            ("pseudo after regular", [(":method", "GET"), (":scheme", "https"), ("accept", "*/*"), (":path", "/")], "name: [:path]"),
            ("unknown pseudo", valid + [(":foo", "1")], "name: [:foo]"),
            ("duplicate pseudo", [(":method", "GET")] + valid, "name: [:method]"),
            ("response pseudo in request", valid + [(":status", "200")], "name: [:status]"),
        ]
        for (name, fields, reasonFragment) in cases {
            let server = server()
            let bad = exchange(server, RawFrame.headers(stream: 1, fields))
            XCTAssertEqual(bad.events.resets.count, 1, name)
            let reset = bad.events.resets.first
            XCTAssertEqual(reset?.stream, 1, name)
            XCTAssertEqual(reset?.code, .protocolError, name)
            XCTAssertEqual(reset?.initiator, .local, name)
            XCTAssertTrue(reset?.reason?.contains(reasonFragment) == true, "\(name): \(reset?.reason ?? "nil")")
            XCTAssertEqual(requestHeads(bad.events), [], name)
            XCTAssertEqual(bad.frames.map(\.type), [rstStream], name)
            XCTAssertEqual(bad.frames.first?.errorCode, HTTP2ErrorCode.protocolError.rawValue, name)
            // Only the stream failed: the connection takes the next request.
            let next = exchange(server, RawFrame.request(stream: 3))
            XCTAssertEqual(requestHeads(next.events), [3], name)
            XCTAssertEqual(next.events.connectionErrors, [], name)
        }
    }

    func testUppercaseFieldInResponseResetsClientStream() throws {
        let client = HTTP2Session(role: .client)
        let id = try client.sendRequest(HTTPRequestHead(method: "GET", scheme: "https", authority: "a.test", path: "/"),
                                        endStream: true)
        _ = client.takeOutbound()
        var events = client.receive(RawFrame.settings() + RawFrame.headers(stream: UInt32(id), [(":status", "200"), ("Bad", "1")]))
        let frames = RawFrame.parse(client.takeOutbound())
        events += client.takeEvents()
        XCTAssertEqual(events.resets.map(\.code), [.protocolError])
        XCTAssertTrue(events.resets.first?.reason?.contains("name: [Bad]") == true)
        XCTAssertTrue(frames.contains { $0.type == rstStream && $0.stream == UInt32(id) })
    }

    func testHeaderListOverLimitResetsStream() {
        let server = server(HTTP2Configuration(maxHeaderListSize: 1024))
        let big = RawFrame.headers(stream: 1, [(":method", "GET"), (":scheme", "https"), (":path", "/"), (":authority", "a.test"),
                                               ("x-a", String(repeating: "a", count: 600)), ("x-b", String(repeating: "b", count: 600))])
        let result = exchange(server, big)
        XCTAssertEqual(result.events.resets.map(\.stream), [1])
        XCTAssertEqual(result.events.resets.first?.reason, "header list larger than 1024 bytes")
        XCTAssertEqual(result.events.resets.first?.code, .enhanceYourCalm)
        XCTAssertEqual(requestHeads(result.events), [])
        let reset = result.frames.first { $0.type == rstStream }
        XCTAssertEqual(reset?.errorCode, HTTP2ErrorCode.enhanceYourCalm.rawValue)
        XCTAssertEqual(result.frames.filter { $0.type == rstStream }.count, 1)
        // The HPACK state stayed in step: the next request on the connection is read.
        XCTAssertEqual(requestHeads(exchange(server, RawFrame.request(stream: 3)).events), [3])
    }

    /// The refused request is reported before its reset, with what was kept
    /// of it (its pseudo-header fields and `intact-trace`, not the big
    /// fields), so a proxy can record it as an exchange.
    func testAHeaderListOverLimitIsReportedAsARefusedRequestWithItsPseudoFields() throws {
        let server = server(HTTP2Configuration(maxHeaderListSize: 1024))
        let big = RawFrame.headers(stream: 1, [(":method", "GET"), (":scheme", "https"), (":path", "/suite/rest/a"),
                                               (":authority", "a.test"), ("x-a", String(repeating: "a", count: 1200)),
                                               ("intact-trace", "t-1"), ("x-b", "b")])
        let events = exchange(server, big).events
        let refused = events.compactMap { event -> (HTTP2StreamID, HTTPRequestHead?, String)? in
            if case .requestRefused(let id, let head, let reason) = event { return (id, head, reason) }
            return nil
        }
        XCTAssertEqual(refused.count, 1)
        let (id, head, reason) = try XCTUnwrap(refused.first)
        XCTAssertEqual(id, 1)
        XCTAssertEqual(head?.method, "GET")
        XCTAssertEqual(head?.path, "/suite/rest/a")
        XCTAssertEqual(head?.authority, "a.test")
        XCTAssertEqual(head?.fields.map(\.name), ["intact-trace"])
        XCTAssertTrue(reason.hasSuffix("larger than 1024: refused with RST_STREAM ENHANCE_YOUR_CALM"), reason)
        XCTAssertEqual(events.resets.map(\.stream), [1], "the reset follows")
    }

    func testOversizedTrailersAreResetWithEnhanceYourCalm() {
        let server = server(HTTP2Configuration(maxHeaderListSize: 1024))
        let head = RawFrame.headers(stream: 1, [(":method", "POST"), (":scheme", "https"), (":path", "/"), (":authority", "a.test")],
                                    endStream: false)
        XCTAssertEqual(requestHeads(exchange(server, head).events), [1])
        let trailers = RawFrame.headers(stream: 1, [("x-t", String(repeating: "t", count: 1200))])
        let result = exchange(server, trailers)
        XCTAssertEqual(result.events.resets.map(\.code), [.enhanceYourCalm])
        XCTAssertEqual(result.events.resets.first?.reason, "header list larger than 1024 bytes")
    }

    /// HEADERS without END_HEADERS on stream 1, then `count` CONTINUATION frames of one small field each.
    private func continuations(_ count: Int, endLast: Bool) -> [UInt8] {
        var bytes = RawFrame.frame(.headers, flags: RawFrame.endStream, stream: 1,
                                   payload: RawFrame.headerBlock([(":method", "GET"), (":scheme", "https"), (":path", "/"),
                                                                  (":authority", "a.test")]))
        for n in 0..<count {
            let flags = endLast && n == count - 1 ? RawFrame.endHeaders : 0
            bytes += RawFrame.frame(.continuation, flags: flags, stream: 1, payload: RawFrame.headerBlock([("x-\(n)", "v")]))
        }
        return bytes
    }

    func testAContinuationFloodGetsEnhanceYourCalmNamingTheLimit() {
        XCTAssertEqual(requestHeads(exchange(server(), continuations(8, endLast: true)).events), [1], "8 are allowed")
        let server = server()
        let result = exchange(server, continuations(9, endLast: false))
        XCTAssertEqual(result.events.connectionErrors, [.continuationFlood(limit: 8)])
        XCTAssertEqual(result.frames.last?.type, goaway)
        XCTAssertEqual(result.frames.last?.errorCode, HTTP2ErrorCode.enhanceYourCalm.rawValue)
        XCTAssertTrue(HTTP2ConnectionError.continuationFlood(limit: 8).description.contains("more than 8 CONTINUATION"))
        XCTAssertTrue(HTTP2ConnectionError.flood(limit: 1000).description.contains("more than 1000"))
        let stricter = self.server(HTTP2Configuration(maxContinuations: 2))
        XCTAssertEqual(exchange(stricter, continuations(3, endLast: false)).events.connectionErrors,
                       [.continuationFlood(limit: 2)])
    }

    func testSettingsFloodIsConnectionError() {
        let server = server()
        let flood = (0..<1001).flatMap { _ in RawFrame.settings() }
        let result = exchange(server, flood)
        XCTAssertEqual(result.events.connectionErrors, [.flood(limit: 1000)])
        XCTAssertEqual(result.frames.last?.type, goaway)
        XCTAssertEqual(result.frames.last?.errorCode, HTTP2ErrorCode.enhanceYourCalm.rawValue)
        XCTAssertTrue(server.isFinished)
    }

    func testPingFloodIsConnectionErrorButAReadingPeerIsNot() {
        let reader = server()
        for _ in 0..<20 {
            let batch = exchange(reader, (0..<100).flatMap { _ in RawFrame.ping(7) })
            XCTAssertEqual(batch.events, [])
            XCTAssertEqual(batch.frames.count, 100, "every PING is answered")
        }
        let flooded = server()
        let result = exchange(flooded, (0..<1001).flatMap { _ in RawFrame.ping(7) })
        XCTAssertEqual(result.events.connectionErrors, [.flood(limit: 1000)])
        XCTAssertEqual(result.frames.last?.type, goaway)
        XCTAssertEqual(result.frames.last?.errorCode, HTTP2ErrorCode.enhanceYourCalm.rawValue)
    }

    /// Open-and-reset `count` streams starting at `first` (odd ids).
    private func rapidResets(from first: UInt32, count: Int) -> [UInt8] {
        (0..<UInt32(count)).flatMap { n -> [UInt8] in
            let id = first + 2 * n
            return RawFrame.request(stream: id) + RawFrame.rstStream(id, code: HTTP2ErrorCode.cancel.rawValue)
        }
    }

    func testRapidResetsBeyondLimitGetEnhanceYourCalm() {
        let server = server()
        let within = exchange(server, rapidResets(from: 1, count: 100))
        XCTAssertEqual(within.events.connectionErrors, [])
        XCTAssertEqual(within.events.resets.count, 100)
        XCTAssertTrue(within.events.resets.allSatisfy { $0.initiator == .peer && $0.code == .cancel })
        let over = exchange(server, rapidResets(from: 201, count: 1))
        XCTAssertEqual(over.events.connectionErrors, [.rapidReset(limit: 100, window: 1000)])
        XCTAssertEqual(over.frames.last?.type, goaway)
        XCTAssertEqual(over.frames.last?.errorCode, HTTP2ErrorCode.enhanceYourCalm.rawValue)
        XCTAssertEqual(requestHeads(exchange(server, RawFrame.request(stream: 203)).events), [], "nothing read after")
    }

    func testResetsSpreadOverManyStreamsAreTolerated() throws {
        let server = server(HTTP2Configuration(rapidResetLimit: 3, rapidResetWindow: 10))
        XCTAssertEqual(exchange(server, rapidResets(from: 1, count: 3)).events.connectionErrors, [])
        // Ten well-behaved streams push the resets out of the window.
        for n in 0..<10 {
            let id = UInt32(7 + 2 * n)
            XCTAssertEqual(requestHeads(exchange(server, RawFrame.request(stream: id)).events), [HTTP2StreamID(id)])
            try server.sendResponse(stream: HTTP2StreamID(id), head: HTTPResponseHead(status: 204), endStream: true)
        }
        XCTAssertEqual(exchange(server, rapidResets(from: 27, count: 3)).events.connectionErrors, [])
        let over = exchange(server, rapidResets(from: 33, count: 1))
        XCTAssertEqual(over.events.connectionErrors, [.rapidReset(limit: 3, window: 10)])
    }

    func testDataOnClosedStreamIsConnectionErrorStreamClosed() throws {
        let server = server()
        _ = exchange(server, RawFrame.request(stream: 1))
        try server.sendResponse(stream: 1, head: HTTPResponseHead(status: 200), endStream: true)
        _ = server.takeOutbound()
        XCTAssertEqual(server.openStreams, [])
        let result = exchange(server, RawFrame.data(1, [1, 2, 3]))
        XCTAssertEqual(result.events.connectionErrors, [.protocolViolation(code: .streamClosed, reason: "DATA: stream closed")])
        XCTAssertEqual(result.frames.map(\.type), [goaway])
        XCTAssertEqual(result.frames.first?.errorCode, HTTP2ErrorCode.streamClosed.rawValue)
    }

    func testDataOnStreamWeResetIsIgnored() throws {
        let server = server()
        _ = exchange(server, RawFrame.request(stream: 1, endStream: false))
        try server.resetStream(1, code: .cancel)
        XCTAssertEqual(exchange(server, []).frames.map(\.type), [rstStream])
        // DATA the client sent before it saw our RST_STREAM: no event, no error.
        let late = exchange(server, RawFrame.data(1, [UInt8](repeating: 0, count: 1000)))
        XCTAssertEqual(late.events, [])
        XCTAssertFalse(late.frames.contains { $0.type == goaway })
    }
}
