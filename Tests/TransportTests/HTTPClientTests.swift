import Foundation
import HTTP
import Hashing
import TLS
import Transport
import Wire
import XCTest

/// `HTTPClient`, `HTTPClientPool` and `HTTPClientConnection` against `HTTPServer`, over loopback.
final class HTTPClientTests: XCTestCase {
    private var origin: TestOrigin!
    private var client: HTTPClient!
    private let loop = EventLoop(label: "http-client-tests")

    override func setUpWithError() throws {
        origin = try TestOrigin()
        client = HTTPClient(loop: loop)
    }

    override func tearDown() {
        client?.close()
        origin?.stop()
        origin = nil
        client = nil
    }

    private func endpoint(_ protocols: HTTPProtocolChoice, port: UInt16? = nil,
                          proxy: HTTPProxyAddress? = nil) throws -> HTTPEndpoint {
        let tls = try HTTPClientTLS(trustRoots: .caFile(TestPKI.shared().caFile), protocols: protocols,
                                    serverName: TestPKI.hostName)
        return HTTPEndpoint(host: "127.0.0.1", port: port ?? origin.port, tls: tls, proxy: proxy)
    }

    /// Sends and waits (at most 20 s).
    private func send(_ method: String, _ path: String, body: [UInt8] = [],
                      to endpoint: HTTPEndpoint) -> Result<HTTPClientResponse, TransportError> {
        let result = Locked<Result<HTTPClientResponse, TransportError>>(.failure(.invalidState("no answer in time")))
        let done = DispatchSemaphore(value: 0)
        client.send(HTTPRequestHead(method: HTTPMethod(method), path: path), body: body, to: endpoint) { outcome in
            result.withLock { $0 = outcome }
            done.signal()
        }
        _ = done.wait(timeout: .now() + 20)
        return result.current
    }

    func testGetAndPostOverHTTP1AndHTTP2() throws {
        for (protocols, version) in [(HTTPProtocolChoice.http1, HTTPVersion.http1_1), (.http2, .http2)] {
            let ep = try endpoint(protocols)
            let download = try send("GET", "/bytes/100000", to: ep).get()
            XCTAssertEqual(download.head.status, 200)
            XCTAssertEqual(download.version, version)
            assertBytesEqual(download.body, patternBytes(100_000))
            let upload = patternBytes(300_000, seed: 5)
            let echo = try send("POST", "/echo", body: upload, to: ep).get()
            XCTAssertEqual(echo.head.fields["x-request-method"], "POST")
            assertBytesEqual(echo.body, upload)
        }
    }

    /// `respond` with a body answers a HEAD with the head alone on both
    /// versions: an HTTP/2 client resets a HEAD's stream that gets DATA
    /// (a load balancer's `HEAD /` health check through a tap would fail).
    func testAHeadRequestIsAnsweredWithoutABody() throws {
        for protocols in [HTTPProtocolChoice.http1, .http2] {
            let answer = try send("HEAD", "/version", to: try endpoint(protocols)).get()
            XCTAssertEqual(answer.head.status, 200, "\(protocols)")
            XCTAssertEqual(answer.body, [], "\(protocols)")
        }
    }

    func testWireFormsAsSentEqualWireFormsAsReceived() throws {
        for protocols in [HTTPProtocolChoice.http1, .http2] {
            let response = try send("GET", "/wire", to: try endpoint(protocols)).get()
            let parts = String(decoding: response.body, as: UTF8.self).components(separatedBy: "\n--\n")
            XCTAssertEqual(parts.count, 2)
            XCTAssertEqual(parts.first, render(response.requestWire), "\(protocols) request")
            XCTAssertEqual(parts.last, render(response.wire), "\(protocols) response")
        }
    }

    func testHundredConcurrentHTTP2StreamsShareOneConnection() throws {
        let ep = try endpoint(.http2)
        let results = Locked<[Int: Result<HTTPClientResponse, TransportError>]>([:])
        let group = DispatchGroup()
        for index in 0..<100 {
            group.enter()
            client.send(HTTPRequestHead(method: "GET", path: "/bytes/\(1000 + index)"), to: ep) { outcome in
                results.withLock { $0[index] = outcome }
                group.leave()
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 20), .success)
        let collected = results.current
        XCTAssertEqual(collected.count, 100)
        for (index, outcome) in collected {
            let response = try outcome.get()
            XCTAssertEqual(response.version, .http2)
            XCTAssertEqual(response.body, patternBytes(1000 + index), "stream \(index)")
        }
        XCTAssertEqual(origin.readyCount.current, 1)
    }

    func testTrailersArriveOverBothVersions() throws {
        let checksum = Encoding.hex(SHA256.hash(patternBytes(5000, seed: 3)))
        for protocols in [HTTPProtocolChoice.http1, .http2] {
            let response = try send("GET", "/trailers", to: try endpoint(protocols)).get()
            XCTAssertEqual(response.trailers?["x-checksum"], checksum, "\(protocols)")
            XCTAssertEqual(response.body, patternBytes(5000, seed: 3))
        }
    }

    func testKeepAliveReusesTheConnection() throws {
        let ep = try endpoint(.http1)
        let first = try send("GET", "/version", to: ep).get()
        let second = try send("GET", "/version", to: ep).get()
        XCTAssertEqual(String(decoding: first.body, as: UTF8.self), "HTTP/1.1 1")
        XCTAssertEqual(String(decoding: second.body, as: UTF8.self), "HTTP/1.1 2")
        XCTAssertEqual(origin.readyCount.current, 1)
    }

    /// On an embedded loop (the client, the origin and their connections in
    /// memory, stepped by hand): while the client's stream is paused, running
    /// the loop until nothing moves shows where the server stopped.
    func testBackpressureHoldsTheServerWhileTheClientPauses() throws {
        for protocols in [HTTPProtocolChoice.http1, .http2] {
            try assertBackpressure(protocols)
        }
    }

    private func assertBackpressure(_ protocols: HTTPProtocolChoice) throws {
        let loop = EventLoop.embedded(label: "backpressure")
        let network = EmbeddedNetwork(loop: loop)
        network.socketPairWindow = 256 << 10 // about a loopback socket's buffers
        let origin = try TestOrigin(protocols: .negotiated, network: network)
        let client = HTTPClient(loop: loop)
        defer {
            client.close()
            origin.server.stop()
            loop.run()
        }
        let total = 64 << 20
        let blocked = Locked(0)
        origin.onBlocked.withLock { $0 = { blocked.withLock { $0 += 1 } } }
        var finished = false
        var received = (count: 0, hash: SHA256())
        var paused: HTTPClientStream?
        let ep = try endpoint(protocols, port: origin.port)
        client.pool.openStream(to: ep, HTTPRequestHead(method: "GET", authority: "example.test", path: "/stream/\(total)"),
                               framing: HTTP1Framing.none, handler: { event in
            switch event {
            case .body(let bytes): received.count += bytes.count; received.hash.update(bytes)
            case .end: finished = true
            case .failed(let error): XCTFail("\(error)")
            default: break
            }
        }, completion: { result in
            guard case .success(let stream) = result else { return XCTFail("\(result)") }
            stream.pauseInbound()
            paused = stream
        })
        // Everything that can move moves: a server that ignored backpressure would run ahead here.
        loop.run()
        XCTAssertGreaterThanOrEqual(blocked.current, 1, "\(protocols): the server was never held")
        let whilePaused = origin.streaming.current
        XCTAssertLessThan(whilePaused.sent, 32 << 20, "\(protocols): the server kept writing while the client paused")
        XCTAssertLessThan(whilePaused.maxPending, 2 << 20, "\(protocols): pending bytes grew unbounded")
        XCTAssertEqual(received.count, 0, "\(protocols): events while paused")
        try XCTUnwrap(paused, "\(protocols): the stream opened").resumeInbound()
        loop.run()
        XCTAssertTrue(finished, "\(protocols): all bytes arrived")
        var expected = SHA256()
        for _ in 0..<(total / TestOrigin.streamChunk.count) { expected.update(TestOrigin.streamChunk) }
        XCTAssertEqual(received.count, total)
        XCTAssertEqual(received.hash.finalize(), expected.finalize())
        XCTAssertGreaterThanOrEqual(origin.streaming.current.blockedCount, 1)
    }

    func testForwardProxyConnectThenTLSToTheOrigin() throws {
        let proxy = try TunnelProxy(target: origin.address)
        defer { proxy.stop() }
        for (protocols, expected) in [(HTTPProtocolChoice.http2, "HTTP/2 1"), (.http1, "HTTP/1.1 1")] {
            let ep = try endpoint(protocols, proxy: HTTPProxyAddress(host: "127.0.0.1", port: proxy.port))
            let response = try send("GET", "/version", to: ep).get()
            XCTAssertEqual(String(decoding: response.body, as: UTF8.self), expected)
        }
        XCTAssertEqual(proxy.connectTargets.current, Array(repeating: "127.0.0.1:\(origin.port)", count: 2))
    }

    func testFailuresNameWhereTheyHappened() throws {
        // A proxy that answers CONNECT with 404.
        let plain = try TestOrigin(tls: false)
        defer { plain.stop() }
        let refused = send("GET", "/", to: try endpoint(.http1, proxy: HTTPProxyAddress(host: "127.0.0.1", port: plain.port)))
        XCTAssertEqual(refused.failure, .proxyRefused(proxy: "http://127.0.0.1:\(plain.port)", status: 404, reason: "Not Found"))
        // TLS to a plaintext server.
        guard case .tlsHandshake? = send("GET", "/", to: try endpoint(.http1, port: plain.port)).failure else {
            return XCTFail("expected a TLS handshake failure")
        }
        // Nothing listening.
        plain.stop()
        guard case .connect? = send("GET", "/", to: try endpoint(.http1, port: plain.port)).failure else {
            return XCTFail("expected a TCP connect failure")
        }
    }

    func testAServerThatClosesWithoutAnsweringFailsTheRequestAtOnce() throws {
        // Reads the request head, then closes its side without a byte of response.
        let serverLoop = EventLoop(label: "closing-server")
        let listener = try Listener(bindingTo: .loopbackIPv4(port: 0), on: serverLoop) { connection in
            connection.start { event in
                if case .received(let bytes) = event, String(decoding: bytes, as: UTF8.self).contains("\r\n\r\n") {
                    connection.close()
                }
            }
        }
        defer { listener.close() }
        let endpoint = HTTPEndpoint(host: "127.0.0.1", port: listener.localAddress.port, tls: nil)
        // Before the fix the client waited for the response until the send helper gave up ("no answer in time").
        XCTAssertEqual(send("GET", "/", to: endpoint).failure, .peerClosed(during: .response))
    }

    func testClientCertificateIsPresentedWhenRequired() throws {
        let pki = try TestPKI.shared()
        let secured = try TestOrigin(clientCertificate: .require(trustedBy: .caFile(pki.caFile)))
        defer { secured.stop() }
        let issued = try pki.authority.issueClient(commonName: "test-device", password: "secret")
        for protocols in [HTTPProtocolChoice.http1, .http2] {
            let tls = try HTTPClientTLS(trustRoots: .caFile(pki.caFile), identity: issued.identity, protocols: protocols,
                                        serverName: TestPKI.hostName)
            let response = try send("GET", "/whoami", to: HTTPEndpoint(host: "127.0.0.1", port: secured.port, tls: tls)).get()
            XCTAssertTrue(String(decoding: response.body, as: UTF8.self).contains("test-device"))
        }
        let anonymous = send("GET", "/whoami", to: try endpoint(.http1, port: secured.port))
        XCTAssertNotNil(anonymous.failure, "a server that requires a certificate refuses a client without one")
    }

    func testStreamResetReachesThePeerAndSiblingsGoOn() throws {
        let ep = try endpoint(.http2)
        guard case .streamReset(let reset)? = send("GET", "/reset", to: ep).failure else {
            return XCTFail("expected the stream to be reset")
        }
        XCTAssertEqual(reset.code, .refusedStream)
        XCTAssertEqual(reset.initiator, .peer)
        let next = try send("GET", "/version", to: ep).get()
        XCTAssertEqual(String(decoding: next.body, as: UTF8.self), "HTTP/2 3")
        XCTAssertEqual(origin.readyCount.current, 1)
        // HTTP/1.1 cannot abandon one exchange: the connection is reset, and the next request dials anew.
        let h1 = try endpoint(.http1)
        XCTAssertNotNil(send("GET", "/reset", to: h1).failure)
        XCTAssertEqual(String(decoding: try send("GET", "/version", to: h1).get().body, as: UTF8.self), "HTTP/1.1 1")
    }

    func testPlaintextHTTP2WithPriorKnowledge() throws {
        let plain = try TestOrigin(tls: false, protocols: .http2)
        defer { plain.stop() }
        let ep = HTTPEndpoint(host: "127.0.0.1", port: plain.port, protocolChoice: .http2)
        let response = try send("GET", "/version", to: ep).get()
        XCTAssertEqual(String(decoding: response.body, as: UTF8.self), "HTTP/2 1")
    }

    /// `.available` comes once per finished exchange, after the stream's end
    /// was handled (at once when the engine's own step frees the slot), and
    /// never inside an owner's call: a stream reset by its owner frees its
    /// HTTP/2 slot, and the connection says so only after `reset` returned.
    func testAvailableComesAfterTheEndAndNeverInsideAnOwnersCall() throws {
        /// Loop-confined: touched only in the closures below, all on `loop`.
        final class Probe: @unchecked Sendable {
            var inOwnersCall = false
            var endHandled = false
            var resetStream: HTTPClientStream?
        }
        for version in [HTTPProtocolChoice.http1, .http2] {
            let ep = try endpoint(version)
            let loop = self.loop
            let probe = Probe()
            let log = Locked<[String]>([])
            let finished = expectation(description: "finished \(version)")
            let head: @Sendable (String) -> HTTPRequestHead = { HTTPRequestHead(method: "GET", authority: "example.test", path: $0) }
            loop.execute {
                var connection: HTTPClientConnection?
                HTTPClientConnection.connect(to: ep, on: loop, events: { event in
                    guard case .available = event else { return }
                    let count = log.withLock {
                        $0.append(probe.inOwnersCall ? "available inside a call"
                                  : probe.endHandled ? "available" : "available before the end")
                        return $0.count
                    }
                    guard version == .http2, count == 1, let connection else { return finished.fulfill() }
                    // HTTP/2: a stream its owner resets from its own handler frees a slot too.
                    probe.resetStream = try? connection.openStream(head("/stream/4000000")) { event in
                        guard case .response = event else { return }
                        probe.inOwnersCall = true
                        probe.resetStream?.reset()
                        probe.inOwnersCall = false
                    }
                }, completion: { result in
                    guard let opened = try? result.get() else { return XCTFail("\(result)") }
                    connection = opened
                    do {
                        _ = try opened.openStream(head("/version")) { event in
                            if case .end = event { probe.endHandled = true }
                        }
                    } catch {
                        XCTFail("\(error)")
                    }
                })
            }
            wait(for: [finished], timeout: 20)
            XCTAssertEqual(log.current, version == .http2 ? ["available", "available"] : ["available"], "\(version)")
        }
    }

    func testServerGoAwayIsReported() throws {
        let events = Locked<[String]>([])
        let closed = expectation(description: "closed")
        let answered = expectation(description: "answered")
        let body = Locked<[UInt8]>([])
        let ep = try endpoint(.http2)
        let loop = self.loop
        loop.execute {
            HTTPClientConnection.connect(to: ep, on: loop, events: { event in
                switch event {
                case .goAway(_, let code): events.withLock { $0.append("goAway \(code)") }
                case .closed: closed.fulfill()
                case .ready, .available: break
                }
            }, completion: { result in
                guard let connection = try? result.get() else { return XCTFail("\(result)") }
                // One exchange first, so the server surely runs HTTP/2 when it stops.
                let head = HTTPRequestHead(method: "GET", authority: "example.test", path: "/version")
                do {
                    _ = try connection.openStream(head) { event in
                        switch event {
                        case .body(let bytes): body.withLock { $0 += bytes }
                        case .end: answered.fulfill()
                        default: break
                        }
                    }
                } catch {
                    XCTFail("\(error)")
                }
            })
        }
        wait(for: [answered], timeout: 20)
        XCTAssertEqual(String(decoding: body.current, as: UTF8.self), "HTTP/2 1")
        origin.stop()
        wait(for: [closed], timeout: 20)
        XCTAssertEqual(events.current, ["goAway NO_ERROR"])
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
