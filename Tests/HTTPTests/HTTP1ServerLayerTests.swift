import XCTest
import HTTP

/// Event → step scripts for `HTTP1ServerLayer`, with no sockets: bytes go
/// in, and each step the layer returns is written down as a short line.
final class HTTP1ServerLayerTests: XCTestCase {
    // MARK: Sequencing and keep-alive

    func testKeepAliveCarriesTwoRequestsOneAfterTheOther() throws {
        var layer = HTTP1ServerLayer()
        layer.receive(bytes("GET /a HTTP/1.1\r\nHost: h\r\n\r\n"))
        XCTAssertEqual(steps(&layer), ["head GET /a #1", "end", "pause"])
        let sent = try respond(&layer, body: "A")
        XCTAssertEqual(sent.bytes, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nA")
        XCTAssertEqual(sent.completion, .nextRequest)
        XCTAssertNil(layer.exchange)
        XCTAssertEqual(steps(&layer), ["resume"])

        layer.receive(bytes("GET /b HTTP/1.1\r\nHost: h\r\n\r\n"))
        XCTAssertEqual(steps(&layer), ["head GET /b #2", "end", "pause"])
        XCTAssertEqual(try respond(&layer, body: "B").completion, .nextRequest)
        XCTAssertEqual(layer.phase, .serving)
        XCTAssertEqual(steps(&layer), ["resume"])
    }

    /// `awaitsRequest` is true only where `next` can do nothing but resume
    /// reading: between exchanges with nothing received left over.
    func testAwaitsRequestOnlyBetweenExchangesWithNothingBuffered() throws {
        var layer = HTTP1ServerLayer()
        XCTAssertTrue(layer.awaitsRequest)
        layer.receive(bytes("GET /a HTTP/1.1\r\nHost: h\r\n\r\n"))
        XCTAssertFalse(layer.awaitsRequest, "a request waits to be parsed")
        XCTAssertEqual(steps(&layer), ["head GET /a #1", "end", "pause"])
        XCTAssertFalse(layer.awaitsRequest, "an exchange is in progress")
        XCTAssertEqual(try respond(&layer, body: "A").completion, .nextRequest)
        XCTAssertTrue(layer.awaitsRequest)
        XCTAssertEqual(steps(&layer), ["resume"])

        // A pipelined request, or part of one, is waiting: the driver must take a turn.
        layer.receive(bytes("GET /b HTTP/1.1\r\nHost: h\r\n\r\nGET"))
        XCTAssertEqual(steps(&layer), ["head GET /b #2", "end", "pause"])
        XCTAssertEqual(try respond(&layer, body: "B").completion, .nextRequest)
        XCTAssertFalse(layer.awaitsRequest)
        XCTAssertEqual(steps(&layer), ["resume"])
        XCTAssertFalse(layer.awaitsRequest, "a request head has begun")

        // Once the peer ended, between exchanges is the end of the connection.
        var ended = HTTP1ServerLayer()
        _ = ended.readEnded()
        XCTAssertFalse(ended.awaitsRequest)
    }

    func testPipelinedRequestWaitsUntilTheFirstResponseEnds() throws {
        var layer = HTTP1ServerLayer()
        layer.receive(bytes("GET /1 HTTP/1.1\r\nHost: h\r\n\r\nGET /2 HTTP/1.1\r\nHost: h\r\n\r\n"))
        XCTAssertEqual(steps(&layer), ["head GET /1 #1", "end", "pause"])
        // The response head alone does not let the next request out.
        _ = try layer.sendResponseHead(HTTPResponseHead(status: 200), framing: .contentLength(2),
                                       answering: request("/1"), continueOwed: false)
        XCTAssertEqual(steps(&layer), ["pause"])
        _ = try layer.sendBody(bytes("ok"))
        XCTAssertEqual(steps(&layer), ["pause"])
        XCTAssertEqual(try layer.sendEnd(trailers: nil).completion, .nextRequest)
        XCTAssertEqual(steps(&layer), ["head GET /2 #2", "end", "pause"])
    }

    func testResponseBeforeTheRequestBodyDiscardsTheRestThenServesTheNext() throws {
        var layer = HTTP1ServerLayer()
        layer.receive(bytes("POST /u HTTP/1.1\r\nHost: h\r\nContent-Length: 6\r\n\r\nabc"))
        XCTAssertEqual(steps(&layer), ["head POST /u #1", "body abc", "resume"])
        XCTAssertEqual(try respond(&layer, body: "no").completion, .awaitingRequestEnd)
        layer.receive(bytes("defGET /next HTTP/1.1\r\nHost: h\r\n\r\n"))
        // Nobody reads the rest of the body: discarded; its end still comes, then the next request
        // (whose end, with no body before it, comes even to a consumer that waits).
        XCTAssertEqual(steps(&layer, wants: false), ["end", "head GET /next #2", "end", "pause"])
    }

    func testConsumerThatDoesNotWantTheBodyPausesReading() {
        var layer = HTTP1ServerLayer()
        layer.receive(bytes("POST /u HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\nab"))
        XCTAssertEqual(steps(&layer, wants: false), ["head POST /u #1", "pause"])
        XCTAssertEqual(steps(&layer), ["body ab", "resume"])
        layer.receive(bytes("cd"))
        // The end, once its bytes are parsed, comes even to a consumer that waits.
        XCTAssertEqual(steps(&layer, wants: false), ["pause"])
        XCTAssertEqual(steps(&layer), ["body cd", "end", "pause"])
    }

    // MARK: Closing

    func testConnectionCloseRequestClosesAfterTheResponseAndLingers() throws {
        var layer = HTTP1ServerLayer()
        layer.receive(bytes("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\nGET /ignored HTTP/1.1\r\n\r\n"))
        XCTAssertEqual(steps(&layer), ["head GET / #1", "end", "pause"])
        let sent = try respond(&layer, body: "x")
        XCTAssertEqual(sent.bytes, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx")
        XCTAssertEqual(sent.completion, .finish(.shutdownAndLinger))
        XCTAssertEqual(layer.phase, .lingering)
        // What the client still sends is discarded; its end of input closes.
        layer.receive(bytes("GET /more HTTP/1.1\r\n\r\n"))
        XCTAssertEqual(steps(&layer), ["wait"])
        XCTAssertEqual(layer.readEnded(), .close)
        XCTAssertEqual(layer.phase, .closed)
    }

    func testLingerTimerClosesALingeringConnectionOnly() throws {
        var layer = HTTP1ServerLayer()
        XCTAssertEqual(layer.lingerTimerFired(), .none)
        XCTAssertEqual(layer.stopAfterExchange(), .shutdownAndLinger)
        XCTAssertEqual(layer.lingerTimerFired(), .close)
        XCTAssertEqual(layer.lingerTimerFired(), .none)
    }

    func testHTTP10WithoutKeepAliveClosesAndSaysSo() throws {
        var layer = HTTP1ServerLayer()
        layer.receive(bytes("GET / HTTP/1.0\r\n\r\n"))
        XCTAssertEqual(steps(&layer), ["head GET / #1", "end", "pause"])
        let sent = try respond(&layer, body: "old", path: "/", version: .http1_0)
        XCTAssertEqual(sent.bytes, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 3\r\n\r\nold")
        XCTAssertEqual(sent.completion, .finish(.shutdownAndLinger))
    }

    func testHTTP10KeepAliveStaysOpen() throws {
        var layer = HTTP1ServerLayer()
        layer.receive(bytes("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"))
        XCTAssertEqual(steps(&layer), ["head GET / #1", "end", "pause"])
        XCTAssertEqual(try respond(&layer, body: "k", path: "/", version: .http1_0).completion, .nextRequest)
    }

    func testStopAfterExchangeClosesOnceTheExchangeIsOver() throws {
        var layer = HTTP1ServerLayer()
        layer.receive(bytes("GET / HTTP/1.1\r\nHost: h\r\n\r\n"))
        XCTAssertEqual(steps(&layer), ["head GET / #1", "end", "pause"])
        XCTAssertEqual(layer.stopAfterExchange(), .none)
        let sent = try respond(&layer, body: "")
        XCTAssertEqual(sent.bytes, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
        XCTAssertEqual(sent.completion, .finish(.shutdownAndLinger))
    }

    func testPeerEndBetweenRequestsCloses() {
        var layer = HTTP1ServerLayer()
        XCTAssertEqual(steps(&layer), ["resume"])
        XCTAssertEqual(layer.readEnded(), .none)
        XCTAssertEqual(steps(&layer), ["connection close", "wait"])
        XCTAssertEqual(layer.phase, .closed)
    }

    func testPeerEndAfterTheRequestClosesWithoutLingering() throws {
        var layer = HTTP1ServerLayer()
        layer.receive(bytes("GET / HTTP/1.1\r\nHost: h\r\n\r\n"))
        XCTAssertEqual(steps(&layer), ["head GET / #1", "end", "pause"])
        XCTAssertEqual(layer.readEnded(), .none)
        let sent = try respond(&layer, body: "z")
        XCTAssertTrue(sent.bytes.contains("Connection: close\r\n"))
        XCTAssertEqual(sent.completion, .finish(.shutdownAndClose))
    }

    func testPeerEndMidBodyFailsTheRequestAndCloses() {
        var layer = HTTP1ServerLayer()
        layer.receive(bytes("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nabc"))
        XCTAssertEqual(steps(&layer), ["head POST / #1", "body abc", "resume"])
        XCTAssertEqual(layer.readEnded(), .none)
        guard case .refused(let refusal) = layer.next(consumerWants: true) else { return XCTFail("no refusal") }
        XCTAssertEqual(refusal.error, .truncated(.body))
        XCTAssertEqual(refusal.exchangeFailure, .peerClosed(during: .request))
        XCTAssertNil(refusal.answer)
        XCTAssertFalse(refusal.reported)
        XCTAssertEqual(refusal.then, .close)
        XCTAssertNil(layer.exchange)
    }

    func testChannelClosedNamesTheUnfinishedMessage() throws {
        var layer = HTTP1ServerLayer()
        layer.receive(bytes("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n\r\n"))
        XCTAssertEqual(steps(&layer), ["head POST / #1", "resume"])
        XCTAssertEqual(layer.channelClosed(), .request)

        var answered = HTTP1ServerLayer()
        answered.receive(bytes("GET / HTTP/1.1\r\nHost: h\r\n\r\n"))
        XCTAssertEqual(steps(&answered), ["head GET / #1", "end", "pause"])
        XCTAssertEqual(answered.channelClosed(), .response)
        XCTAssertNil(answered.channelClosed())
    }

    // MARK: Interim responses

    func testContinueAndEarlyHintsPrecedeTheFinalResponse() throws {
        var layer = HTTP1ServerLayer()
        layer.receive(bytes("PUT /f HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n"))
        guard case .requestHead(let parsed, _) = layer.next(consumerWants: true) else { return XCTFail("no head") }
        XCTAssertTrue(parsed.expectsContinue)
        let put = parsed.head
        let continued = try layer.sendResponseHead(HTTPResponseHead(status: 100), framing: nil, answering: put,
                                                   continueOwed: true)
        XCTAssertEqual(text(continued.serialized.bytes), "HTTP/1.1 100 Continue\r\n\r\n")
        XCTAssertEqual(layer.exchange?.response, .awaitingHead)
        var hints = HTTPResponseHead(status: 103)
        hints.fields.append("Link", "</s.css>; rel=preload")
        let early = try layer.sendResponseHead(hints, framing: nil, answering: put, continueOwed: false)
        XCTAssertEqual(text(early.serialized.bytes), "HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n")
        layer.receive(bytes("ok"))
        XCTAssertEqual(steps(&layer), ["body ok", "end", "pause"])
        let final = try layer.sendResponseHead(HTTPResponseHead(status: 201), framing: .contentLength(0), answering: put,
                                               continueOwed: false)
        XCTAssertFalse(text(final.serialized.bytes).contains("Connection"))
        XCTAssertEqual(try layer.sendEnd(trailers: nil).completion, .nextRequest)
        XCTAssertThrowsError(try layer.sendEnd(trailers: nil)) { XCTAssertEqual($0 as? HTTP1LayerError, .exchangeOver) }
    }

    func testFinalAnswerBeforeTheContinueClosesTheConnection() throws {
        var layer = HTTP1ServerLayer()
        layer.receive(bytes("PUT /f HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"))
        XCTAssertEqual(steps(&layer, wants: false), ["head PUT /f #1", "pause"])
        let refused = try layer.sendResponseHead(HTTPResponseHead(status: 417), framing: .contentLength(0),
                                                 answering: request("/f", method: "PUT"), continueOwed: true)
        XCTAssertEqual(text(refused.serialized.bytes),
                       "HTTP/1.1 417 Expectation Failed\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
        XCTAssertEqual(try layer.sendEnd(trailers: nil).completion, .cancelRequest(then: .shutdownAndLinger))
        XCTAssertThrowsError(try layer.sendResponseHead(HTTPResponseHead(status: 200), framing: nil,
                                                        answering: request("/f"), continueOwed: false)) {
            XCTAssertEqual($0 as? HTTP1LayerError, .exchangeOver)
        }
    }

    func testSecondFinalHeadIsRefused() throws {
        var layer = HTTP1ServerLayer()
        layer.receive(bytes("GET / HTTP/1.1\r\nHost: h\r\n\r\n"))
        _ = steps(&layer)
        _ = try layer.sendResponseHead(HTTPResponseHead(status: 200), framing: .chunked, answering: request("/"),
                                       continueOwed: false)
        XCTAssertThrowsError(try layer.sendResponseHead(HTTPResponseHead(status: 200), framing: nil,
                                                        answering: request("/"), continueOwed: false)) {
            XCTAssertEqual($0 as? HTTP1LayerError, .finalHeadAlreadySent)
        }
        var trailers = HTTPFields()
        trailers.append("X-Sum", "1")
        let end = try layer.sendEnd(trailers: trailers)
        XCTAssertEqual(text(end.bytes), "0\r\nX-Sum: 1\r\n\r\n")
        XCTAssertEqual(end.trailers, trailers)
    }

    func testResponseFromHTTP2GoesOutChunkedWhenTrailersMayFollow() throws {
        var layer = HTTP1ServerLayer()
        layer.receive(bytes("GET / HTTP/1.1\r\nHost: h\r\nTE: trailers\r\n\r\n"))
        guard case .requestHead(let parsed, _) = layer.next(consumerWants: true) else { return XCTFail("no head") }
        var head = HTTPResponseHead(status: 200, version: .http2)
        head.fields.append("content-length", "2")
        let sent = try layer.sendResponseHead(head, framing: nil, answering: parsed.head, continueOwed: false)
        XCTAssertEqual(text(sent.serialized.bytes), "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        XCTAssertEqual(sent.head.version, .http1_1)
        XCTAssertEqual(text(try layer.sendBody(bytes("hi"))), "2\r\nhi\r\n")
        var trailers = HTTPFields()
        trailers.append("grpc-status", "0")
        XCTAssertEqual(text(try layer.sendEnd(trailers: trailers).bytes), "0\r\ngrpc-status: 0\r\n\r\n")
    }

    func testTrailersOfAResponseThatIsNotChunkedAreDropped() throws {
        var layer = HTTP1ServerLayer()
        layer.receive(bytes("GET / HTTP/1.1\r\nHost: h\r\n\r\n"))
        _ = steps(&layer)
        _ = try layer.sendResponseHead(HTTPResponseHead(status: 200), framing: .contentLength(0), answering: request("/"),
                                       continueOwed: false)
        var trailers = HTTPFields()
        trailers.append("X-Sum", "1")
        let end = try layer.sendEnd(trailers: trailers)
        XCTAssertEqual(end.bytes, [])
        XCTAssertNil(end.trailers)
    }

    // MARK: Tunnels

    func testUpgradeDetachesWithTheBytesAlreadyReceived() throws {
        var layer = HTTP1ServerLayer()
        layer.receive(bytes("GET /ws HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\nHELLO"))
        XCTAssertEqual(steps(&layer), ["head GET /ws #1", "end", "pause"])
        var switching = HTTPResponseHead(status: 101)
        switching.fields.append("Connection", "Upgrade")
        switching.fields.append("Upgrade", "websocket")
        let sent = try layer.sendResponseHead(switching, framing: nil, answering: request("/ws"), continueOwed: false)
        XCTAssertTrue(sent.opensTunnel)
        XCTAssertEqual(layer.exchange?.response, .tunnel)
        XCTAssertEqual(text(try layer.detachForTunnel()), "HELLO")
        XCTAssertEqual(layer.phase, .detached)
        XCTAssertNil(layer.exchange)
        XCTAssertEqual(steps(&layer), ["wait"])
    }

    func testConnectAnsweredAtOnceDetachesEvenBeforeItsEndWasPulled() throws {
        var layer = HTTP1ServerLayer()
        layer.receive(bytes("CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\n\r\n\u{16}\u{03}\u{01}"))
        guard case .requestHead(let parsed, _) = layer.next(consumerWants: true) else { return XCTFail("no head") }
        let sent = try layer.sendResponseHead(HTTPResponseHead(status: 200), framing: nil, answering: parsed.head,
                                              continueOwed: false)
        XCTAssertEqual(text(sent.serialized.bytes), "HTTP/1.1 200 OK\r\n\r\n")
        XCTAssertEqual(try layer.detachForTunnel(), [0x16, 0x03, 0x01])
    }

    func testRefusedUpgradeGoesOnWithTheNextRequest() throws {
        var layer = HTTP1ServerLayer()
        layer.receive(bytes("GET /ws HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"
                            + "GET /after HTTP/1.1\r\nHost: h\r\n\r\n"))
        XCTAssertEqual(steps(&layer), ["head GET /ws #1", "end", "pause"])
        XCTAssertThrowsError(try layer.detachForTunnel()) { XCTAssertEqual($0 as? HTTP1LayerError, .noTunnelResponse) }
        XCTAssertEqual(try respond(&layer, body: "no", path: "/ws").completion, .nextRequest)
        XCTAssertEqual(steps(&layer), ["head GET /after #2", "end", "pause"])
    }

    // MARK: Malformed requests

    func testSmugglingShapesAreAnsweredWith400AndClose() {
        let cases: [(String, HTTP1ParseError)] = [
            ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
             .contentLengthWithTransferEncoding),
            ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
             .conflictingContentLengths(["3", "4"])),
            ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", .duplicateChunked),
        ]
        for (wire, error) in cases {
            var layer = HTTP1ServerLayer()
            layer.receive(bytes(wire))
            guard case .refused(let refusal) = layer.next(consumerWants: true) else {
                XCTFail("not refused: \(wire)")
                continue
            }
            XCTAssertEqual(refusal.error, error)
            XCTAssertNil(refusal.exchangeFailure, "no exchange had started")
            XCTAssertTrue(refusal.reported)
            XCTAssertEqual(refusal.then, .shutdownAndLinger)
            let body = "400 \(error.reason)\n"
            XCTAssertEqual(text(refusal.answer?.bytes ?? []),
                           "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n"
                           + "Content-Length: \(body.utf8.count)\r\n\r\n" + body)
            XCTAssertEqual(refusal.answer?.head.fields["connection"], "close")
            XCTAssertEqual(layer.phase, .lingering)
            XCTAssertEqual(steps(&layer), ["wait"])
        }
    }

    func testMalformedBodyAfterTheResponseBeganResetsTheConnection() throws {
        var layer = HTTP1ServerLayer()
        layer.receive(bytes("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"))
        XCTAssertEqual(steps(&layer), ["head POST / #1", "resume"])
        _ = try layer.sendResponseHead(HTTPResponseHead(status: 200), framing: .chunked, answering: request("/"),
                                       continueOwed: false)
        layer.receive(bytes("zz\r\n"))
        guard case .refused(let refusal) = layer.next(consumerWants: true) else { return XCTFail("no refusal") }
        XCTAssertEqual(refusal.exchangeFailure, .malformed(refusal.error))
        XCTAssertNil(refusal.answer)
        XCTAssertTrue(refusal.reported)
        XCTAssertEqual(refusal.then, .abort)
        XCTAssertEqual(layer.phase, .closed)
    }

    func testHeadTimeoutIsAnswered408() {
        var layer = HTTP1ServerLayer()
        layer.receive(bytes("GET / HT"))
        XCTAssertEqual(steps(&layer), ["resume"])
        let refusal = layer.refuse(.headTimeout(seconds: 5))
        XCTAssertTrue(text(refusal.answer?.bytes ?? []).hasPrefix("HTTP/1.1 408 Request Timeout\r\n"))
        XCTAssertEqual(refusal.then, .shutdownAndLinger)
    }

    // MARK: Helpers

    /// Pulls steps until the layer waits or asks for reading to change, as one line each.
    private func steps(_ layer: inout HTTP1ServerLayer, wants: Bool = true) -> [String] {
        var lines: [String] = []
        while lines.count < 50 {
            let step = layer.next(consumerWants: wants)
            switch step {
            case .idle(let reading): lines.append(line(reading))
            case .requestHead(let parsed, let id): lines.append("head \(parsed.head.method) \(parsed.head.target) #\(id)")
            case .requestBody(let body): lines.append("body \(text(body))")
            case .requestEnd: lines.append("end")
            case .connection(let command): lines.append("connection \(command)")
            case .refused(let refusal): lines.append("refused \(refusal.error)")
            }
            switch step {
            case .idle, .refused: return lines
            default: continue
            }
        }
        return lines
    }

    /// Answers the exchange in progress with a 200 and `body`; returns the bytes written and what follows.
    private func respond(_ layer: inout HTTP1ServerLayer, body: String, path: String = "/",
                         version: HTTPVersion = .http1_1) throws -> (bytes: String, completion: HTTP1ServerLayer.Completion) {
        let head = try layer.sendResponseHead(HTTPResponseHead(status: 200), framing: .contentLength(body.utf8.count),
                                              answering: request(path, version: version), continueOwed: false)
        let framed = try layer.sendBody(bytes(body))
        let end = try layer.sendEnd(trailers: nil)
        return (text(head.serialized.bytes + framed + end.bytes), end.completion)
    }

    private func request(_ path: String, method: HTTPMethod = "GET", version: HTTPVersion = .http1_1) -> HTTPRequestHead {
        HTTPRequestHead(method: method, scheme: nil, authority: "h", path: path, version: version)
    }
}
