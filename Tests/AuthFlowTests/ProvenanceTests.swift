import Foundation
import HTTP
import XCTest
@testable import AuthFlow

/// The client decides who answered from evidence (the trace echo, the
/// server's identity), never from the status, at every step; and names
/// Set-Cookie changes part by part.
final class ProvenanceTests: XCTestCase {
    private func run(_ configure: (inout InMemoryDriver) -> Void) -> FlowOutcome {
        var driver = InMemoryDriver(server: Fixture.server())
        configure(&driver)
        var flow = Fixture.flow()
        return driver.run(&flow)
    }

    func testTheServers401ArrivingAs403IsAModifiedResponseNotAForeignOne() {
        let outcome = run { driver in
            driver.onResponse = { request, head, _ in if request.step == .protectedRequest { head.status = 403 } }
        }
        XCTAssertEqual(outcome.diagnosis?.mode, .modifiedResponse)
        XCTAssertEqual(outcome.diagnosis?.step, .protectedRequest)
        XCTAssertEqual(outcome.diagnosis?.evidence, "the server's 401 challenge (its JSON with contextUrl and tokenUrl, "
                       + "Intact-Trace echoed) arrived as 403: its status was rewritten on the way")
        XCTAssertEqual(outcome.diagnosis?.sentence, .step4Keys)
    }

    func testAnIntermediarysOwnPageAtALaterStepIsForeignAndNamesIt() {
        // HAProxy answers the credentials POST itself with its built-in 413 page: no trace echo.
        let outcome = run { driver in
            driver.onResponse = { request, head, body in
                guard request.step == .credentials else { return }
                head = HTTPResponseHead(status: 413, fields: ["Content-Type": "text/html", "Content-Length": "0"])
                body = Array("<html><body><h1>413 Payload Too Large</h1>\nThe request entity is too large.\n</body></html>\n".utf8)
            }
        }
        XCTAssertEqual(outcome.diagnosis?.mode, .foreignResponse, outcome.diagnosis?.evidence ?? "")
        XCTAssertEqual(outcome.diagnosis?.step, .credentials)
        XCTAssertTrue(outcome.diagnosis?.evidence.contains("without the echo of Intact-Trace: run1-3; the server did not send "
                                                           + "it; it came from HAProxy (its built-in error page)") ?? false,
                      outcome.diagnosis?.evidence ?? "")
    }

    func testAnotherServerFieldNamesWhatAnswered() {
        let outcome = run { driver in
            driver.onResponse = { request, head, body in
                guard request.step == .tokenExchange else { return }
                head = HTTPResponseHead(status: 502, fields: ["Server": "nginx/1.22.1", "Content-Type": "text/html"])
                let page = "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center>"
                    + "<hr><center>nginx/1.22.1</center></body></html>"
                body = Array(page.utf8)
            }
        }
        XCTAssertEqual(outcome.diagnosis?.mode, .foreignResponse)
        XCTAssertTrue(outcome.diagnosis?.evidence.hasSuffix("it came from nginx/1.22.1 (its Server field)") ?? false,
                      outcome.diagnosis?.evidence ?? "")
    }

    func testAnAddedCookieAttributeIsNamedAndTheAttributesAreNotCalledIntact() {
        let outcome = run { driver in
            driver.onResponse = { request, head, _ in
                guard request.step == .tokenExchange else { return }
                head.fields.mapInPlace { field in
                    if field.lowercasedName == "set-cookie" && field.value.hasPrefix("JSESSIONID=") { field.value += "; SameSite=None" }
                }
            }
        }
        XCTAssertTrue(outcome.succeeded, outcome.diagnosis?.evidence ?? "")
        let checks = outcome.steps.first { $0.step == .tokenExchange }?.checks.map(\.message) ?? []
        XCTAssertTrue(checks.contains("JSESSIONID: attribute SameSite=None added (not an attribute the server sets)"), "\(checks)")
        XCTAssertTrue(checks.contains { $0.hasSuffix("required attributes present") }, "\(checks)")
        XCTAssertFalse(checks.contains { $0.contains("attributes intact") }, "\(checks)")
    }

    func testUntouchedCookiesAreIntact() {
        let outcome = run { _ in }
        let checks = outcome.steps.first { $0.step == .tokenExchange }?.checks.map(\.message) ?? []
        XCTAssertTrue(checks.contains { $0.hasSuffix("attributes intact") }, "\(checks)")
    }
}
