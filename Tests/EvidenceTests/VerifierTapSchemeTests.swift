import XCTest
import Evidence
import HTTP

/// A tap in front of a plain-HTTP listener (`--mode reverse:http://…`) sends
/// the app's https requests as http: the scheme changes inside the tap and
/// back on the next hop, and neither is a modification of the app's message.
/// Path: client → proxy-a → server (hop 2: inside proxy-a, hop 3: proxy-a → server).
final class VerifierTapSchemeTests: XCTestCase {
    private typealias S = VerificationScenario

    /// Proxy-a's upstream leg sees `http` (and, when `alsoPath`, another path);
    /// the server sees `https` again; proxy-a's recording says `mode`.
    /// `addedField` is added on proxy-a's upstream leg and seen by the server
    /// too: another difference on the hop the tap's scheme changes on.
    private func report(mode: String?, upstreamScheme: String = "http", alsoPath: String? = nil,
                        serverScheme: String = "https", addedField: (String, String)? = nil,
                        policy: VerificationPolicy = .strict) throws -> VerificationReport {
        var scenario = S([S.exchange("/suite/rest/a", trace: "t1")])
        scenario.alter = { place, view in
            if place.tap == "proxy-a" && place.leg == .upstream {
                view.request?.scheme = upstreamScheme
                if let alsoPath { view.request?.path = alsoPath }
            }
            if place.tap == "server" {
                view.request?.scheme = serverScheme
                if let alsoPath { view.request?.path = alsoPath }
            }
            if let addedField, place.tap == "server" || (place.tap == "proxy-a" && place.leg == .upstream) {
                view.request?.fields.append(addedField.0, addedField.1)
            }
        }
        var recordings = scenario.recordings()
        if let mode { recordings[1].header.options["mode"] = mode }
        return try Verifier(Verifier.Configuration(policy: policy)).verify(recordings)
    }

    func testASchemeTheTapChoseIsEquivalentOnBothHops() throws {
        let report = try report(mode: "reverse:http://127.0.0.1:8080")
        let exchange = try XCTUnwrap(report.exchanges.first)
        XCTAssertEqual(exchange.hops.map(\.verdict), [.identical, .equivalent, .equivalent])
        XCTAssertTrue(exchange.hops[1].request.reasons.contains(Equivalence(
            kind: .tapScheme, text: "scheme https → http: proxy-a's own upstream (reverse:http://127.0.0.1:8080), not the app's message")))
        XCTAssertTrue(exchange.hops[2].request.reasons.contains(Equivalence(
            kind: .tapScheme, text: "scheme http → https: proxy-a's own upstream (reverse:http://127.0.0.1:8080), not the app's message")))
        XCTAssertTrue(report.policyHolds)
    }

    func testWithoutTheTapsChoiceTheSchemeChangeIsAModification() throws {
        let report = try report(mode: nil)
        let exchange = try XCTUnwrap(report.exchanges.first)
        XCTAssertEqual(exchange.hops.map(\.verdict), [.identical, .modified, .modified])
        XCTAssertEqual(exchange.hops[1].request.differences.map(\.kind), [.targetChanged])
        XCTAssertFalse(report.policyHolds)
    }

    func testASchemeOtherThanTheChosenOneIsAModification() throws {
        // The tap chose https, yet its upstream leg says http: not the tap's choice.
        let report = try report(mode: "reverse:https://127.0.0.1:8080")
        XCTAssertEqual(try XCTUnwrap(report.exchanges.first).hops.map(\.verdict), [.identical, .modified, .modified])
    }

    func testAPathChangedWithTheSchemeIsStillAModification() throws {
        let report = try report(mode: "reverse:http://127.0.0.1:8080", alsoPath: "/other")
        let exchange = try XCTUnwrap(report.exchanges.first)
        XCTAssertEqual(exchange.hops[1].verdict, .modified)
        XCTAssertEqual(exchange.hops[1].request.differences.map(\.kind), [.targetChanged])
    }

    func testAHopWhoseSchemeDidNotChangeStaysIdentical() throws {
        // Behind the tap the next point also sees http: nothing changed on hop 3.
        let report = try report(mode: "reverse:http://127.0.0.1:8080", serverScheme: "http")
        let exchange = try XCTUnwrap(report.exchanges.first)
        XCTAssertEqual(exchange.hops.map(\.verdict), [.identical, .equivalent, .identical])
    }

    /// Behind Varnish (plain HTTP to tap B) the hop that changes the scheme
    /// also adds fields: the scheme is still the tap's, never a target
    /// change, and only the added field is a difference.
    func testTheTapsSchemeIsNotATargetChangeWhenTheHopAlsoChangesAField() throws {
        let report = try report(mode: "reverse:http://127.0.0.1:8080", addedField: ("X-Forwarded-For", "127.0.0.1"))
        let exchange = try XCTUnwrap(report.exchanges.first)
        XCTAssertEqual(exchange.hops.map(\.verdict), [.identical, .modified, .equivalent])
        XCTAssertEqual(exchange.hops[1].request.differences.map(\.kind), [.fieldAdded])
        XCTAssertEqual(exchange.hops[1].request.differences.map(\.field), ["x-forwarded-for"])
        XCTAssertTrue(exchange.hops[1].request.reasons.contains { $0.kind == .tapScheme }, "\(exchange.hops[1].request.reasons)")
        XCTAssertFalse(report.policyHolds)
    }

    func testAPolicyToleratingTheOtherDifferencesHoldsAcrossTheTapsScheme() throws {
        let policy = VerificationPolicy(name: "forwarding", tolerations: [
            Toleration(.field("x-forwarded-for"), changes: [.added], message: .request)])
        let report = try report(mode: "reverse:http://127.0.0.1:8080", addedField: ("X-Forwarded-For", "127.0.0.1"),
                                policy: policy)
        let exchange = try XCTUnwrap(report.exchanges.first)
        XCTAssertEqual(exchange.hops.map(\.verdict), [.identical, .tolerated, .equivalent])
        XCTAssertTrue(report.policyHolds)
    }

    func testAPathChangedWithTheSchemeAndAFieldIsStillATargetChange() throws {
        let report = try report(mode: "reverse:http://127.0.0.1:8080", alsoPath: "/other",
                                addedField: ("X-Forwarded-For", "127.0.0.1"))
        let exchange = try XCTUnwrap(report.exchanges.first)
        XCTAssertEqual(exchange.hops[1].verdict, .modified)
        XCTAssertEqual(exchange.hops[1].request.differences.map(\.kind), [.targetChanged, .fieldAdded])
    }
}
