import Foundation
import XCTest
import Evidence

final class VerificationPolicyTests: XCTestCase {
    /// Examples/policies in this checkout.
    private static let examples = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Examples/policies")

    private func decode(_ text: String) throws -> VerificationPolicy {
        try VerificationPolicy.decode(Data(text.utf8), path: "p.json")
    }

    private func assertRejected(_ text: String, _ reason: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try decode(text), file: file, line: line) { error in
            XCTAssertEqual(error as? PolicyError, PolicyError(path: "p.json", reason: reason), file: file, line: line)
        }
    }

    func testExamplePoliciesLoad() throws {
        let strict = try VerificationPolicy.load(path: Self.examples.appendingPathComponent("strict.json").path)
        XCTAssertEqual(strict.name, "strict")
        XCTAssertEqual(strict.tolerations, [])
        let lb = try VerificationPolicy.load(path: Self.examples.appendingPathComponent("load-balancer.json").path)
        XCTAssertEqual(lb.name, "load-balancer")
        XCTAssertEqual(lb.tolerations, [
            Toleration(.field("via"), changes: [.added, .changed], reason: "the load balancer announces itself"),
            Toleration(.field("x-forwarded-for"), changes: [.added, .changed], message: .request, reason: "client address"),
            Toleration(.field("x-forwarded-proto"), message: .request, reason: "original scheme"),
            Toleration(.cookie("SERVERID"), changes: [.added, .removed, .changed],
                       reason: "HAProxy affinity cookie (cookie SERVERID insert indirect)"),
            Toleration(.cookie("route"), changes: [.added, .removed, .changed], reason: "nginx sticky route cookie"),
            Toleration(.cookie("srv_id"), changes: [.added, .removed, .changed], reason: "nginx sticky cookie srv_id"),
            Toleration(.cookie("AWSALB*"), changes: [.added, .removed, .changed],
                       reason: "AWS load balancer stickiness cookies (AWSALB, AWSALBCORS, AWSALBTG, AWSALBTGCORS)"),
        ])
        XCTAssertEqual(lb.intermediaryRequests, .allow)
    }

    func testIntermediaryRequestsRule() throws {
        XCTAssertEqual(try decode("{}").intermediaryRequests, .allow, "strict allows the load balancer's own requests")
        XCTAssertEqual(try decode(#"{"intermediaryRequests": "forbid"}"#).intermediaryRequests, .forbid)
        let paths = try decode(#"{"intermediaryRequests": ["/health", "/ping"]}"#).intermediaryRequests
        XCTAssertEqual(paths, .paths(["/health", "/ping"]))
        XCTAssertTrue(paths.allows(target: "/health?full=1"))
        XCTAssertFalse(paths.allows(target: "/suite/rest/a"))
        XCTAssertEqual(paths.description, "allowed to /health, /ping only")
    }

    func testUnknownIntermediaryRequestsValueNamesLineAndAllowedValues() {
        let text = "{\n  \"name\": \"p\",\n  \"intermediaryRequests\": \"deny\"\n}"
        XCTAssertThrowsError(try decode(text)) { error in
            XCTAssertEqual(error as? PolicyError, PolicyError(path: "p.json", line: 3, reason:
                "intermediaryRequests: unknown value \"deny\" (expected \"allow\", \"forbid\" or a list of allowed paths such as [\"/health\"])"))
            XCTAssertTrue("\(error)".hasPrefix("p.json:3: policy: intermediaryRequests: unknown value \"deny\""), "\(error)")
        }
        XCTAssertThrowsError(try decode(#"{"intermediaryRequests": ["health"]}"#)) { error in
            XCTAssertTrue("\(error)".contains("a list must hold paths starting with \"/\""), "\(error)")
        }
        XCTAssertThrowsError(try decode(#"{"intermediaryRequests": true}"#)) { error in
            XCTAssertTrue("\(error)".contains("p.json:1: policy: intermediaryRequests: expected"), "\(error)")
        }
    }

    func testCookiePatternNamesEveryCookieWithThePrefix() {
        XCTAssertTrue(Toleration.Subject.cookie("AWSALB*").names(cookie: "AWSALBCORS"))
        XCTAssertTrue(Toleration.Subject.cookie("SERVERID").names(cookie: "SERVERID"))
        XCTAssertFalse(Toleration.Subject.cookie("SERVERID").names(cookie: "SERVERID2"))
        XCTAssertFalse(Toleration.Subject.field("serverid").names(cookie: "SERVERID"))
    }

    func testDefaultsAndDescriptions() throws {
        let policy = try decode(#"{"tolerate":[{"field":"VIA"}]}"#)
        XCTAssertEqual(policy.name, "p", "the name defaults to the file name")
        XCTAssertEqual(policy.tolerations, [Toleration(.field("via"))])
        XCTAssertEqual(policy.tolerations[0].description, "field via added")
        XCTAssertEqual(Toleration(.cookie("SERVERID"), changes: [.changed, .added], message: .response, reason: "affinity").description,
                       "cookie SERVERID added or changed in responses (affinity)")
        XCTAssertEqual(try decode("{}").tolerations, [])
        XCTAssertEqual(VerificationPolicy.strict.tolerations, [])
    }

    func testBadPolicyFilesNameTheProblem() {
        assertRejected("not json", "not JSON")
        assertRejected("[]", "the top level: expected an object")
        assertRejected(#"{"tolerate":[], "tolerance":1}"#, "the top level: unknown key \"tolerance\" (expected description, intermediaryRequests, name, tolerate)")
        assertRejected(#"{"tolerate":{"field":"Via"}}"#, "tolerate: expected a list of rules")
        assertRejected(#"{"tolerate":[{"field":"Via","change":["added"]}]}"#,
                       "tolerate[0]: unknown key \"change\" (expected changes, cookie, field, message, reason)")
        assertRejected(#"{"tolerate":[{"field":"Via","cookie":"a"}]}"#, "tolerate[0]: give exactly one of \"field\" or \"cookie\"")
        assertRejected(#"{"tolerate":[{"reason":"x"}]}"#, "tolerate[0]: give exactly one of \"field\" or \"cookie\"")
        assertRejected(#"{"tolerate":[{"field":"Bad Name"}]}"#, "tolerate[0].field: \"Bad Name\" is not a field name")
        assertRejected(#"{"tolerate":[{"cookie":"a=b"}]}"#, "tolerate[0].cookie: \"a=b\" is not a cookie name")
        assertRejected(#"{"tolerate":[{"field":"Via","changes":["added","moved"]}]}"#,
                       "tolerate[0].changes: unknown change \"moved\" (expected added, removed or changed)")
        assertRejected(#"{"tolerate":[{"field":"Via","changes":[]}]}"#,
                       "tolerate[0].changes: expected a non-empty list of \"added\", \"removed\", \"changed\"")
        assertRejected(#"{"tolerate":[{"field":"Via","message":"both"}]}"#,
                       "tolerate[0].message: expected \"request\" or \"response\", found \"both\"")
        assertRejected(#"{"name":3}"#, "name: expected a string")
    }

    func testUnreadableFile() {
        XCTAssertThrowsError(try VerificationPolicy.load(path: "/nonexistent/policy.json")) { error in
            XCTAssertTrue("\(error)".hasPrefix("/nonexistent/policy.json: policy: cannot read"), "\(error)")
        }
    }
}
