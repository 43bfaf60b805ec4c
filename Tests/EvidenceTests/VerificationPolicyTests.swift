import ConfigurationFile
import Evidence
import Foundation
import XCTest

final class VerificationPolicyTests: XCTestCase {
    /// Examples/policies in this checkout.
    private static let examples = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Examples/policies")

    private func decode(_ text: String) throws -> VerificationPolicy {
        try VerificationPolicy.decode(Data(text.utf8), path: "p.json")
    }

    /// `reason` is the error's description: "p.json:LINE:COLUMN: at PATH: message".
    private func assertRejected(_ text: String, _ reason: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try decode(text), file: file, line: line) { error in
            XCTAssertEqual((error as? ConfigurationError)?.description, reason, file: file, line: line)
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
        assertRejected("{\n  \"name\": \"p\",\n  \"intermediaryRequests\": \"deny\"\n}",
                       "p.json:3:27: at intermediaryRequests: unknown value \"deny\" (expected \"allow\", \"forbid\" "
                       + "or a list of allowed paths such as [\"/health\"])")
        assertRejected(#"{"intermediaryRequests": ["health"]}"#,
                       "p.json:1:26: at intermediaryRequests: a list must hold paths starting with \"/\" (expected \"allow\", "
                       + "\"forbid\" or a list of allowed paths such as [\"/health\"])")
        assertRejected(#"{"intermediaryRequests": true}"#,
                       "p.json:1:26: at intermediaryRequests: expected \"allow\", \"forbid\" or a list of allowed paths "
                       + "such as [\"/health\"], found a boolean")
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

    func testBadPolicyFilesNameTheFileLineColumnAndProblem() {
        assertRejected("not json", "p.json:1:2: not valid JSON: expected null, found 'o'")
        assertRejected("[]", "p.json:1:1: expected an object, found an array")
        assertRejected(#"{"tolerate":[], "tolerance":1}"#,
                       "p.json:1:17: unknown field \"tolerance\" (allowed: name, description, tolerate, intermediaryRequests)")
        assertRejected(#"{"tolerate":{"field":"Via"}}"#, "p.json:1:13: at tolerate: expected an array, found an object")
        assertRejected("{\"tolerate\":[\n  {\"field\":\"Via\",\"change\":[\"added\"]}]}",
                       "p.json:2:18: at tolerate[0]: unknown field \"change\" (allowed: field, cookie, changes, message, reason)")
        assertRejected(#"{"tolerate":[{"field":"Via","cookie":"a"}]}"#,
                       "p.json:1:14: at tolerate[0]: give exactly one of \"field\" or \"cookie\"")
        assertRejected(#"{"tolerate":[{"reason":"x"}]}"#, "p.json:1:14: at tolerate[0]: give exactly one of \"field\" or \"cookie\"")
        assertRejected(#"{"tolerate":[{"field":"Bad Name"}]}"#,
                       "p.json:1:23: at tolerate[0].field: \"Bad Name\" is not a field name")
        assertRejected(#"{"tolerate":[{"cookie":"a=b"}]}"#, "p.json:1:24: at tolerate[0].cookie: \"a=b\" is not a cookie name")
        assertRejected(#"{"tolerate":[{"field":"Via","changes":["added","moved"]}]}"#,
                       "p.json:1:39: at tolerate[0].changes: unknown value \"moved\" (one of: added, removed, changed)")
        assertRejected(#"{"tolerate":[{"field":"Via","changes":[]}]}"#,
                       "p.json:1:39: at tolerate[0].changes: expected at least one of added, removed, changed")
        assertRejected(#"{"tolerate":[{"field":"Via","message":"both"}]}"#,
                       "p.json:1:39: at tolerate[0].message: unknown value \"both\" (one of: request, response)")
        assertRejected(#"{"name":3}"#, "p.json:1:9: at name: expected a string, found a number")
    }

    func testUnreadableFile() {
        XCTAssertThrowsError(try VerificationPolicy.load(path: "/nonexistent/policy.json")) { error in
            XCTAssertTrue("\(error)".hasPrefix("/nonexistent/policy.json: cannot read: "), "\(error)")
        }
    }
}
