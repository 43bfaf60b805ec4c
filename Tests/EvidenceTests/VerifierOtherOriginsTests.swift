import XCTest
import Evidence
import HTTP

/// A forward tap in front of a real device carries the Appian server's
/// exchanges and other origins'; verified against the server's recording
/// (`--path tap-a,server`) the others are "other origins, not on this path":
/// counted, never judged, never failing.
final class VerifierOtherOriginsTests: XCTestCase {
    private typealias S = VerificationScenario

    /// Exchange 0 to app.test (the server sees it), exchange 1 to cdn.test
    /// (only the forward tap does), exchange 2 to app.test blocked before the server.
    private func recordings(tapMode: String = "forward", serverOrigin: String? = "https://app.test",
                            blocked: Bool = false) -> [Recording] {
        var other = S.exchange("/lib.js", trace: "t2")
        other.request.authority = "cdn.test"
        other.request.fields.removeAll { $0.hasName("host") }
        other.request.fields.append("Host", "cdn.test")
        var exchanges = [S.exchange("/suite/rest/a", trace: "t1"), other]
        if blocked { exchanges.append(S.exchange("/suite/rest/b", trace: "t3")) }
        var scenario = S(exchanges)
        scenario.taps = [("tap-a", .intermediary), ("server", .server)]
        scenario.alter = { place, view in
            if place.tap == "server" && place.exchange > 0 {
                view.request = nil
                view.response = nil
            }
        }
        var recordings = scenario.recordings()
        recordings[0].header.mode = tapMode
        recordings[1].header.origin = serverOrigin
        return recordings
    }

    func testExchangesToOtherOriginsAreCountedApartAndNeverFail() throws {
        let report = try Verifier().verify(recordings())
        XCTAssertEqual(report.exchanges.count, 1)
        XCTAssertEqual(report.otherOrigins?.origins, [OtherOrigins.Count(origin: "https://cdn.test", exchanges: 1)])
        XCTAssertTrue(report.policyHolds, "\(report.exchanges.map { $0.hops.map(\.verdict) })")
        XCTAssertTrue(TextReport.render(report).contains(
            "Other origins, not on this path (https://app.test): 1 exchange (1 to https://cdn.test), not judged"))
    }

    func testARequestForThePathsOriginThatNeverArrivedStillFails() throws {
        let report = try Verifier().verify(recordings(blocked: true))
        XCTAssertEqual(report.exchanges.count, 2)
        XCTAssertEqual(report.otherOrigins?.total, 1)
        XCTAssertFalse(report.policyHolds, "the blocked request to app.test is missing at the server")
    }

    func testTheOriginMayBeGivenByHand() throws {
        let report = try Verifier(Verifier.Configuration(origin: "https://APP.test:443/suite")).verify(recordings(serverOrigin: nil))
        XCTAssertEqual(report.otherOrigins?.origin, "https://app.test")
        XCTAssertEqual(report.otherOrigins?.total, 1)
        XCTAssertTrue(report.policyHolds)
    }

    func testWithoutAForwardTapNothingIsSetApart() throws {
        // Behind reverse taps every request is for the path's origin: what never arrived stays an exchange.
        let report = try Verifier().verify(recordings(tapMode: "reverse"))
        XCTAssertNil(report.otherOrigins)
        XCTAssertEqual(report.exchanges.count, 2)
        XCTAssertFalse(report.policyHolds)
    }
}
