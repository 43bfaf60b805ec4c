import HTTP
import AuthFlow
import XCTest
@testable import Faults

/// Matching, probability, `times`, seeds and connection rules.
final class FaultEngineTests: XCTestCase {
    /// Which of `count` identical exchanges the rule fired for.
    private func pattern(_ engine: FaultEngine, count: Int = 60, step: AuthStep = .other) -> [Bool] {
        (0..<count).map { _ in
            !Exchange(engine, step: step, request: Fixture.request("GET", "/suite/rest/a")).faults.applied.isEmpty
        }
    }

    private let halfTheTime = #"{"rules": [{"name": "p", "match": {"leg": "request", "probability": 0.5}, "actions": [{"action": "add-header", "name": "X", "value": "1"}]}]}"#

    func testProbabilityIsReproducibleWithASeed() {
        let a = pattern(Fixture.engine(halfTheTime, seed: 42))
        XCTAssertEqual(a, pattern(Fixture.engine(halfTheTime, seed: 42)))
        XCTAssertNotEqual(a, pattern(Fixture.engine(halfTheTime, seed: 43)))
        let fired = a.filter { $0 }.count
        XCTAssertTrue((15...45).contains(fired), "fired \(fired) of 60")
    }

    func testProbabilityBounds() {
        let never = halfTheTime.replacingOccurrences(of: "0.5", with: "0")
        let always = halfTheTime.replacingOccurrences(of: "0.5", with: "1")
        XCTAssertEqual(pattern(Fixture.engine(never)), Array(repeating: false, count: 60))
        XCTAssertEqual(pattern(Fixture.engine(always)), Array(repeating: true, count: 60))
    }

    func testARuleDrawsFromItsOwnStream() {
        let alone = pattern(Fixture.engine(halfTheTime, seed: 9))
        let withAnotherFirst = Fixture.engine("""
            {"rules": [{"name": "other", "match": {"leg": "request", "probability": 0.3}, "actions": [{"action": "add-header", "name": "Y", "value": "1"}]},
                       {"name": "p", "match": {"leg": "request", "probability": 0.5}, "actions": [{"action": "add-header", "name": "X", "value": "1"}]}]}
            """, seed: 9)
        let results = (0..<60).map { _ in Exchange(withAnotherFirst, request: Fixture.request("GET", "/")).faults.applied.map(\.rule) }
        XCTAssertEqual(results.map { $0.contains("p") }, alone)
        XCTAssertNotEqual(results.map { $0.contains("other") }, alone)
    }

    func testTimesCountsOnlyMatchingExchanges() {
        let engine = Fixture.engine(#"{"rules": [{"name": "t", "match": {"leg": "request", "step": "token-post", "times": 2}, "actions": [{"action": "close"}]}]}"#)
        XCTAssertEqual(pattern(engine, count: 3, step: .bootstrap), [false, false, false])
        XCTAssertEqual(pattern(engine, count: 4, step: .tokenPost), [true, true, false, false])
    }

    func testMatchCriteria() {
        let engine = Fixture.engine("""
            {"rules": [{"name": "m", "match": {"leg": "response", "step": ["challenge-401", "unauthenticated-request"], "method": ["get", "HEAD"],
              "path": "/suite/*/a", "present": ["Content-Type"], "absent": ["X-Seen"], "status": 401},
              "actions": [{"action": "add-header", "name": "Hit", "value": "1"}]}]}
            """)
        func hits(step: AuthStep = .challenge401, method: String = "GET", path: String = "/suite/rest/a?q=1",
                  status: Int = 401, fields: [(String, String)] = [("Content-Type", "application/json")]) -> Bool {
            let x = Exchange(engine, step: step, request: Fixture.request(method, path), response: Fixture.response(status, fields), responseBody: [])
            return !x.faults.applied.isEmpty
        }
        XCTAssertTrue(hits())
        XCTAssertTrue(hits(step: .unauthenticatedRequest, method: "head"))
        XCTAssertFalse(hits(step: .bootstrap))
        XCTAssertFalse(hits(method: "POST"))
        XCTAssertFalse(hits(path: "/suite/rest/x/a"), "* does not cross /")
        XCTAssertFalse(hits(status: 200))
        XCTAssertFalse(hits(fields: []))
        XCTAssertFalse(hits(fields: [("Content-Type", "a"), ("x-seen", "1")]))
    }

    func testGlobAndRegexPaths() {
        let request = Fixture.request("GET", "/suite/rest/a/b?codeChallenge=x")
        XCTAssertTrue(PathPattern.glob("/suite/**").matches(request))
        XCTAssertTrue(PathPattern.glob("/suite/rest/?/b").matches(request))
        XCTAssertFalse(PathPattern.glob("/suite/*").matches(request))
        XCTAssertFalse(PathPattern.glob("/suite/rest/a/b?codeChallenge=x").matches(request), "globs ignore the query")
        XCTAssertTrue(PathPattern.glob("/suite/rest/a/b").matches(request))
        XCTAssertTrue(PathPattern.glob("/suite/rest/a.b").matches(Fixture.request("GET", "/suite/rest/a.b")))
        XCTAssertFalse(PathPattern.glob("/suite/rest/a.b").matches(Fixture.request("GET", "/suite/rest/axb")), "dots are literal")
        XCTAssertTrue(PathPattern.regex(try! CompiledRegex("codeChallenge=")).matches(request))
    }

    func testConnectionRulesGiveTLSCommands() {
        let engine = Fixture.engine("""
            {"rules": [{"name": "cert", "match": {}, "actions": [{"action": "require-client-certificate", "caFile": "ca.pem"}]},
                       {"name": "untrusted", "match": {"times": 1}, "actions": [{"action": "unknown-ca-certificate"}]}]}
            """)
        let first = engine.beginConnection()
        XCTAssertEqual(first.tls, [.requireClientCertificate(caFile: "ca.pem"), .presentUnknownCA])
        XCTAssertEqual(first.applied.map(\.rule), ["cert", "untrusted"])
        XCTAssertNil(first.applied[0].leg)
        XCTAssertEqual(engine.beginConnection().tls, [.requireClientCertificate(caFile: "ca.pem")])
        // Connection rules never act on messages.
        XCTAssertEqual(Exchange(engine, request: Fixture.request("GET", "/")).faults.applied, [])
    }

    func testAppliedFaultsEncodeAsJSON() throws {
        let fault = AppliedFault(rule: "r", action: .removeSetCookie, leg: .response, change: "removed")
        let json = String(decoding: try JSONEncoder().encode(fault), as: UTF8.self)
        XCTAssertTrue(json.contains("\"action\":\"remove-set-cookie\""), json)
        XCTAssertTrue(json.contains("\"leg\":\"response\""), json)
        XCTAssertEqual(try JSONDecoder().decode(AppliedFault.self, from: Data(json.utf8)), fault)
    }

    func testSeededGeneratorIsDeterministicAndSpread() {
        var a = SeededGenerator(seed: 0), b = SeededGenerator(seed: 0), c = SeededGenerator(seed: 1)
        let xs = (0..<100).map { _ in a.next() }
        XCTAssertEqual(xs, (0..<100).map { _ in b.next() })
        XCTAssertNotEqual(xs, (0..<100).map { _ in c.next() })
        XCTAssertEqual(Set(xs).count, 100)
        var u = SeededGenerator(seed: 3)
        let units = (0..<1000).map { _ in u.nextUnit() }
        XCTAssertTrue(units.allSatisfy { $0 >= 0 && $0 < 1 })
        XCTAssertTrue((0.4...0.6).contains(units.reduce(0, +) / 1000))
    }
}
