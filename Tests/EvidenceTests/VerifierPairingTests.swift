import XCTest
import Evidence
import HTTP

/// How the verifier orders taps and pairs their records: trace ids, sequence
/// alignment, unrelated runs, a single recording, and bad combinations.
final class VerifierPairingTests: XCTestCase {
    private typealias S = VerificationScenario

    func testPairsByTraceWhateverTheRecordOrder() throws {
        var recordings = S([S.exchange("/a", trace: "t1"), S.exchange("/a", trace: "t2")]).recordings()
        recordings[2].records.reverse()
        let report = try Verifier().verify(recordings)
        XCTAssertEqual(report.exchanges.map(\.traceID), ["t1", "t2"])
        XCTAssertEqual(report.exchanges.map { $0.records.map(\.exchangeID) },
                       [["client-0", "proxy-a-0", "server-0"], ["client-1", "proxy-a-1", "server-1"]])
        XCTAssertEqual(report.summary.inferredPairings, 0)
        XCTAssertTrue(report.policyHolds)
    }

    func testWithoutTraceIdsPairsAreInferredAndSaidSo() throws {
        let report = try Verifier().verify(S([S.exchange("/a"), S.exchange("/b", method: "POST", body: "x=1")]).recordings())
        XCTAssertEqual(report.exchanges.map(\.target), ["/a", "/b"])
        for exchange in report.exchanges {
            XCTAssertEqual(exchange.hops.map(\.pairing), [.inferred, .sameRecord, .inferred])
            XCTAssertEqual(exchange.hops.map(\.verdict), [.identical, .identical, .identical])
        }
        XCTAssertEqual(report.summary.inferredPairings, 4)
        XCTAssertTrue(report.policyHolds)
    }

    func testAlignmentSkipsAnExchangeTheProxyAnsweredItself() throws {
        var scenario = S([S.exchange("/a"), S.exchange("/a"), S.exchange("/b")])
        scenario.alter = { place, view in
            // The proxy answers the second /a itself: nothing of it beyond the proxy's downstream leg.
            if place.exchange == 1 && (place.tap == "server" || place.leg == .upstream) {
                view = VerificationScenario.View(requestBody: [], responseBody: [])
            }
        }
        let report = try Verifier().verify(scenario.recordings())
        XCTAssertEqual(report.exchanges.map { $0.hops.map(\.verdict) }, [
            [.identical, .identical, .identical],
            [.identical, .foreign, .notReached],
            [.identical, .identical, .identical],
        ])
        XCTAssertEqual(report.exchanges[2].records.map(\.exchangeID), ["client-2", "proxy-a-2", "server-2"])
    }

    func testAlignmentPairsAcrossAHostRewriteByPath() throws {
        var scenario = S([S.exchange("/a"), S.exchange("/b")])
        scenario.alter = { place, view in
            // Something between the proxy and the server rewrites the host.
            guard place.tap == "server" else { return }
            view.request?.authority = "internal.test"
            view.request?.fields.set("Host", "internal.test")
        }
        let report = try Verifier().verify(scenario.recordings())
        XCTAssertEqual(report.exchanges.map { $0.records.count }, [3, 3])
        let request = report.exchanges[0].hops[2].request
        XCTAssertEqual(request.differences.map(\.kind), [.targetChanged])
        XCTAssertEqual(request.differences.first?.after, "https://internal.test/a")
        XCTAssertEqual(report.exchanges[0].hops[2].pairing, .inferred)
    }

    func testConcurrentExchangesReorderedBetweenTapsStillPair() throws {
        var recordings = S([S.exchange("/a"), S.exchange("/b"), S.exchange("/c")]).recordings()
        // The server saw /c before /a and /b (its clock says so).
        recordings[2].records[2].legs[0].request?.timings.start = Timestamp(millisecondsSince1970: 1_600_000_000_000)
        let report = try Verifier().verify(recordings)
        XCTAssertEqual(report.exchanges.count, 3)
        XCTAssertTrue(report.exchanges.allSatisfy { $0.records.count == 3 }, "\(report.exchanges.map(\.records))")
        XCTAssertTrue(report.policyHolds)
    }

    func testRecordingsOfUnrelatedRunsPairNothing() throws {
        let runA = S([S.exchange("/a", trace: "run-a-1"), S.exchange("/b", trace: "run-a-2")]).recordings()
        let runB = S([S.exchange("/c", trace: "run-b-1")]).recordings()
        let report = try Verifier().verify([runA[0], runB[2]])
        XCTAssertEqual(report.problems.map(\.kind), [.nothingPairs])
        XCTAssertTrue(report.problems[0].message.hasPrefix("nothing pairs across the taps client, server"), report.problems[0].message)
        XCTAssertEqual(report.exchanges.count, 3)
        // The client got answers the server never sent; the server answered requests the client never sent.
        XCTAssertEqual(report.exchanges.map(\.target), ["/a", "/c", "/b"])
        XCTAssertEqual(report.exchanges.map { $0.hops[0].verdict }, [.foreign, .foreign, .foreign])
        XCTAssertEqual(report.exchanges[1].hops[0].request.outcome, .foreign)
        XCTAssertEqual(report.exchanges[1].hops[0].response.outcome, .missing)
        XCTAssertFalse(report.policyHolds)
    }

    func testOneUnrelatedRecordingAmongRelatedOnesIsNamed() throws {
        let runA = S([S.exchange("/a", trace: "a1")]).recordings()
        let runB = S([S.exchange("/c", trace: "b1")]).recordings()
        let report = try Verifier().verify([runA[0], runA[1], runB[2]])
        XCTAssertEqual(report.problems.map(\.message), [
            "nothing pairs between proxy-a and server: no exchange proxy-a sent was seen by server (recordings of different runs?)",
        ])
    }

    func testASingleProxyRecordingVerifiesItsOwnLegs() throws {
        var scenario = S([S.exchange("/a", trace: "t1"), S.exchange("/b", trace: "t2")])
        scenario.alter = { place, view in
            if place.exchange == 1 && place.leg == .upstream { view.request?.fields.append("X-Added", "1") }
        }
        let report = try Verifier().verify([scenario.recordings()[1]])
        XCTAssertEqual(report.path.hops.map(\.label), ["inside proxy-a"])
        XCTAssertEqual(report.exchanges.map { $0.hops.map(\.verdict) }, [[.identical], [.modified]])
        XCTAssertEqual(report.exchanges[1].hops[0].request.differences.map(\.text), ["X-Added added (1)"])
        XCTAssertEqual(report.problems, [])
        XCTAssertFalse(report.policyHolds)
    }

    func testAClientRecordingAloneHasNoHop() throws {
        let report = try Verifier().verify([S([S.exchange("/a")]).recordings()[0]])
        XCTAssertEqual(report.path.hops, [])
        XCTAssertEqual(report.problems.map(\.kind), [.noHop])
        XCTAssertFalse(report.policyHolds)
    }

    func testAnEmptyRecordingVerifiesNothing() throws {
        let report = try Verifier().verify([S([]).recordings()[1]])
        XCTAssertEqual(report.problems.map(\.kind), [.noExchange])
        XCTAssertFalse(report.policyHolds)
    }

    private func twoProxies() -> VerificationScenario {
        var scenario = S([S.exchange("/a", trace: "t1")])
        scenario.taps = [("client", .client), ("outer", .intermediary), ("inner", .intermediary), ("server", .server)]
        return scenario
    }

    func testTapsAreOrderedFromTheirLegsAndTimes() throws {
        let recordings = twoProxies().recordings()
        let shuffled = [recordings[3], recordings[2], recordings[0], recordings[1]]
        let report = try Verifier().verify(shuffled)
        XCTAssertEqual(report.path.source, .recordings)
        XCTAssertEqual(report.path.taps.map(\.name), ["client", "outer", "inner", "server"])
        XCTAssertEqual(report.path.taps.map(\.kind), [.client, .intermediary, .intermediary, .server])
        XCTAssertEqual(report.path.hops.map(\.label),
                       ["client → outer", "inside outer", "outer → inner", "inside inner", "inner → server"])
        XCTAssertEqual(report.path.hops[2].from, ObservationPoint(tap: "outer", leg: .upstream))
        XCTAssertEqual(report.path.hops[2].to, ObservationPoint(tap: "inner", leg: .downstream))
        XCTAssertTrue(report.policyHolds)
    }

    func testPathOptionOverridesTheOrder() throws {
        let recordings = twoProxies().recordings()
        let report = try Verifier(Verifier.Configuration(path: ["client", "inner", "outer", "server"])).verify(recordings)
        XCTAssertEqual(report.path.source, .option)
        XCTAssertEqual(report.path.taps.map(\.name), ["client", "inner", "outer", "server"])
    }

    func testPathOptionErrors() {
        let recordings = twoProxies().recordings()
        let cases: [([String], VerificationInputError)] = [
            (["client", "outer", "inner", "nowhere", "server"], .unknownTapInPath(tap: "nowhere", known: ["client", "outer", "inner", "server"])),
            (["client", "outer", "outer", "inner", "server"], .tapRepeatedInPath(tap: "outer")),
            (["client", "outer", "server"], .tapMissingFromPath(tap: "inner")),
            (["outer", "client", "inner", "server"], .endMisplacedInPath(tap: "client", kind: .client)),
            (["client", "outer", "server", "inner"], .endMisplacedInPath(tap: "server", kind: .server)),
        ]
        for (path, expected) in cases {
            XCTAssertThrowsError(try Verifier(Verifier.Configuration(path: path)).verify(recordings), "\(path)") { error in
                XCTAssertEqual(error as? VerificationInputError, expected)
            }
        }
    }

    func testRecordingsThatCannotBeVerifiedTogether() {
        let recordings = S([S.exchange("/a")]).recordings()
        XCTAssertThrowsError(try Verifier().verify([])) { XCTAssertEqual($0 as? VerificationInputError, .noRecordings) }
        XCTAssertThrowsError(try Verifier().verify([recordings[1], recordings[1]])) { error in
            XCTAssertEqual(error as? VerificationInputError, .duplicateTap(tap: "proxy-a", paths: ["proxy-a.jsonl", "proxy-a.jsonl"]))
        }
        // Several clients are verified together (VerifierSeveralClientsTests); several servers are not one path.
        var secondServer = recordings[2]
        secondServer.header.tap = "server-2"
        XCTAssertThrowsError(try Verifier().verify([recordings[2], secondServer])) { error in
            XCTAssertEqual(error as? VerificationInputError, .severalEnds(kind: .server, taps: ["server", "server-2"]))
        }
        var mixed = recordings[1]
        mixed.records[0].legs.append(ExchangeRecord.Leg(role: .server, connectionID: "s"))
        XCTAssertThrowsError(try Verifier().verify([mixed])) { error in
            XCTAssertEqual(error as? VerificationInputError, .mixedLegs(tap: "proxy-a", path: "proxy-a.jsonl", legs: ["downstream", "upstream", "server"]))
            XCTAssertTrue("\(error)".contains("not several"))
        }
    }

    func testAlignmentRefusesToExceedItsLimit() {
        let recordings = S((0..<5).map { S.exchange("/\($0)") }).recordings()
        XCTAssertThrowsError(try Verifier(Verifier.Configuration(maximumAlignmentCells: 20)).verify(recordings)) { error in
            XCTAssertEqual(error as? VerificationInputError, .tooManyToAlign(from: "client", to: "proxy-a", exchanges: 25, limit: 20))
        }
    }

    func testExchangesAreGroupedByStepInOrderOfFirstAppearance() throws {
        let report = try Verifier().verify(S([
            S.exchange("/suite/rest/x", trace: "1", step: "challenge-401"),
            S.exchange("/suite", trace: "2", step: "login-page"),
            S.exchange("/suite/rest/x", trace: "3", step: "challenge-401"),
            S.exchange("/other", trace: "4"),
        ]).recordings())
        XCTAssertEqual(report.stepGroups.map(\.step), ["challenge-401", "login-page", nil])
        XCTAssertEqual(report.stepGroups.map { $0.exchanges.map(\.number) }, [[1, 3], [2], [4]])
    }
}
