import Hashing
import HTTP
import XCTest

final class HTTP2SessionTests: XCTestCase {
    private func get(_ path: String, fields: HTTPFields = HTTPFields()) -> HTTPRequestHead {
        HTTPRequestHead(method: "GET", scheme: "https", authority: "a.test", path: path, fields: fields)
    }

    func testPrefaceExchangeAcknowledgesSettings() throws {
        let pair = HTTP2Pair()
        try pair.pump()
        XCTAssertEqual(pair.clientEvents, [.settingsAcknowledged])
        XCTAssertEqual(pair.serverEvents, [.settingsAcknowledged])
        XCTAssertFalse(pair.client.isFinished)
    }

    func testRequestHeadCarriesDecodedListAndMappedFields() throws {
        let pair = HTTP2Pair()
        var fields: HTTPFields = ["Host": "ignored.test", "Accept": "*/*", "Cookie": "a=1", "Connection": "keep-alive, X-Hop",
                                  "X-Hop": "1", "Keep-Alive": "5", "TE": "trailers", "Transfer-Encoding": "chunked"]
        fields.append("cookie", "b=2")
        fields.append("Upgrade", "h2c")
        let id = try pair.client.sendRequest(get("/p?q=1", fields: fields), endStream: true)
        XCTAssertEqual(id, 1)
        try pair.pump()
        guard case .requestHead(let stream, let head, let decoded)? = pair.serverEvents.first(where: {
            if case .requestHead = $0 { return true } else { return false }
        }) else { return XCTFail("no request head: \(pair.serverEvents)") }
        XCTAssertEqual(stream, 1)
        XCTAssertEqual(decoded.map(\.name), [":method", ":scheme", ":authority", ":path", "accept", "cookie", "te", "cookie"])
        XCTAssertEqual(decoded.map(\.value), ["GET", "https", "a.test", "/p?q=1", "*/*", "a=1", "trailers", "b=2"])
        XCTAssertEqual(head, HTTPRequestHead(method: "GET", scheme: "https", authority: "a.test", path: "/p?q=1",
                                             targetForm: .origin, version: .http2,
                                             fields: ["accept": "*/*", "cookie": "a=1", "te": "trailers", "cookie": "b=2"]))
        XCTAssertTrue(pair.serverEvents.contains(.streamEnded(stream: 1, trailers: nil)))
    }

    func testMovedEventsFollowTheUnreadOnesAndTheEmptiedStorageIsReused() throws {
        let client = HTTP2Session(role: .client)
        let server = HTTP2Session(role: .server)
        _ = try client.sendRequest(get("/a"), endStream: true)
        server.feed(client.takeOutbound(maxBytes: 1 << 20))
        var batch: [HTTP2Event] = [.pingAcknowledged(7)]
        server.moveEvents(into: &batch)
        XCTAssertEqual(batch.first, .pingAcknowledged(7))
        XCTAssertTrue(batch.contains(.streamEnded(stream: 1, trailers: nil)))
        var none: [HTTP2Event] = []
        server.moveEvents(into: &none)
        XCTAssertEqual(none, [], "moved events are not moved twice")
        // An empty batch takes the session's array whole and leaves its own (emptied) storage behind.
        _ = try client.sendRequest(get("/b"), endStream: true)
        server.feed(client.takeOutbound(maxBytes: 1 << 20))
        var empty: [HTTP2Event] = []
        empty.reserveCapacity(40)
        let emptyStorage = empty.withUnsafeBufferPointer { $0.baseAddress }
        server.moveEvents(into: &empty)
        XCTAssertTrue(empty.contains(.streamEnded(stream: 3, trailers: nil)))
        _ = try client.sendRequest(get("/c"), endStream: true)
        server.feed(client.takeOutbound(maxBytes: 1 << 20))
        var next: [HTTP2Event] = []
        server.moveEvents(into: &next)
        XCTAssertEqual(next.withUnsafeBufferPointer { $0.baseAddress }, emptyStorage)
        XCTAssertTrue(next.contains(.streamEnded(stream: 5, trailers: nil)))
    }

    func testHostBecomesAuthorityWhenHeadHasNone() throws {
        let pair = HTTP2Pair()
        _ = try pair.client.sendRequest(HTTPRequestHead(method: "POST", path: "/x", fields: ["Host": "h.test:8443"]), endStream: true)
        try pair.pump()
        let decoded = pair.serverEvents.compactMap { event -> [HTTPField]? in
            if case .requestHead(_, _, let d) = event { return d } else { return nil }
        }.first
        XCTAssertEqual(decoded, [HTTPField(name: ":method", value: "POST"), HTTPField(name: ":scheme", value: "https"),
                                 HTTPField(name: ":authority", value: "h.test:8443"), HTTPField(name: ":path", value: "/x")])
    }

    /// 100 concurrent streams, bodies from 0 B to 8 MiB both ways, compared by SHA-256.
    func testHundredConcurrentStreamsWithBodiesBothWays() throws {
        let sizes = [0, 1, 1000, 16_383, 16_384, 16_385, 65_535, 65_536, 300_000, 1_048_583]
        func requestSize(_ i: Int) -> Int { i == 99 ? 8 * 1024 * 1024 : sizes[i % 10] }
        func responseSize(_ i: Int) -> Int { i == 0 ? 8 * 1024 * 1024 : sizes[(i * 3 + 1) % 10] }
        let requestBodies = (0..<100).map { SecureRandom.bytes(requestSize($0)) }
        let responseBodies = (0..<100).map { SecureRandom.bytes(responseSize($0)) }

        let pair = HTTP2Pair()
        let clientFeeder = BodyFeeder(session: pair.client)
        let serverFeeder = BodyFeeder(session: pair.server)
        var indexOfStream: [HTTP2StreamID: Int] = [:]
        for i in 0..<100 {
            let body = requestBodies[i]
            let id = try pair.client.sendRequest(HTTPRequestHead(method: "POST", scheme: "https", authority: "a.test",
                                                                 path: "/upload/\(i)", fields: ["x-index": String(i)]),
                                                 endStream: body.isEmpty)
            indexOfStream[id] = i
            if !body.isEmpty { clientFeeder.add(stream: id, body: body) }
        }

        var serverHashes: [HTTP2StreamID: SHA256] = [:]
        var serverIndex: [HTTP2StreamID: Int] = [:]
        var requestDigests: [Int: [UInt8]] = [:]
        var clientHashes: [HTTP2StreamID: SHA256] = [:]
        var responseDigests: [Int: [UInt8]] = [:]
        var statuses: [Int: Int] = [:]

        try pair.pump(step: { try clientFeeder.refill(); try serverFeeder.refill() }, onClient: { events in
            for event in events {
                switch event {
                case .responseHead(let id, let head, _):
                    statuses[indexOfStream[id]!] = head.status.code
                    clientHashes[id] = SHA256()
                case .data(let id, let bytes):
                    clientHashes[id]!.update(bytes)
                    pair.client.consumed(stream: id, bytes: bytes.count)
                case .streamEnded(let id, _):
                    responseDigests[indexOfStream[id]!] = clientHashes[id]!.finalize()
                case .streamReset(let reset):
                    XCTFail("client saw \(reset)")
                default: break
                }
            }
        }, onServer: { events in
            for event in events {
                switch event {
                case .requestHead(let id, let head, _):
                    serverIndex[id] = Int(head.fields["x-index"]!)!
                    serverHashes[id] = SHA256()
                case .data(let id, let bytes):
                    serverHashes[id]!.update(bytes)
                    pair.server.consumed(stream: id, bytes: bytes.count)
                case .streamEnded(let id, _):
                    let i = serverIndex[id]!
                    requestDigests[i] = serverHashes[id]!.finalize()
                    let body = responseBodies[i]
                    try pair.server.sendResponse(stream: id, head: HTTPResponseHead(status: 200),
                                                 endStream: body.isEmpty)
                    if !body.isEmpty { serverFeeder.add(stream: id, body: body) }
                case .streamReset(let reset):
                    XCTFail("server saw \(reset)")
                default: break
                }
            }
        })

        XCTAssertEqual(requestDigests.count, 100)
        XCTAssertEqual(responseDigests.count, 100)
        for i in 0..<100 {
            XCTAssertEqual(requestDigests[i], SHA256.hash(requestBodies[i]), "request body \(i)")
            XCTAssertEqual(responseDigests[i], SHA256.hash(responseBodies[i]), "response body \(i)")
            XCTAssertEqual(statuses[i], 200)
        }
        XCTAssertEqual(pair.client.openStreams, [])
        XCTAssertEqual(pair.server.openStreams, [])
    }

    func testTrailersBothWays() throws {
        let pair = HTTP2Pair()
        let id = try pair.client.sendRequest(HTTPRequestHead(method: "POST", scheme: "https", authority: "a.test", path: "/t"),
                                             endStream: false)
        try pair.client.sendData(stream: id, bytes: Array("hello".utf8), endStream: false)
        try pair.client.sendTrailers(stream: id, trailers: ["Request-Digest": "abc"])
        try pair.pump(onServer: { events in
            for case .streamEnded(let stream, _) in events {
                try pair.server.sendResponse(stream: stream, head: HTTPResponseHead(status: 200), endStream: false)
                try pair.server.sendTrailers(stream: stream, trailers: ["grpc-status": "0", "x-b": "2"])
            }
        })
        XCTAssertTrue(pair.serverEvents.contains(.data(stream: id, bytes: Array("hello".utf8))))
        XCTAssertTrue(pair.serverEvents.contains(.streamEnded(stream: id, trailers: ["request-digest": "abc"])))
        XCTAssertTrue(pair.clientEvents.contains(.streamEnded(stream: id, trailers: ["grpc-status": "0", "x-b": "2"])))
        XCTAssertEqual(pair.clientEvents.resets, [])
    }

    func testSlowConsumerHoldsPeerAtStreamWindow() throws {
        let pair = HTTP2Pair()
        let window = pair.server.configuration.initialStreamWindow
        XCTAssertEqual(window, 1024 * 1024)
        let body = SecureRandom.bytes(4 * 1024 * 1024)
        let id = try pair.client.sendRequest(HTTPRequestHead(method: "PUT", scheme: "https", authority: "a.test", path: "/big"),
                                             endStream: false)
        try pair.client.sendData(stream: id, bytes: body, endStream: true)
        var received: [UInt8] = []
        let collect: ([HTTP2Event]) throws -> Void = { events in
            for case .data(_, let bytes) in events { received += bytes }
        }
        try pair.pump(onServer: collect)
        XCTAssertEqual(received.count, window, "delivery stops at exactly the stream window")
        XCTAssertEqual(pair.client.queuedBytes(stream: id), body.count - window)
        XCTAssertEqual(pair.client.sendWindow(stream: id), 0)

        // Less than half a window consumed: nghttp2 does not reopen yet.
        pair.server.consumed(stream: id, bytes: 100)
        try pair.pump(onServer: collect)
        XCTAssertEqual(received.count, window)

        // Consume everything as it arrives: the rest flows.
        pair.server.consumed(stream: id, bytes: received.count - 100)
        var consumedSoFar = received.count
        try pair.pump(onServer: { events in
            try collect(events)
            pair.server.consumed(stream: id, bytes: received.count - consumedSoFar)
            consumedSoFar = received.count
        })
        XCTAssertEqual(received.count, body.count)
        XCTAssertEqual(SHA256.hash(received), SHA256.hash(body))
        XCTAssertEqual(pair.client.queuedBytes(stream: 1), 0)
    }

    func testInterimContinueThenFinalResponse() throws {
        let pair = HTTP2Pair()
        let id = try pair.client.sendRequest(HTTPRequestHead(method: "POST", scheme: "https", authority: "a.test", path: "/c",
                                                             fields: ["expect": "100-continue"]), endStream: false)
        try pair.pump(onClient: { events in
            for case .interimResponse(let stream, _, _) in events {
                try pair.client.sendData(stream: stream, bytes: [1, 2, 3], endStream: true)
            }
        }, onServer: { events in
            for event in events {
                if case .requestHead(let stream, _, _) = event {
                    XCTAssertThrowsError(try pair.server.sendResponse(stream: stream, head: HTTPResponseHead(status: 100), endStream: true))
                    try pair.server.sendResponse(stream: stream, head: HTTPResponseHead(status: 100), endStream: false)
                }
                if case .streamEnded(let stream, _) = event {
                    try pair.server.sendResponse(stream: stream, head: HTTPResponseHead(status: 201), endStream: true)
                }
            }
        })
        let heads = pair.clientEvents.filter {
            switch $0 { case .interimResponse, .responseHead: return true; default: return false }
        }
        XCTAssertEqual(heads, [
            .interimResponse(stream: id, head: HTTPResponseHead(status: 100, reason: "", version: .http2),
                             decodedFields: [HTTPField(name: ":status", value: "100")]),
            .responseHead(stream: id, head: HTTPResponseHead(status: 201, reason: "", version: .http2),
                          decodedFields: [HTTPField(name: ":status", value: "201")]),
        ])
        XCTAssertTrue(pair.serverEvents.contains(.data(stream: id, bytes: [1, 2, 3])))
        XCTAssertTrue(pair.clientEvents.contains(.streamEnded(stream: id, trailers: nil)))
    }

    func testResetStreamReportedOnBothSides() throws {
        let pair = HTTP2Pair()
        let id = try pair.client.sendRequest(get("/r"), endStream: false)
        try pair.client.sendData(stream: id, bytes: [UInt8](repeating: 7, count: 1000), endStream: false)
        try pair.pump(onServer: { events in
            for case .requestHead(let stream, _, _) in events {
                try pair.server.resetStream(stream, code: .cancel)
            }
        })
        XCTAssertEqual(pair.clientEvents.resets, [HTTP2StreamReset(stream: id, code: .cancel, initiator: .peer, reason: nil)])
        XCTAssertEqual(pair.serverEvents.resets.map(\.initiator), [.local])
        XCTAssertEqual(pair.serverEvents.resets.map(\.code), [.cancel])
        XCTAssertThrowsError(try pair.client.sendData(stream: id, bytes: [1], endStream: true)) { error in
            XCTAssertEqual(error as? HTTP2SessionError, .unknownStream(id))
        }
        XCTAssertEqual(pair.client.openStreams, [])
    }

    func testGoAwayEndsNewStreamsButLetsOpenOnesFinish() throws {
        let pair = HTTP2Pair()
        let first = try pair.client.sendRequest(get("/1"), endStream: true)
        try pair.pump()
        try pair.server.goAway(code: .noError, debugData: Array("maintenance".utf8))
        try pair.pump()
        XCTAssertTrue(pair.clientEvents.contains(.goAwayReceived(lastStreamID: first, code: .noError,
                                                                 debugData: Array("maintenance".utf8))))
        // The stream the server already took still gets its response.
        try pair.server.sendResponse(stream: first, head: HTTPResponseHead(status: 204), endStream: true)
        // A new request after GOAWAY is refused locally.
        let late = try pair.client.sendRequest(get("/2"), endStream: true)
        try pair.pump()
        XCTAssertTrue(pair.clientEvents.contains(.streamEnded(stream: first, trailers: nil)))
        XCTAssertEqual(pair.clientEvents.resets.map(\.stream), [late])
        XCTAssertEqual(pair.clientEvents.resets.map(\.code), [.refusedStream])
        XCTAssertEqual(pair.serverEvents.filter { if case .requestHead = $0 { return true } else { return false } }.count, 1)
        XCTAssertTrue(pair.server.isFinished)
    }

    func testPingIsAcknowledgedWithItsValue() throws {
        let pair = HTTP2Pair()
        try pair.client.ping(0x0102_0304_0506_0708)
        try pair.pump()
        XCTAssertTrue(pair.clientEvents.contains(.pingAcknowledged(0x0102_0304_0506_0708)))
    }

    func testUsageErrorsAreValues() throws {
        let pair = HTTP2Pair()
        XCTAssertThrowsError(try pair.server.sendRequest(get("/"), endStream: true)) {
            XCTAssertEqual($0 as? HTTP2SessionError, .wrongRole)
        }
        XCTAssertThrowsError(try pair.server.sendResponse(stream: 1, head: HTTPResponseHead(status: 200), endStream: true)) {
            XCTAssertEqual($0 as? HTTP2SessionError, .unknownStream(1))
        }
        let id = try pair.client.sendRequest(get("/"), endStream: true)
        XCTAssertThrowsError(try pair.client.sendData(stream: id, bytes: [1], endStream: false)) {
            XCTAssertEqual($0 as? HTTP2SessionError, .streamNotWritable(id))
        }
    }
}

/// Feeds bodies into a session in 64 KiB chunks, keeping at most 256 KiB
/// queued per stream (the backpressure a real proxy leg applies).
private final class BodyFeeder {
    private let session: HTTP2Session
    private var pending: [HTTP2StreamID: (body: [UInt8], offset: Int)] = [:]

    init(session: HTTP2Session) { self.session = session }

    func add(stream: HTTP2StreamID, body: [UInt8]) { pending[stream] = (body, 0) }

    func refill() throws {
        for (stream, entry) in pending {
            var offset = entry.offset
            while offset < entry.body.count && session.queuedBytes(stream: stream) < 256 * 1024 {
                let end = min(offset + 64 * 1024, entry.body.count)
                try session.sendData(stream: stream, bytes: Array(entry.body[offset..<end]),
                                     endStream: end == entry.body.count)
                offset = end
            }
            pending[stream] = offset == entry.body.count ? nil : (entry.body, offset)
        }
    }
}

/// How received DATA is gathered into `.data` events.
final class HTTP2SessionDataBufferTests: XCTestCase {
    /// A run of DATA frames of one stream in one read becomes one event whose
    /// array was sized once for the rest of the read, not doubled frame by
    /// frame (each doubling a copy of the run so far).
    func testARunOfDataFramesIsGatheredWithoutRegrowing() {
        let server = HTTP2Session(role: .server)
        let opening = RawFrame.preface + RawFrame.settings() + RawFrame.request(stream: 1, endStream: false)
        XCTAssertTrue(server.receive(opening).contains { if case .requestHead = $0 { true } else { false } })
        var body: [UInt8] = []
        var frames: [UInt8] = []
        for index in 0..<7 {
            let chunk = [UInt8](repeating: UInt8(index), count: 8 * 1024)
            body += chunk
            frames += RawFrame.data(1, chunk)
        }
        let last = [UInt8](repeating: 0xAB, count: 1000)
        body += last
        frames += RawFrame.data(1, last, endStream: true)
        let events = server.receive(frames)
        let chunks = events.compactMap { event -> [UInt8]? in
            if case .data(1, let bytes) = event { bytes } else { nil }
        }
        XCTAssertEqual(chunks.count, 1, "\(events)")
        XCTAssertEqual(chunks.first, body)
        XCTAssertLessThan((chunks.first?.capacity ?? 0) - body.count, 1024, "the run's array was regrown")
        XCTAssertTrue(events.contains(.streamEnded(stream: 1, trailers: nil)))
    }

    /// A single frame's data is copied at its size.
    func testASingleFrameKeepsNoSpareRoom() {
        let server = HTTP2Session(role: .server)
        _ = server.receive(RawFrame.preface + RawFrame.settings() + RawFrame.request(stream: 1, endStream: false))
        let events = server.receive(RawFrame.data(1, Array("hello".utf8), endStream: true) + RawFrame.ping(1))
        guard case .data(1, let bytes)? = events.first else { return XCTFail("\(events)") }
        XCTAssertEqual(bytes, Array("hello".utf8))
        XCTAssertLessThan(bytes.capacity, 64)
    }

    /// A client whose request (stream 1) went out and whose whole `body` is
    /// queued with END_STREAM, nothing of it taken yet.
    private func clientWithQueuedBody(_ body: [UInt8]) throws -> (HTTP2Pair, [UInt8]) {
        let pair = HTTP2Pair()
        try pair.pump()
        let id = try pair.client.sendRequest(HTTPRequestHead(method: "POST", scheme: "https", authority: "a.test", path: "/"),
                                             endStream: false)
        XCTAssertEqual(id, 1)
        _ = pair.client.takeOutbound()
        try pair.client.sendData(stream: id, bytes: body, endStream: true)
        return (pair, body)
    }

    /// A body taken as many DATA frames in one `takeOutbound` is gathered into
    /// one array sized for it, not doubled frame by frame.
    func testOutboundFramesAreGatheredWithoutRegrowing() throws {
        let (pair, body) = try clientWithQueuedBody([UInt8](repeating: 0x5A, count: 60_000))
        let out = pair.client.takeOutbound(maxBytes: 128 * 1024)
        XCTAssertGreaterThan(out.count, body.count)
        XCTAssertLessThan(out.capacity - out.count, 2048, "the frames' array was regrown")
        let payload = RawFrame.parse(out).filter { $0.type == RawFrame.Kind.data.rawValue }.flatMap(\.payload)
        XCTAssertEqual(payload, body)
    }

    /// DATA built in place still stops at `maxBytes` (after the frame that
    /// reaches it); the next calls carry on, and the peer gets the body whole
    /// with END_STREAM on the last frame only.
    func testOutboundDataStopsAtMaxBytesAndCarriesOn() throws {
        let (pair, body) = try clientWithQueuedBody((0..<60_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        var frames: [RawFrame.Parsed] = []
        for _ in 0..<10 {
            let out = pair.client.takeOutbound(maxBytes: 20_000)
            if out.isEmpty { break }
            XCTAssertLessThanOrEqual(out.count, 20_000 + 16 * 1024 + 9)
            frames += RawFrame.parse(out)
        }
        let data = frames.filter { $0.type == RawFrame.Kind.data.rawValue }
        XCTAssertGreaterThan(data.count, 3)
        XCTAssertEqual(data.flatMap(\.payload), body)
        XCTAssertEqual(data.map { $0.flags & RawFrame.endStream != 0 }, Array(repeating: false, count: data.count - 1) + [true])
        XCTAssertEqual(pair.client.queuedBytes(stream: 1), 0)
    }

    /// Ending a stream with no bytes left sends an empty DATA frame with
    /// END_STREAM, built in place like any other.
    func testAnEmptyFinalDataFrameEndsTheStream() throws {
        let pair = HTTP2Pair()
        try pair.pump()
        let id = try pair.client.sendRequest(HTTPRequestHead(method: "POST", scheme: "https", authority: "a.test", path: "/"),
                                             endStream: false)
        try pair.client.sendData(stream: id, bytes: Array("body".utf8), endStream: false)
        try pair.pump()
        try pair.client.sendData(stream: id, bytes: [], endStream: true)
        try pair.pump()
        let bodies = pair.serverEvents.compactMap { event -> [UInt8]? in
            if case .data(id, let bytes) = event { bytes } else { nil }
        }
        XCTAssertEqual(bodies.flatMap { $0 }, Array("body".utf8))
        XCTAssertTrue(pair.serverEvents.contains(.streamEnded(stream: id, trailers: nil)))
    }
}
