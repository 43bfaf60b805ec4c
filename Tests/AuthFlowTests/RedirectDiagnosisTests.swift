import HTTP
import XCTest
@testable import AuthFlow

/// A redirect instead of the step-3 401: the server's 401 made into one
/// (auth-redirect), or a gateway answering in the server's place (gateway-cookie).
final class RedirectDiagnosisTests: XCTestCase {
    private func diagnosis(traceEcho: Bool, _ answer: @escaping (FlowRequest) -> InMemoryDriver.Interception) -> Diagnosis? {
        var driver = InMemoryDriver(server: Fixture.server())
        driver.onRequest = { request, _ in request.step == .protectedRequest ? answer(request) : .forward }
        var flow = Fixture.flow { $0.expectsTraceEcho = traceEcho }
        return driver.run(&flow).diagnosis
    }

    func testAGatewayRedirectWithoutTheServersTraceEchoIsGatewayCookie() throws {
        let d = try XCTUnwrap(diagnosis(traceEcho: true) { _ in
            .answer(HTTPResponseHead(status: 302, fields: ["Location": "https://gw.test/login"]), [])
        })
        XCTAssertEqual(d.mode, .gatewayCookie)
        XCTAssertEqual(d.quote, DocumentSentence.noAuthenticationCookies.text)
        XCTAssertTrue(d.evidence.contains("the server never saw the request"), d.evidence)
    }

    func testTheSameRedirectCarryingTheEchoIsAuthRedirect() throws {
        let d = try XCTUnwrap(diagnosis(traceEcho: true) { request in
            .answer(HTTPResponseHead(status: 302, fields: ["Location": "https://gw.test/login",
                                                          SignInFlow.traceFieldName: request.traceID ?? ""]), [])
        })
        XCTAssertEqual(d.mode, .authRedirect)
    }

    func testWithoutATraceEchoToExpectARedirectIsAuthRedirect() throws {
        let d = try XCTUnwrap(diagnosis(traceEcho: false) { _ in
            .answer(HTTPResponseHead(status: 302, fields: ["Location": "https://gw.test/login"]), [])
        })
        XCTAssertEqual(d.mode, .authRedirect, "against a real server nothing tells a gateway's redirect from a rewritten 401")
    }
}
