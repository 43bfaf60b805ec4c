import XCTest
import Evidence
import HTTP

/// Two clients on one path (two apps, or an app and a browser), each with
/// its own recording, verified together: each is a start of the path, the
/// exchanges pair by trace and the report says whose each is.
final class VerifierSeveralClientsTests: XCTestCase {
    private typealias S = VerificationScenario

    /// `app` sends exchange 0, `browser` exchange 1; both through proxy-a to the server.
    private func twoClients(cachedSecond: Bool = false) -> [Recording] {
        let first = S.exchange("/suite/rest/protected", trace: "a-1", responseFields: [("Intact-Trace", "a-1")])
        var scenario = S([first, S.exchange("/suite/rest/protected", trace: "b-1", responseFields: [("Intact-Trace", "b-1")])])
        scenario.taps = [("app", .client), ("browser", .client), ("proxy-a", .intermediary), ("proxy-b", .intermediary),
                         ("server", .server)]
        scenario.alter = { place, view in
            if place.tap == "app" && place.exchange == 1 || place.tap == "browser" && place.exchange == 0 {
                view.request = nil
                view.response = nil
            }
            // A cache between proxy-a and proxy-b answers the second client with the first one's response.
            if cachedSecond && place.exchange == 1 {
                if place.tap == "proxy-b" || place.tap == "server" { view.request = nil; view.response = nil; return }
                view.response = first.response
                view.responseBody = first.responseBody
            }
        }
        return scenario.recordings()
    }

    func testTwoClientRecordingsAreVerifiedTogetherAndGroupedByClient() throws {
        let report = try Verifier().verify(twoClients())
        XCTAssertEqual(report.exchanges.map(\.client), ["app", "browser"])
        XCTAssertEqual(report.exchanges.map(\.traceID), ["a-1", "b-1"])
        XCTAssertTrue(report.policyHolds, TextReport.render(report))
        XCTAssertEqual(report.path.taps.first?.name, "app+browser")
        XCTAssertEqual(report.recordings.map(\.tap), ["app", "browser", "proxy-a", "proxy-b", "server"])
        let text = TextReport.render(report)
        XCTAssertTrue(text.contains("#  client   method"), text)
        XCTAssertTrue(text.contains("2  browser  GET "), text)
        XCTAssertEqual(try VerificationReport.decode(json: report.jsonBytes()), report)
        // --path may name the clients one by one, or merged.
        let ordered = try Verifier(Verifier.Configuration(path: ["app", "browser", "proxy-a", "proxy-b", "server"]))
            .verify(twoClients())
        XCTAssertEqual(ordered.path.source, .option)
        XCTAssertTrue(ordered.policyHolds)
    }

    func testTheSecondClientsCachedCopyOfTheFirstsAnswerIsNamed() throws {
        let report = try Verifier().verify(twoClients(cachedSecond: true))
        let copy = try XCTUnwrap(report.exchanges[1].hops.lazy.compactMap(\.response.cachedCopy).first, TextReport.render(report))
        XCTAssertEqual(copy.exchange, 1)
        XCTAssertEqual(report.exchanges[1].client, "browser")
    }

    func testOneClientRecordingHasNoClientColumn() throws {
        let report = try Verifier().verify(S([S.exchange("/a", trace: "t1")]).recordings())
        XCTAssertNil(report.exchanges[0].client)
        XCTAssertFalse(TextReport.render(report).contains("client   method"))
    }
}
