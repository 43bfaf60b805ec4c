import XCTest
import Evidence

/// The `--json` document: its schema name, its key names and values (the
/// documented contract in Docs/verify-json.md), and a lossless round trip.
final class ReportJSONTests: XCTestCase {
    private func object(_ report: VerificationReport) throws -> [String: Any] {
        try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(report.jsonBytes())) as? [String: Any])
    }

    func testRoundTripsLosslessly() throws {
        let report = try ReportSamples.report()
        XCTAssertEqual(try VerificationReport.decode(json: report.jsonBytes()), report)
    }

    func testDocumentedKeysAndValues() throws {
        let json = try object(try ReportSamples.report())
        XCTAssertEqual(json["schema"] as? String, "intact-verify/2")
        XCTAssertEqual(Set(json.keys), ["schema", "policy", "recordings", "path", "exchanges", "intermediaryRequests",
                                        "connections", "summary", "problems", "warnings", "policyHolds"])
        XCTAssertEqual(json["policyHolds"] as? Bool, false)
        let policy = try XCTUnwrap(json["policy"] as? [String: Any])
        XCTAssertEqual(policy["tolerations"] as? [String], ["field via added in requests (LB)"])

        let path = try XCTUnwrap(json["path"] as? [String: Any])
        XCTAssertEqual(path["source"] as? String, "recordings")
        let hops = try XCTUnwrap(path["hops"] as? [[String: Any]])
        XCTAssertEqual(hops.map { $0["kind"] as? String }, ["network", "inside", "network"])
        XCTAssertEqual((hops[1]["from"] as? [String: Any])?["leg"] as? String, "downstream")
        let taps = try XCTUnwrap(path["taps"] as? [[String: Any]])
        XCTAssertEqual(taps.map { $0["kind"] as? String }, ["client", "intermediary", "server"])

        let exchanges = try XCTUnwrap(json["exchanges"] as? [[String: Any]])
        XCTAssertEqual(exchanges.map { $0["verdict"] as? String },
                       ["equivalent", "tolerated", "modified", "broken", "foreign", "missing"])
        let third = try XCTUnwrap(exchanges[2]["hops"] as? [[String: Any]])
        XCTAssertEqual(third.map { $0["pairing"] as? String }, ["trace", "same-record", "trace"])
        let response = try XCTUnwrap(third[1]["response"] as? [String: Any])
        XCTAssertEqual(response["outcome"] as? String, "modified")
        let difference = try XCTUnwrap((response["differences"] as? [[String: Any]])?.first)
        XCTAssertEqual(difference["kind"] as? String, "field-removed")
        XCTAssertEqual(difference["field"] as? String, "set-cookie")
        XCTAssertEqual(difference["text"] as? String, "JSESSIONID removed")
        XCTAssertEqual((third[1]["injected"] as? [[String: Any]])?.first?["name"] as? String, "strip-set-cookie")

        let broken = try XCTUnwrap((exchanges[3]["hops"] as? [[String: Any]])?[2]["failures"] as? [[String: Any]])
        XCTAssertEqual(broken.first?["where"] as? String, "upstream response head")
        XCTAssertEqual(broken.first?["kind"] as? String, "reset")

        let second = try XCTUnwrap(exchanges[1]["hops"] as? [[String: Any]])
        let tolerated = try XCTUnwrap(((second[1]["request"] as? [String: Any])?["differences"] as? [[String: Any]])?.first)
        XCTAssertEqual(tolerated["toleratedBy"] as? String, "field via added in requests (LB)")
        XCTAssertEqual(second[0]["pairing"] as? String, "inferred")

        let first = try XCTUnwrap(exchanges[0]["hops"] as? [[String: Any]])
        let reasons = try XCTUnwrap((first[1]["request"] as? [String: Any])?["reasons"] as? [[String: Any]])
        XCTAssertEqual(reasons.compactMap { $0["kind"] as? String }, ["version", "field-name-case", "host", "cookie-crumbs"])

        let foreign = try XCTUnwrap(exchanges[4]["hops"] as? [[String: Any]])
        XCTAssertEqual(foreign[2]["verdict"] as? String, "not-reached")
        XCTAssertEqual(((foreign[1]["response"] as? [String: Any])?["after"] as? [String: Any])?["status"] as? Int, 503)

        let summary = try XCTUnwrap(json["summary"] as? [String: Any])
        XCTAssertEqual(summary["verdicts"] as? [String: Int], ["identical": 7, "equivalent": 1, "tolerated": 1, "modified": 1,
                                                                "missing": 1, "foreign": 1, "broken": 3])
        XCTAssertEqual(summary["failingExchanges"] as? Int, 4)
        XCTAssertEqual(summary["inferredPairings"] as? Int, 2)
        XCTAssertEqual(summary["injectedHops"] as? Int, 1)
    }

    func testOutputIsStableAcrossRuns() throws {
        XCTAssertEqual(try ReportSamples.report().jsonBytes(), try ReportSamples.report().jsonBytes())
    }
}
