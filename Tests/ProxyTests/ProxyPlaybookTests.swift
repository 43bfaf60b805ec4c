import Evidence
import HTTP
import IntactTestSupport
import Proxy
import Transport
import Wire
import XCTest

/// The proxy's middle on the playbook (the whole proxy in memory, stepped
/// by hand): client bytes in, upstream bytes out, upstream bytes in, client
/// bytes out, in forward and reverse mode, TLS on both legs, a retry, and
/// backpressure from a slow client to the origin. Exact bytes on each leg:
/// what crosses the proxy is unmodified.
final class ProxyPlaybookTests: XCTestCase {
    static let ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

    func testAForwardGetCrossesUnmodifiedAndIsRecorded() throws {
        let playbook = try ProxyPlaybook()
        let client = try playbook.connectClient()
        client.send("GET http://origin.test/one HTTP/1.1\r\nHost: origin.test\r\nX-Test: 1\r\n\r\n")
        let origin = try playbook.acceptDial(host: "origin.test", port: 80)
        origin.expect("GET /one HTTP/1.1\r\nHost: origin.test\r\nX-Test: 1\r\n\r\n")
        playbook.answer(Self.ok, from: origin, reaches: client)
        let record = try XCTUnwrap(playbook.records.first)
        XCTAssertNil(record.error)
        XCTAssertEqual(record.leg(.downstream)?.response?.status, 200)
        XCTAssertEqual(record.leg(.upstream)?.request?.path, "/one")
        XCTAssertEqual(record.leg(.downstream)?.response?.digest.body, record.leg(.upstream)?.response?.digest.body)
    }

    func testAReverseExchangeRunsTLSOnBothLegs() throws {
        let target = try XCTUnwrap(UpstreamTarget(scheme: .https, host: "origin.test", port: 443))
        let playbook = try ProxyPlaybook(mode: .reverse(target))
        let client = try playbook.connectClient(tls: "origin.test")
        XCTAssertEqual(client.negotiated?.alpn, "http/1.1")
        client.send("GET /secure HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        let origin = try playbook.acceptDial(host: "origin.test", port: 443, tls: true)
        XCTAssertNil(origin.tlsFailure)
        XCTAssertEqual(origin.negotiated?.alpn, "http/1.1")
        origin.expect("GET /secure HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        playbook.answer(Self.ok, from: origin, reaches: client)
        let record = try XCTUnwrap(playbook.records.first)
        XCTAssertNil(record.error)
        XCTAssertEqual(record.leg(.upstream)?.response?.status, 200)
    }

    func testAForwardConnectReachesTheOriginThenIsInterceptedWithALeafOfTheProxysCA() throws {
        let playbook = try ProxyPlaybook()
        let client = try playbook.connectClient()
        client.send("CONNECT origin.test:443 HTTP/1.1\r\nHost: origin.test:443\r\n\r\n")
        playbook.run()
        XCTAssertEqual(client.read(), [], "the tunnel is answered once the origin is reached")
        // The probe: the origin's certificate and protocol, learnt before the client's handshake.
        let probe = try playbook.acceptDial(host: "origin.test", port: 443, tls: true)
        XCTAssertTrue(client.readText().hasPrefix("HTTP/1.1 200 "))
        try playbook.startClientTLS(client, serverName: "origin.test")
        playbook.run()
        XCTAssertNil(client.tlsFailure)
        XCTAssertNotNil(client.negotiated)
        XCTAssertTrue(probe.isClosed, "the probe is done once the client's handshake is")
        client.send("GET /inside HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        let origin = try playbook.acceptDial(host: "origin.test", port: 443, tls: true)
        origin.expect("GET /inside HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        playbook.answer(Self.ok, from: origin, reaches: client)
    }

    /// A GET on a reused keep-alive upstream connection that the origin
    /// closes without answering was never processed: it goes again on a
    /// fresh connection, and the record says so once.
    func testAGetOnAReusedConnectionTheOriginClosedIsRetriedOnAFreshOne() throws {
        let playbook = try ProxyPlaybook()
        let client = try playbook.connectClient()
        client.send("GET http://origin.test/one HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        let first = try playbook.acceptDial(host: "origin.test", port: 80)
        _ = first.read()
        playbook.answer(Self.ok, from: first, reaches: client)

        client.send("GET http://origin.test/two HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        playbook.run()
        XCTAssertTrue(playbook.network.dials.isEmpty, "the idle connection is reused")
        XCTAssertEqual(first.readText(), "GET /two HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        first.finishSending()
        let second = try playbook.acceptDial(host: "origin.test", port: 80)
        XCTAssertEqual(second.readText(), "GET /two HTTP/1.1\r\nHost: origin.test\r\n\r\n", "the same request again")
        playbook.answer(Self.ok, from: second, reaches: client)
        let record = try XCTUnwrap(playbook.records.last)
        XCTAssertNil(record.error)
        XCTAssertEqual(record.retries?.count, 1)
    }

    /// A dial nobody answers fails at the connect timeout, on the loop's
    /// clock: 502 for the client, the record names the timeout.
    func testAnUnansweredDialFailsAtTheConnectTimeout() throws {
        let playbook = try ProxyPlaybook { $0.connectTimeout = .seconds(3) }
        let client = try playbook.connectClient()
        client.send("GET http://origin.test/ HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        playbook.run()
        XCTAssertEqual(playbook.network.dials.count, 1)
        playbook.advance(by: .milliseconds(2999))
        XCTAssertEqual(client.read(), [], "not before the timeout")
        playbook.advance(by: .milliseconds(1))
        let answer = client.readText()
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 504 ") || answer.hasPrefix("HTTP/1.1 502 "), answer)
        let record = try XCTUnwrap(playbook.records.first)
        XCTAssertNotNil(record.error)
    }

    /// A client that reads slowly holds the origin back: the proxy stops
    /// reading the origin while the client's window is full, and every byte
    /// arrives once the client reads.
    func testASlowClientHoldsTheOriginBackUntilItReads() throws {
        let playbook = try ProxyPlaybook()
        let client = try playbook.connectClient()
        client.peer.receiveWindow = 64 * 1024
        client.send("GET http://origin.test/big HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        let origin = try playbook.acceptDial(host: "origin.test", port: 80)
        _ = origin.read()
        let size = 8 << 20
        let head = "HTTP/1.1 200 OK\r\nContent-Length: \(size)\r\n\r\n"
        origin.send(head)
        let body = [UInt8](repeating: 0x61, count: size)
        origin.send(body)
        playbook.run()
        XCTAssertGreaterThan(origin.peer.unconsumedByteCount, 4 << 20, "the proxy stopped reading the origin")
        var received: [UInt8] = []
        for _ in 0..<10_000 {
            let chunk = client.read()
            if chunk.isEmpty && origin.peer.unconsumedByteCount == 0 { break }
            received += chunk
            playbook.run()
        }
        received += client.read()
        XCTAssertEqual(received.count, head.utf8.count + size)
        XCTAssertEqual(Array(received.dropFirst(head.utf8.count)), body)
        XCTAssertNil(playbook.records.first?.error)
    }

    /// The same over HTTP/2: a client that leaves its stream window closed
    /// holds the HTTP/1.1 origin back (the proxy stops reading it once the
    /// stream's queue is full), and every byte arrives as the client consumes.
    func testASlowHTTP2ClientHoldsTheOriginBackUntilItConsumes() throws {
        let target = try XCTUnwrap(UpstreamTarget(scheme: .http, host: "origin.test", port: 80))
        let playbook = try ProxyPlaybook(mode: .reverse(target))
        let client = try playbook.connectHTTP2Client(tls: "origin.test", consumesData: false)
        let stream = try XCTUnwrap(client.request(HTTPRequestHead(method: "GET", authority: "origin.test", path: "/big")))
        let origin = try playbook.acceptDial(host: "origin.test", port: 80)
        XCTAssertTrue(origin.readText().hasPrefix("GET /big HTTP/1.1\r\n"))
        let size = 8 << 20
        origin.send("HTTP/1.1 200 OK\r\nContent-Length: \(size)\r\n\r\n")
        let body = [UInt8](repeating: 0x61, count: size)
        origin.send(body)
        playbook.run()
        XCTAssertGreaterThan(origin.peer.unconsumedByteCount, 4 << 20, "the proxy stopped reading the origin")
        var received: [UInt8] = []
        for _ in 0..<10_000 where received.count < size {
            for case .data(stream, let bytes) in client.takeEvents() {
                received += bytes
                client.session.consumed(stream: stream, bytes: bytes.count)
            }
            playbook.run()
        }
        XCTAssertEqual(received.count, size)
        XCTAssertEqual(received, body)
        XCTAssertNil(playbook.records.first?.error)
    }

    /// HTTP/2 on both legs, in memory, between Intact's own ends: Transport's
    /// HTTP/2 client (as `intact client` uses it) dials the proxy and the
    /// proxy dials Transport's HTTP/2 server (as `intact server`), listening
    /// on the playbook's network (a dial to a listener is a socket pair in
    /// memory), TLS with ALPN on each leg.
    func testAnHTTP2ExchangeRunsInMemoryOnBothLegs() throws {
        let target = try XCTUnwrap(UpstreamTarget(scheme: .https, host: "origin.test", port: 9443))
        let playbook = try ProxyPlaybook(mode: .reverse(target))
        let seen = LoopShared<[String]>([])
        let tls = try HTTPServer.tlsSetup(identity: playbook.originAuthority.leaf(for: "origin.test"), protocols: .http2)
        let origin = HTTPServer(group: EventLoopGroup(loopCount: 1, label: "unused"),
                                configuration: HTTPServer.Configuration(address: .loopbackIPv4(port: 9443), tls: tls)) { stream in
            seen.value.append("\(stream.version) \(stream.request.method) \(stream.request.path)")
            stream.collectBody { _ in
                try? stream.respond(HTTPResponseHead(status: 200), body: Array("answer to \(stream.request.path)".utf8))
            }
        }
        _ = origin.start(on: playbook.network)
        let clientTLS = try HTTPClientTLS(trustRoots: .caFile(playbook.authority.certificatePath), protocols: .http2,
                                          serverName: "origin.test")
        let endpoint = HTTPEndpoint(host: "127.0.0.1", port: playbook.address.port, tls: clientTLS, protocolChoice: .http2)
        let client = LoopShared<HTTPClientConnection?>(nil)
        HTTPClientConnection.connect(to: endpoint, on: playbook.loop, events: { _ in }, completion: { client.value = try? $0.get() })
        playbook.run()
        let connection = try XCTUnwrap(client.value, "the client's TLS handshake with the proxy")
        XCTAssertEqual(connection.version, .http2)

        let answers = LoopShared<[String: String]>([:])
        for path in ["/one", "/two"] {
            let body = LoopShared<[UInt8]>([])
            _ = try connection.openStream(HTTPRequestHead(method: "GET", authority: "origin.test", path: path)) { event in
                switch event {
                case .body(let bytes): body.value += bytes
                case .end: answers.value[path] = String(decoding: body.value, as: UTF8.self)
                default: break
                }
            }
        }
        playbook.run()
        XCTAssertEqual(answers.value, ["/one": "answer to /one", "/two": "answer to /two"])
        XCTAssertEqual(seen.value.sorted(), ["HTTP/2 GET /one", "HTTP/2 GET /two"])
        XCTAssertEqual(playbook.records.count, 2)
        for record in playbook.records {
            XCTAssertNil(record.error)
            XCTAssertEqual(record.leg(.upstream)?.response?.status, 200)
            XCTAssertEqual(record.leg(.downstream)?.response?.digest.body, record.leg(.upstream)?.response?.digest.body)
        }
        withExtendedLifetime(origin) {}
    }
}

/// A value the test's closures share. `@unchecked Sendable`: the playbook
/// runs everything on the test's thread.
private final class LoopShared<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
