import Foundation
import HTTP
import XCTest
@testable import AuthFlow

/// Answers an intermediary made itself, diagnosed from what they carry:
/// Squid's error pages.
final class IntermediaryAnswerTests: XCTestCase {
    private func run(flow: SignInFlow = Fixture.flow(), _ configure: (inout InMemoryDriver) -> Void) -> FlowOutcome {
        var driver = InMemoryDriver(server: Fixture.server())
        configure(&driver)
        var flow = flow
        return driver.run(&flow)
    }

    // MARK: Squid

    /// Squid 5.7's page when ssl-bump cannot shake hands with the server (as seen on loopback in front of a
    /// server requiring a client certificate over TLS 1.2), trimmed.
    private static let squidPage = """
        <html><head><title>ERROR: The requested URL could not be retrieved</title></head><body>
        <p><b>Failed to establish a secure connection to [unknown]</b></p>
        <p>The system returned:</p>
        <blockquote id="data">
        <pre>[No Error] (TLS code: SQUID_TLS_ERR_CONNECT+TLS_LIB_ERR=A000410+TLS_IO_ERR=1)</pre>
        <p>Failed to establish a secure connection: error:0A000410:SSL routines::sslv3 alert handshake failure</p>
        </blockquote></body></html>
        """

    private func squid(_ error: String, holdsCertificate: Bool) -> Diagnosis? {
        run(flow: Fixture.flow { $0.holdsClientCertificate = holdsCertificate }) { driver in
            driver.onRequest = { _, _ in
                .answer(HTTPResponseHead(status: 503, fields: ["Server": "squid/5.7", "Content-Type": "text/html;charset=utf-8",
                                                               "X-Squid-Error": error]),
                        Array(Self.squidPage.utf8))
            }
        }.diagnosis
    }

    func testATLSInspectingSquidInFrontOfACertificateGatewayNamesTheCertificateThatCannotCross() throws {
        let d = try XCTUnwrap(squid("ERR_SECURE_CONNECT_FAIL 0", holdsCertificate: true))
        XCTAssertEqual(d.mode, .clientCertRequired)
        XCTAssertEqual(d.evidence, "foreign 503 from squid/5.7, not from the server (X-Squid-Error: ERR_SECURE_CONNECT_FAIL 0: "
                       + "\"Failed to establish a secure connection: error:0A000410:SSL routines::sslv3 alert handshake failure\"); "
                       + "behind it the gateway refused a TLS handshake, for want of a client certificate: a TLS-inspecting proxy "
                       + "terminates the app's TLS and cannot carry the app's certificate (this client holds one)")
        XCTAssertTrue(d.advice.contains("ssl_bump splice"), d.advice)
        XCTAssertFalse(d.advice.contains("Import the client certificate"), "the client has one: \(d.advice)")
        // TLS 1.3: the gateway's refusal comes after the handshake, and Squid sees an empty answer.
        XCTAssertEqual(squid("ERR_ZERO_SIZE_OBJECT 0", holdsCertificate: true)?.mode, .clientCertRequired)
    }

    func testSquidsOtherErrorsAreNamedAsItsOwnAnswers() {
        let noCertificate = squid("ERR_SECURE_CONNECT_FAIL 0", holdsCertificate: false)
        XCTAssertEqual(noCertificate?.mode, .transportFailure)
        XCTAssertEqual(noCertificate?.evidence.hasSuffix("its own TLS connection to the server failed"), true)
        XCTAssertEqual(squid("ERR_CONNECT_FAIL 111", holdsCertificate: false)?.mode, .transportFailure)
        let denied = squid("ERR_ACCESS_DENIED 0", holdsCertificate: false)
        XCTAssertEqual(denied?.mode, .foreignResponse)
        XCTAssertEqual(denied?.evidence.hasPrefix("foreign 503 from squid/5.7, not from the server (X-Squid-Error: ERR_ACCESS_DENIED 0"), true)
        // A field that is not Squid's code is no evidence.
        XCTAssertNotEqual(squid("nonsense", holdsCertificate: true)?.mode, .clientCertRequired)
    }
}
