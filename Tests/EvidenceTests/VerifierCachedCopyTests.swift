import XCTest
import Evidence
import HTTP

/// A cache between the taps serves exchange 2 the server's stored answer to
/// exchange 1: the copy is named, with its age, and a session it carries is
/// a warning. Path: client → proxy-a → (cache) → proxy-b → server.
final class VerifierCachedCopyTests: XCTestCase {
    private typealias S = VerificationScenario

    /// Exchange 1 reaches the server; exchange 2 (`second`) is answered by the cache with exchange 1's response,
    /// echo included; `setCookie` puts a session on that response.
    private func cached(_ second: S.Exchange, setCookie: Bool = false) throws -> VerificationReport {
        let first = S.exchange("/suite/rest/protected", trace: "t1", responseFields: [("Intact-Trace", "t1")]
                                 + (setCookie ? [("Set-Cookie", "JSESSIONID=abc; Path=/suite")] : []))
        var scenario = S([first, second])
        scenario.taps = [("client", .client), ("proxy-a", .intermediary), ("proxy-b", .intermediary), ("server", .server)]
        scenario.alter = { place, view in
            guard place.exchange == 1 else { return }
            if place.tap == "proxy-b" || place.tap == "server" { view.request = nil; view.response = nil; return }
            view.response = first.response
            view.responseBody = first.responseBody
        }
        return try Verifier().verify(scenario.recordings())
    }

    func testACachedAnswerIsNamedAsACopyOfTheOtherExchange() throws {
        let report = try cached(S.exchange("/suite/rest/protected", trace: "t2"))
        let hop = report.exchanges[1].hops[2]
        XCTAssertEqual(hop.verdict, .foreign, "still not the server's answer to this request")
        let copy = try XCTUnwrap(hop.response.cachedCopy)
        XCTAssertEqual(copy.exchange, 1)
        XCTAssertEqual(copy.traceID, "t1")
        XCTAssertEqual(copy.earlierBy, 1000)
        XCTAssertFalse(copy.carriesSession)
        XCTAssertEqual(copy.text, "a copy of the server's answer to exchange 1 (another request, 1.0 s earlier), served by "
                       + "the intermediary: a cached response")
        let text = TextReport.render(report)
        XCTAssertTrue(text.contains("hop 3 response foreign: a copy of the server's answer to exchange 1"), text)
        let json = try JSONSerialization.jsonObject(with: Data(report.jsonBytes())) as? [String: Any]
        let hops = (json?["exchanges"] as? [[String: Any]])?[1]["hops"] as? [[String: Any]]
        let response = hops?[2]["response"] as? [String: Any]
        XCTAssertEqual((response?["cachedCopy"] as? [String: Any])?["exchange"] as? Int, 1)
        XCTAssertEqual(try VerificationReport.decode(json: report.jsonBytes()), report)
        XCTAssertNil(report.exchanges[0].hops[2].response.cachedCopy, "the original is the server's own")
    }

    func testACopyCarryingASessionIsAWarning() throws {
        let report = try cached(S.exchange("/suite/rest/protected", trace: "t2"), setCookie: true)
        let copy = try XCTUnwrap(report.exchanges[1].hops[2].response.cachedCopy)
        XCTAssertTrue(copy.carriesSession)
        XCTAssertTrue(copy.text.contains("WARNING: the copy carries a session"), copy.text)
    }

    func testACopyReplayedToAnotherMethodOrPathIsStillACopy() throws {
        let report = try cached(S.exchange("/suite/rest/other", trace: "t2", method: "POST"))
        let copy = try XCTUnwrap(report.exchanges[1].hops[2].response.cachedCopy)
        XCTAssertTrue(copy.otherResource)
        XCTAssertTrue(copy.text.hasPrefix("a copy of the server's answer to exchange 1 (another request, GET /suite/rest/protected, "),
                      copy.text)
    }
}
