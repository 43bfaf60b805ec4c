import XCTest
import HTTP

/// Event → step scripts for `HTTP1ClientLayer`, with no sockets.
final class HTTP1ClientLayerTests: XCTestCase {
    func testKeepAliveExchangeLeavesTheConnectionReusable() throws {
        var layer = HTTP1ClientLayer()
        let sent = try layer.sendRequestHead(get("/a"), framing: nil, webSocketKey: "unused")
        XCTAssertEqual(text(sent.serialized.bytes), "GET /a HTTP/1.1\r\nHost: h\r\n\r\n")
        XCTAssertEqual(sent.streamID, 1)
        XCTAssertTrue(sent.requestEnded)
        XCTAssertFalse(layer.canOpenExchange)
        XCTAssertThrowsError(try layer.sendRequestHead(get("/b"), framing: nil, webSocketKey: "")) {
            XCTAssertEqual($0 as? HTTP1LayerError, .connectionBusy)
        }
        XCTAssertEqual(steps(&layer), ["resume"])
        layer.receive(bytes("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
        XCTAssertEqual(steps(&layer), ["response 200", "body ok", "end", "completed reusable", "resume"])
        XCTAssertTrue(layer.canOpenExchange)
        XCTAssertEqual(try layer.sendRequestHead(get("/b"), framing: nil, webSocketKey: "").streamID, 2)
    }

    func testResponseBeforeTheRequestEndsWaitsForTheRequest() throws {
        var layer = HTTP1ClientLayer()
        var post = get("/upload")
        post.method = "POST"
        let sent = try layer.sendRequestHead(post, framing: .chunked, webSocketKey: "")
        XCTAssertFalse(sent.requestEnded)
        XCTAssertEqual(text(try layer.sendBody(bytes("abc"))), "3\r\nabc\r\n")
        layer.receive(bytes("HTTP/1.1 413 Content Too Large\r\nContent-Length: 0\r\n\r\n"))
        XCTAssertEqual(steps(&layer), ["response 413", "end", "pause"])
        XCTAssertNotNil(layer.exchange)
        let end = try layer.sendEnd(trailers: nil)
        XCTAssertEqual(text(end.bytes), "0\r\n\r\n")
        XCTAssertEqual(end.completion, .reusable)
        XCTAssertNil(layer.exchange)
    }

    func testEOFDelimitedBodyEndsAtTheServersEndAndCloses() throws {
        var layer = HTTP1ClientLayer()
        _ = try layer.sendRequestHead(get("/"), framing: nil, webSocketKey: "")
        layer.receive(bytes("HTTP/1.1 200 OK\r\n\r\nabc"))
        XCTAssertEqual(steps(&layer), ["response 200", "body abc", "resume"])
        layer.receive(bytes("def"))
        XCTAssertEqual(steps(&layer), ["body def", "resume"])
        layer.readEnded()
        XCTAssertEqual(steps(&layer), ["end", "completed close", "wait"])
        XCTAssertEqual(layer.phase, .closed)
    }

    func testResponseToHEADHasNoBodyWhateverItsLength() throws {
        var layer = HTTP1ClientLayer()
        var head = get("/")
        head.method = "HEAD"
        _ = try layer.sendRequestHead(head, framing: nil, webSocketKey: "")
        layer.receive(bytes("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nHTTP/1.1 500 Unsolicited\r\n\r\n"))
        // A response to HEAD has no body: the bytes after its head are an unsolicited response.
        XCTAssertEqual(steps(&layer), ["response 200", "end", "completed reusable", "close"])
        XCTAssertEqual(layer.failure, .unsolicitedResponse)
    }

    func testInterimResponsesComeBeforeTheFinalOne() throws {
        var layer = HTTP1ClientLayer()
        _ = try layer.sendRequestHead(get("/"), framing: nil, webSocketKey: "")
        layer.receive(bytes("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
                            + "HTTP/1.1 204 No Content\r\n\r\n"))
        XCTAssertEqual(steps(&layer), ["interim 100", "interim 103", "response 204", "end", "completed reusable", "resume"])
    }

    func testConsumerThatDoesNotWantTheResponsePausesReading() throws {
        var layer = HTTP1ClientLayer()
        _ = try layer.sendRequestHead(get("/"), framing: nil, webSocketKey: "")
        layer.receive(bytes("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
        XCTAssertEqual(steps(&layer, wants: false), ["pause"])
        XCTAssertEqual(steps(&layer), ["response 200", "body ok", "end", "completed reusable", "resume"])
    }

    func testConnectionCloseAndHTTP10MakeTheExchangeTheLast() throws {
        var closing = HTTP1ClientLayer()
        var head = get("/")
        head.fields.append("Connection", "close")
        _ = try closing.sendRequestHead(head, framing: nil, webSocketKey: "")
        XCTAssertEqual(closing.phase, .lastExchange)
        closing.receive(bytes("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
        XCTAssertEqual(steps(&closing), ["response 200", "end", "completed close", "wait"])

        var old = HTTP1ClientLayer()
        var request = get("/")
        request.version = .http1_0
        _ = try old.sendRequestHead(request, framing: nil, webSocketKey: "")
        XCTAssertEqual(old.phase, .lastExchange)

        var told = HTTP1ClientLayer()
        XCTAssertTrue(told.stopAfterExchange())
        XCTAssertThrowsError(try told.sendRequestHead(get("/"), framing: nil, webSocketKey: "")) {
            XCTAssertEqual($0 as? HTTP1LayerError, .connectionClosing)
        }
    }

    func testServerClosingBeforeAnyResponseByteOnAReusedConnectionIsRetrySafe() throws {
        var layer = HTTP1ClientLayer()
        _ = try layer.sendRequestHead(get("/1"), framing: nil, webSocketKey: "")
        layer.receive(bytes("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
        _ = steps(&layer)
        _ = try layer.sendRequestHead(get("/2"), framing: nil, webSocketKey: "")
        layer.readEnded()
        XCTAssertEqual(steps(&layer), ["close peerClosed responseOnReusedConnection"])

        var fresh = HTTP1ClientLayer()
        _ = try fresh.sendRequestHead(get("/1"), framing: nil, webSocketKey: "")
        XCTAssertEqual(fresh.channelClosed(), .response)
    }

    func testServerClosingMidBodyFailsTheResponse() throws {
        var layer = HTTP1ClientLayer()
        _ = try layer.sendRequestHead(get("/"), framing: nil, webSocketKey: "")
        layer.receive(bytes("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab"))
        XCTAssertEqual(steps(&layer), ["response 200", "body ab", "resume"])
        layer.readEnded()
        XCTAssertEqual(layer.next(consumerWants: true), .close(failing: .peerClosed(during: .response)))
        XCTAssertNil(layer.failure)
    }

    func testMalformedResponseFailsTheExchangeAndTheConnection() throws {
        var layer = HTTP1ClientLayer()
        _ = try layer.sendRequestHead(get("/"), framing: nil, webSocketKey: "")
        layer.receive(bytes("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"))
        XCTAssertEqual(steps(&layer), ["close malformed 400"])
        XCTAssertEqual(layer.failure, .conflictingContentLengths(["1", "2"]))
        XCTAssertNil(layer.exchange)
    }

    func testUnsolicitedBytesBetweenExchangesFailTheConnection() {
        var layer = HTTP1ClientLayer()
        layer.receive(bytes("HTTP/1.1 200 OK\r\n\r\n"))
        XCTAssertEqual(layer.next(consumerWants: true), .close(failing: nil))
        XCTAssertEqual(layer.failure, .unsolicitedResponse)
        XCTAssertEqual(layer.phase, .closed)
    }

    func testSwitchingProtocolsDetachesWithTheBytesAfterThe101() throws {
        var layer = HTTP1ClientLayer()
        var head = get("/chat")
        head.fields.append("Connection", "Upgrade")
        head.fields.append("Upgrade", "websocket")
        _ = try layer.sendRequestHead(head, framing: nil, webSocketKey: "")
        layer.receive(bytes("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n") + [0x81, 0x02])
        XCTAssertEqual(steps(&layer), ["response 101", "upgraded", "pause"])
        XCTAssertNil(layer.exchange)
        XCTAssertEqual(layer.phase, .upgraded)
        layer.receive(bytes("hi"))
        XCTAssertEqual(steps(&layer), ["pause"])
        layer.readEnded()
        let detached = try layer.detachForTunnel()
        XCTAssertEqual(detached.leftover, [0x81, 0x02, 0x68, 0x69])
        XCTAssertTrue(detached.peerEnded)
        XCTAssertEqual(layer.phase, .closed)
    }

    func testExtendedConnectTunnelCarriesBytesBothWays() throws {
        var layer = HTTP1ClientLayer()
        var connect = HTTPRequestHead(method: "CONNECT", scheme: "https", authority: "h", path: "/chat", version: .http2)
        connect.connectProtocol = "websocket"
        let sent = try layer.sendRequestHead(connect, framing: nil, webSocketKey: "dGhlIHNhbXBsZSBub25jZQ==")
        XCTAssertTrue(text(sent.serialized.bytes).hasPrefix("GET /chat HTTP/1.1\r\n"))
        XCTAssertTrue(text(sent.serialized.bytes).contains("Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"))
        XCTAssertFalse(sent.requestEnded)
        XCTAssertEqual(layer.phase, .lastExchange)
        layer.receive(bytes("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\nin"))
        XCTAssertEqual(steps(&layer), ["response 101", "body in", "resume"])
        XCTAssertEqual(layer.phase, .tunnelling)
        XCTAssertEqual(try layer.sendBody(bytes("out")), bytes("out"))
        let end = try layer.sendEnd(trailers: nil)
        XCTAssertTrue(end.halfClose)
        XCTAssertEqual(end.completion, .pending)
        layer.readEnded()
        XCTAssertEqual(steps(&layer), ["end", "completed close", "wait"])
    }

    // MARK: Helpers

    private func steps(_ layer: inout HTTP1ClientLayer, wants: Bool = true) -> [String] {
        var lines: [String] = []
        while lines.count < 50 {
            let step = layer.next(consumerWants: wants)
            switch step {
            case .idle(let reading): lines.append(line(reading))
            case .interimResponse(let parsed): lines.append("interim \(parsed.head.status)")
            case .response(let parsed): lines.append("response \(parsed.head.status)")
            case .upgraded: lines.append("upgraded")
            case .responseBody(let body): lines.append("body \(text(body))")
            case .responseEnd: lines.append("end")
            case .completed(let completion): lines.append("completed \(completion)")
            case .close(.peerClosed(let message)?): lines.append("close peerClosed \(message)")
            case .close(.malformed(let error)?): lines.append("close malformed \(error.status)")
            case .close(.cancelled?): lines.append("close cancelled")
            case .close(nil): lines.append("close")
            }
            switch step {
            case .idle, .close: return lines
            default: continue
            }
        }
        return lines
    }

    private func get(_ path: String) -> HTTPRequestHead {
        HTTPRequestHead(method: "GET", scheme: nil, authority: "h", path: path, version: .http1_1)
    }
}
