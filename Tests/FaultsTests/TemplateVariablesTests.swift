import HTTP
import XCTest
@testable import Faults

/// `${authority}` and `${target}`: the request's own values in a rule's
/// templates, so a rule can write an absolute URL with the run's port.
final class TemplateVariablesTests: XCTestCase {
    private let variables = TemplateVariables(authority: "intact-hsts.test:4$43", target: "/suite?a=1")

    func testExpansion() {
        XCTAssertEqual(variables.expand("http://${authority}${target}", forRegexTemplate: false), "http://intact-hsts.test:4$43/suite?a=1")
        XCTAssertEqual(variables.expand(#"\${authority} ${nothing} ${"#, forRegexTemplate: false), "${authority} ${nothing} ${",
                       "\\${ is a literal ${; an unknown name stays as written")
        // For a regex template the value's $ and \ are escaped so the engine copies them; \${ is left for it.
        XCTAssertEqual(variables.expand(#"$1 ${authority} \${authority}"#, forRegexTemplate: true), #"$1 intact-hsts.test:4\$43 \${authority}"#)
    }

    func testUnknownVariablesAreFound() {
        XCTAssertNil(TemplateVariables.unknownVariable(in: #"http://${authority}${target} \${x}"#))
        XCTAssertEqual(TemplateVariables.unknownVariable(in: "http://${host}/"), "${host}")
        XCTAssertEqual(TemplateVariables.unknownVariable(in: "http://${authority"), "${authority")
    }

    func testARegexBodyTemplateAndASetStatusLocationWriteTheRequestsValues() throws {
        let engine = Fixture.engine(#"""
            {"rules": [{"name": "http", "match": {"leg": "response"}, "actions": [
              {"action": "regex-body", "pattern": "action=\"/", "template": "action=\"http://${authority}/"},
              {"action": "set-status", "status": 302, "location": "http://${authority}${target}"}]}]}
            """#)
        let (head, body) = Fixture.response(200, [("Content-Type", "text/html")], body: #"<form action="/suite/auth">"#)
        let x = Exchange(engine, request: Fixture.request("GET", "/suite?codeChallenge=C"), response: head, responseBody: body)
        let sent: HTTPResponseHead = try XCTUnwrap(x.responseOut.forwardedHead())
        XCTAssertEqual(sent.status, 302)
        XCTAssertEqual(sent.fields["Location"], "http://app.example.test/suite?codeChallenge=C")
        XCTAssertEqual(x.responseOut.forwardedText(), #"<form action="http://app.example.test/suite/auth">"#)
    }

    func testAnUnknownVariableIsARuleError() throws {
        for (action, field) in [(#"{"action": "regex-body", "pattern": "a", "template": "${host}"}"#, "template"),
                                (#"{"action": "set-status", "status": 302, "location": "http://${host}/"}"#, "location")] {
            do {
                _ = try FaultRuleFile.parse(Array(#"{"rules": [{"name": "r", "match": {"leg": "response"}, "actions": [\#(action)]}]}"#.utf8))
                XCTFail("\(action) parsed")
            } catch {
                XCTAssertTrue("\(error)".contains("\(field) holds ${host}, which names no variable: ${authority} and ${target} are the variables"),
                              "\(error)")
            }
        }
    }
}
