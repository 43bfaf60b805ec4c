import AuthFlow
import Evidence
import HTTP
import XCTest
@testable import SignIn

final class ServerExchangeTests: XCTestCase {
    private let head = HTTPRequestHead(method: "POST", path: "/suite/mobileAuthTokenConsumer",
                                       fields: ["Host": "h.test", "Content-Length": "12", "Intact-Trace": "r-4"])
    private let redaction = RedactionPolicy()

    private func exchange(limit: Int) -> ServerExchange {
        ServerExchange(head: head, wire: .http2Request(head), connectionScheme: "https", clientCertificateSubject: "CN=alice",
                       limit: limit, storeLimit: 0, digests: redaction.digests, now: .now())
    }

    func testHandsTheWholeRequestOverAtItsEnd() {
        var exchange = exchange(limit: 64)
        XCTAssertEqual(exchange.traceID, "r-4")
        XCTAssertEqual(exchange.receiveBody(Array("token=".utf8), now: .now(), redaction: redaction), .readMore)
        XCTAssertEqual(exchange.receiveBody(Array("abcdef".utf8), now: .now(), redaction: redaction), .readMore)
        let expected = MockRequest(head: head, body: Array("token=abcdef".utf8), clientCertificateSubject: "CN=alice")
        XCTAssertEqual(exchange.receiveEnd(trailers: nil, now: .now(), redaction: redaction),
                       .handle(expected, requestComplete: true))
        XCTAssertEqual(exchange.receiveEnd(trailers: nil, now: .now(), redaction: redaction), .ignore)
        let response = HTTPResponseHead(status: 200, version: .http2, fields: ["content-length": "2"])
        exchange.sentResponseHead(response, wire: .http2Response(response), storeLimit: 0, now: .now())
        exchange.sentResponseBody(Array("{}".utf8))
        let (request, answer) = exchange.finish(responseComplete: true, now: .now(), redaction: redaction)
        XCTAssertTrue(request.complete)
        XCTAssertEqual(request.digest.body.length, 12)
        XCTAssertEqual(answer?.status, 200)
        XCTAssertEqual(answer?.digest.body.length, 2)
        XCTAssertEqual(answer?.complete, true)
    }

    func testHandsOverAsSoonAsTheBodyPassesTheLimitSoTheServerAnswers413() {
        var exchange = exchange(limit: 8)
        XCTAssertEqual(exchange.receiveBody(Array("12345678".utf8), now: .now(), redaction: redaction), .readMore)
        guard case .handle(let request, let complete) = exchange.receiveBody(Array("9".utf8), now: .now(), redaction: redaction) else {
            return XCTFail("the ninth byte passes the limit")
        }
        XCTAssertFalse(complete)
        XCTAssertEqual(request.body.count, 9)
        var server = MockServer(configuration: MockServerConfiguration(externalOrigin: Origin(scheme: "https", host: "h.test"),
                                                                       maxRequestBodyBytes: 8))
        XCTAssertEqual(server.handle(request, now: Date()).head.status, 413)
        XCTAssertEqual(exchange.receiveBody(Array("more".utf8), now: .now(), redaction: redaction), .ignore)
        XCTAssertEqual(exchange.receiveEnd(trailers: nil, now: .now(), redaction: redaction), .ignore)
        let (recorded, response) = exchange.finish(responseComplete: false, now: .now(), redaction: redaction)
        XCTAssertFalse(recorded.complete)
        XCTAssertEqual(recorded.digest.body.length, 9)
        XCTAssertNil(response)
    }

    func testARequestThatNeverEndedIsRecordedIncomplete() {
        var exchange = exchange(limit: 64)
        XCTAssertEqual(exchange.receiveBody(Array("tok".utf8), now: .now(), redaction: redaction), .readMore)
        let (recorded, response) = exchange.finish(responseComplete: false, now: .now(), redaction: redaction)
        XCTAssertFalse(recorded.complete)
        XCTAssertEqual(recorded.digest.body.length, 3)
        XCTAssertEqual(recorded.method, "POST")
        XCTAssertNil(response)
    }
}
