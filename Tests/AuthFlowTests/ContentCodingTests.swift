import Compression
import Foundation
import HTTP
import XCTest
@testable import AuthFlow

/// "Compress when the app asks": the client asks for gzip by default, the
/// mock server gzips only when configured to, and the client tells the
/// server's encoding (stated in `Intact-Content-Encoding`) from one added on the way.
final class ContentCodingTests: XCTestCase {
    private func run(server: MockServer = Fixture.server(), flow: SignInFlow = Fixture.flow(),
                     onResponse: @escaping (FlowRequest, inout HTTPResponseHead, inout [UInt8]) -> Void = { _, _, _ in })
        -> (FlowOutcome, InMemoryDriver) {
        var driver = InMemoryDriver(server: server)
        driver.onResponse = onResponse
        var flow = flow
        return (driver.run(&flow), driver)
    }

    /// What an intermediary that compresses JSON answers does to one.
    private static func gzipOnTheWay(_ head: inout HTTPResponseHead, _ body: inout [UInt8]) {
        body = Compressor.compress(body, format: .gzip)
        head.fields.append("Content-Encoding", "gzip")
        head.fields.set("Content-Length", String(body.count))
    }

    func testEveryRequestCarriesAcceptEncodingAndUserAgentByDefault() {
        let (outcome, driver) = run()
        XCTAssertTrue(outcome.succeeded, "\(String(describing: outcome.diagnosis))")
        XCTAssertEqual(driver.sent.count, 5)
        for request in driver.sent {
            XCTAssertEqual(request.head.fields["Accept-Encoding"], "gzip", "\(request.step)")
            XCTAssertEqual(request.head.fields["User-Agent"], "Intact-Client/1 (mobile sign-in simulator)")
        }
        // By default the server answers unencoded whatever the client accepts.
        XCTAssertTrue(driver.serverLog.allSatisfy { $0.1.head.fields["Content-Encoding"] == nil })
    }

    func testServerThatGzipsIsDecodedAndPasses() throws {
        let (outcome, driver) = run(server: Fixture.server { $0.gzipsResponses = true })
        XCTAssertTrue(outcome.succeeded, "\(String(describing: outcome.diagnosis))")
        let challenge = try XCTUnwrap(driver.serverLog.first?.1)
        XCTAssertEqual(challenge.head.fields["Content-Encoding"], "gzip")
        XCTAssertEqual(challenge.head.fields[MockServer.contentEncodingFieldName], "gzip")
        XCTAssertEqual(challenge.head.fields["Content-Length"], String(challenge.body.count))
        XCTAssertEqual(Array(challenge.body.prefix(2)), [0x1F, 0x8B], "a gzip member")
        XCTAssertTrue(outcome.steps[0].checks.contains { $0.message == "body gzip-encoded by the server itself (Intact-Content-Encoding), decoded" })
    }

    func testServerThatGzipsDoesNotForAClientThatDoesNotAsk() {
        let flow = Fixture.flow { $0.requestFields = RequestFieldSetting.apply([RequestFieldSetting(parsing: "Accept-Encoding:")!],
                                                                              to: $0.requestFields) }
        let (outcome, driver) = run(server: Fixture.server { $0.gzipsResponses = true }, flow: flow)
        XCTAssertTrue(outcome.succeeded)
        XCTAssertTrue(driver.sent.allSatisfy { $0.head.fields["Accept-Encoding"] == nil })
        XCTAssertTrue(driver.serverLog.allSatisfy { $0.1.head.fields["Content-Encoding"] == nil })
    }

    func testGzipAddedOnTheWayWhenTheAppAsksIsCompress() {
        let (outcome, _) = run { request, head, body in
            if request.step == .tokenExchange { Self.gzipOnTheWay(&head, &body) }
        }
        XCTAssertEqual(outcome.diagnosis?.mode, .compress)
        XCTAssertEqual(outcome.diagnosis?.step, .tokenExchange)
        XCTAssertEqual(outcome.diagnosis?.evidence,
                       "response has Content-Encoding: gzip, which the app accepts, but the server sent its body unencoded "
                           + "(no Intact-Content-Encoding: gzip): it was compressed on the way")
    }

    func testGzipTheAppDidNotAskForIsCompress() {
        let flow = Fixture.flow { $0.requestFields = [] }
        let (outcome, _) = run(flow: flow) { request, head, body in
            if request.step == .protectedRequest { Self.gzipOnTheWay(&head, &body) }
        }
        XCTAssertEqual(outcome.diagnosis?.mode, .compress)
        XCTAssertEqual(outcome.diagnosis?.evidence, "response has Content-Encoding: gzip although the app asked for no encoding")
    }

    func testACodingTheAppDoesNotAcceptIsCompress() {
        let (outcome, _) = run { request, head, _ in
            if request.step == .protectedRequest { head.fields.append("Content-Encoding", "br") }
        }
        XCTAssertEqual(outcome.diagnosis?.mode, .compress)
        XCTAssertEqual(outcome.diagnosis?.evidence, "response has Content-Encoding: br although the app accepts only gzip")
    }

    func testAGzipBodyThatDoesNotDecodeIsCompress() {
        let (outcome, _) = run { request, head, _ in
            if request.step == .protectedRequest { head.fields.append("Content-Encoding", "gzip") }
        }
        XCTAssertEqual(outcome.diagnosis?.mode, .compress)
        XCTAssertTrue(outcome.diagnosis?.evidence.hasPrefix("response has Content-Encoding: gzip but its body does not decode: ") ?? false)
    }

    /// Against a server that says nothing (no echo, no statement), who encoded
    /// the answer cannot be told: the client decodes it and says so.
    func testWithoutEvidenceTheClientDecodesAndNotes() {
        let server = Fixture.server { $0.echoesTraceField = false }
        let flow = Fixture.flow { $0.expectsTraceEcho = false }
        let (outcome, _) = run(server: server, flow: flow) { request, head, body in
            if request.step == .protectedRequest { Self.gzipOnTheWay(&head, &body) }
        }
        XCTAssertTrue(outcome.succeeded, "\(String(describing: outcome.diagnosis))")
        XCTAssertTrue(outcome.steps[0].checks.contains {
            $0.kind == .note && $0.message.hasPrefix("body gzip-encoded, as the app accepts, and decoded; who encoded it cannot be told")
        })
    }

    func testAcceptsGzip() {
        let cases: [(String?, Bool)] = [("gzip", true), ("br, GZIP;q=0.5", true), ("*", true), ("gzip;q=0", false),
                                        ("br, deflate", false), (nil, false)]
        for (value, accepts) in cases {
            XCTAssertEqual(MockServer.acceptsGzip(value), accepts, value ?? "no Accept-Encoding")
        }
    }

    // MARK: Request field settings

    func testRequestFieldSettingsReplaceAddAndRemove() throws {
        let defaults = SignInFlow.Configuration.defaultRequestFields
        let settings = try ["accept-encoding: gzip, br", "User-Agent:", "X-App: 1"].map { try XCTUnwrap(RequestFieldSetting(parsing: $0)) }
        XCTAssertEqual(RequestFieldSetting.apply(settings, to: defaults),
                       [HTTPField(name: "accept-encoding", value: "gzip, br"), HTTPField(name: "X-App", value: "1")])
        XCTAssertEqual(settings[1].value, nil)
        XCTAssertEqual(settings[0].description, "accept-encoding: gzip, br")
    }

    func testBadRequestFieldSettingsAreRefused() {
        for text in ["no colon", ": value", "Bad Name: x", "Host: other", "Cookie: a=b", "intact-trace: x",
                     "Content-Length: 3", "X-A: a\r\nX-B: b"] {
            XCTAssertNil(RequestFieldSetting(parsing: text), text)
        }
    }
}
