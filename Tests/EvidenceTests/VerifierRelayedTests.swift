import XCTest
import Evidence
import HTTP

/// The byte streams relayed after a 101, compared hop by hop.
final class VerifierRelayedTests: XCTestCase {
    private typealias S = VerificationScenario

    private static func stream(_ text: String) -> RelayedStreams.Stream {
        RelayedStreams.Stream(bytes: text.utf8.count, sha256: .of(Array(text.utf8)))
    }

    private static let streams = RelayedStreams(clientToServer: stream("ping"), serverToClient: stream("pong"))

    /// Every leg of every tap relayed `streams`, except where `change` says otherwise.
    private func report(_ change: @escaping (String, ExchangeRecord.Leg.Role, inout RelayedStreams) -> Void = { _, _, _ in })
        throws -> VerifiedExchange {
        var scenario = S([S.exchange("/chat", trace: "t1")])
        scenario.decorate = { tap, _, record in
            for index in record.legs.indices {
                var relayed = Self.streams
                change(tap, record.legs[index].role, &relayed)
                record.legs[index].relayed = relayed
            }
        }
        let report = try Verifier(Verifier.Configuration(policy: .strict)).verify(scenario.recordings())
        return try XCTUnwrap(report.exchanges.first)
    }

    func testEqualStreamsOnEveryLegLeaveEveryHopIdentical() throws {
        XCTAssertEqual(try report().hops.map(\.verdict), [.identical, .identical, .identical])
    }

    func testAStreamChangedInsideATapIsModifiedAndNamesTheDirection() throws {
        let exchange = try report { tap, role, relayed in
            if tap == "proxy-a", role == .downstream { relayed.serverToClient = Self.stream("pong!") }
        }
        XCTAssertEqual(exchange.hops.map(\.verdict), [.modified, .modified, .identical])
        let inside = exchange.hops[1]
        XCTAssertEqual(inside.request.outcome, .identical)
        let difference = try XCTUnwrap(inside.response.differences.first)
        XCTAssertEqual(difference.kind, .relayedChanged)
        XCTAssertEqual(difference.text, "relayed server→client stream changed (4 → 5 bytes)")
    }

    func testAStreamOnlyOneSideRelayedIsModified() throws {
        var scenario = S([S.exchange("/chat", trace: "t1")])
        scenario.decorate = { tap, _, record in
            guard tap == "client" else { return }
            for index in record.legs.indices { record.legs[index].relayed = Self.streams }
        }
        let report = try Verifier(Verifier.Configuration(policy: .strict)).verify(scenario.recordings())
        let hop = try XCTUnwrap(report.exchanges.first?.hops.first)
        XCTAssertEqual(hop.verdict, .modified)
        XCTAssertEqual(hop.request.differences.map(\.text), ["relayed client→server stream changed (4 → none bytes)"])
    }
}
