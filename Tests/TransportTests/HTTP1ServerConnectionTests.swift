import Foundation
import HTTP
import Hashing
import TLS
import Transport
import Wire
import IntactTestSupport
import XCTest

/// HTTP/1.1 server behaviour seen from a raw byte peer: malformed requests,
/// pipelining, CONNECT tunnels.
final class HTTP1ServerConnectionTests: XCTestCase {
    private var origin: TestOrigin!
    private let loop = EventLoop(label: "http1-server-tests-client")

    override func setUpWithError() throws {
        origin = try TestOrigin()
    }

    override func tearDown() {
        origin?.stop()
        origin = nil
    }

    private func tlsClient() throws -> ChannelSecurity {
        .tlsClient(TLSClientSetup(context: try TestPKI.shared().clientContext(alpn: ["http/1.1"]),
                                  serverName: TestPKI.hostName))
    }

    /// Sends `bytes` over TLS, half-closes, returns everything the server sent until it closed.
    private func exchange(_ bytes: [UInt8]) throws -> String {
        let record = ChannelClient.exchange(with: origin.address, on: loop, security: try tlsClient(), payload: bytes)
        XCTAssertNil(record.connectError)
        return String(decoding: record.received, as: UTF8.self)
    }

    func testMalformedRequestsAreAnsweredWithTheirStatusAndTheServerKeepsServing() throws {
        let cases: [(request: String, status: Int)] = [
            ("GET / HTTP/1.1\r\nHost: a\r\nBad Header\r\n\r\n", 400),
            ("GET /\(String(repeating: "a", count: 9000)) HTTP/1.1\r\nHost: a\r\n\r\n", 414),
            ("GET / HTTP/1.1\r\nHost: a\r\n" + String(repeating: "X-Filler: \(String(repeating: "b", count: 100))\r\n", count: 700) + "\r\n", 431),
            ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", 501),
            ("GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505),
            ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabc", 400),
        ]
        for (index, item) in cases.enumerated() {
            let answer = try exchange(Array(item.request.utf8))
            XCTAssertTrue(answer.hasPrefix("HTTP/1.1 \(item.status) "), "case \(index): \(answer.prefix(200))")
            XCTAssertTrue(answer.contains("\r\nConnection: close\r\n"), "case \(index)")
            let body = answer.components(separatedBy: "\r\n\r\n").last ?? ""
            XCTAssertTrue(body.hasPrefix("\(item.status) "), "case \(index): body \(body)")
            // Another request on a fresh connection is served normally.
            let next = try exchange(Array("GET /bytes/5 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n".utf8))
            XCTAssertTrue(next.hasPrefix("HTTP/1.1 200 OK\r\n"), "after case \(index): \(next.prefix(100))")
        }
        let reported = origin.malformed.current
        XCTAssertEqual(reported.map(\.0.status.code), cases.map(\.status))
        XCTAssertEqual(reported.map(\.1), cases.map { Optional($0.status) })
    }

    func testPipelinedRequestsAreAnsweredInOrder() throws {
        let requests = "GET /bytes/3 HTTP/1.1\r\nHost: a\r\n\r\n"
            + "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello"
            + "GET /version HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
            + "GET /bytes/9 HTTP/1.1\r\nHost: a\r\n\r\n"
        let answer = try exchange(Array(requests.utf8))
        let statuses = answer.components(separatedBy: "HTTP/1.1 200 OK").count - 1
        XCTAssertEqual(statuses, 3, answer)
        let echo = try XCTUnwrap(answer.range(of: "hello"))
        let version = try XCTUnwrap(answer.range(of: "HTTP/1.1 3"))
        XCTAssertLessThan(echo.lowerBound, version.lowerBound)
        XCTAssertTrue(answer.hasSuffix("HTTP/1.1 3"), "nothing after the Connection: close exchange")
    }

    /// A client that asked to close (HTTP/1.1 `Connection: close`, or HTTP/1.0
    /// without keep-alive) and keeps its side open, as wrk does, reads
    /// `Connection: close` in the answer and then a clean end (close_notify, no
    /// reset); without the field it would send its next request into the
    /// closing connection and see it fail.
    func testAResponseAfterWhichTheServerClosesSaysConnectionClose() throws {
        for request in ["GET /bytes/5 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", "GET /bytes/5 HTTP/1.0\r\n\r\n"] {
            let record = ChannelClient.exchange(with: origin.address, on: loop, security: try tlsClient(),
                                                payload: Array(request.utf8), then: .stayOpen)
            let answer = String(decoding: record.received, as: UTF8.self)
            XCTAssertTrue(answer.contains("\r\nConnection: close\r\n"), "\(request): \(answer)")
            XCTAssertEqual(Array(record.received.suffix(5)), patternBytes(5), answer)
            XCTAssertEqual(record.readEnd, .closeNotify, request)
            XCTAssertNil(record.error, request)
        }
        // A response after which the connection stays open says nothing of the kind.
        let pipelined = "GET /bytes/3 HTTP/1.1\r\nHost: a\r\n\r\nGET /version HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
        let record = ChannelClient.exchange(with: origin.address, on: loop, security: try tlsClient(),
                                            payload: Array(pipelined.utf8), then: .stayOpen)
        let answers = String(decoding: record.received, as: UTF8.self).components(separatedBy: "HTTP/1.1 200 OK")
        XCTAssertEqual(answers.count, 3, "\(answers)")
        XCTAssertFalse(answers[1].contains("Connection: close"), answers[1])
        XCTAssertTrue(answers[2].contains("\r\nConnection: close\r\n"), answers[2])
    }

    /// A handler installed with nothing held is told to the engine at once,
    /// but a stream that owes `100 Continue` still waits for the end of the
    /// owner's call: an owner that answers right after `setHandler` (the
    /// `/stream/` route sends its 200 head then) sends no 100 before it.
    func testAnOwnerThatAnswersRightAfterInstallingItsHandlerSendsNoContinue() throws {
        let request = "PUT /stream/5 HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 3\r\n"
            + "Connection: close\r\n\r\nabc"
        let answer = try exchange(Array(request.utf8))
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 200 OK\r\n"), answer)
        XCTAssertFalse(answer.contains("100 Continue"), answer)
    }

    /// With nothing held when the handler comes, the request's body still
    /// reaches it, in order, on the connection's next requests too.
    func testBodiesReachHandlersInstalledWithNothingHeld() throws {
        let requests = "POST /sha256 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello"
            + "POST /sha256 HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
            + "3\r\nabc\r\n0\r\n\r\n"
        let answer = try exchange(Array(requests.utf8))
        XCTAssertTrue(answer.contains(Encoding.hex(SHA256.hash(Array("hello".utf8))) + " 5"), answer)
        XCTAssertTrue(answer.hasSuffix(Encoding.hex(SHA256.hash(Array("abc".utf8))) + " 3"), answer)
    }

    func testUnreadRequestBodyIsDiscardedAfterTheResponse() throws {
        let requests = "POST /ignore-body HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n0123456789"
            + "POST /ignore-body HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
            + "GET /version HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
        let answer = try exchange(Array(requests.utf8))
        XCTAssertEqual(answer.components(separatedBy: "HTTP/1.1 204 No Content").count - 1, 2, answer)
        XCTAssertTrue(answer.hasSuffix("HTTP/1.1 3"), answer)
    }

    func testConnectTunnelCarriesTLSToTheOrigin() throws {
        try XCTSkipUnless(toolExists("curl"), "curl is not installed")
        let proxy = try TunnelProxy(target: origin.address)
        defer { proxy.stop() }
        let output = try curl(origin, ["--http1.1", "-x", "http://127.0.0.1:\(proxy.port)", "-w", " %{http_code}",
                                       "https://\(TestPKI.hostName):\(origin.port)/version"])
        XCTAssertEqual(output.status, 0, output.error)
        XCTAssertEqual(output.output, "HTTP/1.1 1 200")
        XCTAssertEqual(proxy.connectTargets.current, ["\(TestPKI.hostName):\(origin.port)"])
    }
}
