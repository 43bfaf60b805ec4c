import XCTest
import Evidence
import HTTP

/// A reverse tap supplies its upstream's authority for a request that named
/// none (HAProxy's `option httpchk` sends `OPTIONS / HTTP/1.0` without
/// `Host`; an HTTP/2 upstream refuses a request without `:authority`):
/// inside that tap it is the tap's doing (`tap-authority`), anywhere else,
/// or any other authority, a modification.
/// Path: client → proxy-a → server (hop 2: inside proxy-a, hop 3: proxy-a → server).
final class VerifierTapAuthorityTests: XCTestCase {
    private typealias S = VerificationScenario

    /// The request names no authority until proxy-a's upstream leg, which
    /// says `upstreamAuthority` (also as `Host`), as does the server;
    /// proxy-a's recording says `mode`.
    private func report(mode: String?, upstreamAuthority: String = "origin.test:8443",
                        clientSide: Bool = true) throws -> VerificationReport {
        var exchange = S.exchange("/suite/cors/ping", trace: "t1")
        exchange.request.authority = nil
        exchange.request.version = .http1_0
        exchange.request.fields.removeAll { $0.hasName("host") }
        var scenario = S([exchange])
        scenario.alter = { place, view in
            let supplied = place.tap == "server" || (place.tap == "proxy-a" && (place.leg == .upstream || !clientSide))
            guard supplied else { return }
            view.request?.authority = upstreamAuthority
            view.request?.fields.append("Host", upstreamAuthority)
        }
        var recordings = scenario.recordings()
        if let mode { recordings[1].header.options["mode"] = mode }
        return try Verifier(Verifier.Configuration()).verify(recordings)
    }

    func testTheUpstreamsAuthoritySuppliedInsideAReverseTapIsEquivalent() throws {
        let report = try report(mode: "reverse:https://origin.test:8443")
        let exchange = try XCTUnwrap(report.exchanges.first)
        XCTAssertEqual(exchange.hops.map(\.verdict), [.identical, .equivalent, .identical])
        XCTAssertTrue(exchange.hops[1].request.reasons.contains(Equivalence(
            kind: .tapAuthority,
            text: "authority origin.test:8443 supplied by proxy-a for a request that named none: "
                + "its own upstream (reverse:https://origin.test:8443), as a reverse proxy sends Host")),
                      "\(exchange.hops[1].request.reasons)")
        XCTAssertTrue(report.policyHolds)
    }

    func testTheDefaultPortMayBeLeftOut() throws {
        let report = try report(mode: "reverse:https://Origin.test:443", upstreamAuthority: "origin.test")
        XCTAssertEqual(try XCTUnwrap(report.exchanges.first).hops[1].verdict, .equivalent)
    }

    func testAnotherAuthorityThanTheUpstreamsIsAModification() throws {
        let report = try report(mode: "reverse:https://origin.test:8443", upstreamAuthority: "elsewhere.test")
        XCTAssertEqual(try XCTUnwrap(report.exchanges.first).hops[1].verdict, .modified)
        XCTAssertFalse(report.policyHolds)
    }

    func testWithoutAReverseModeTheAddedAuthorityIsAModification() throws {
        let report = try report(mode: nil)
        XCTAssertEqual(try XCTUnwrap(report.exchanges.first).hops[1].verdict, .modified)
    }

    func testAnAuthorityAddedBeforeTheTapIsAModification() throws {
        // Proxy-a's downstream leg already sees the authority: hop 1 (client → proxy-a) added it.
        let report = try report(mode: "reverse:https://origin.test:8443", clientSide: false)
        let exchange = try XCTUnwrap(report.exchanges.first)
        XCTAssertEqual(exchange.hops[0].verdict, .modified)
        XCTAssertEqual(exchange.hops[1].verdict, .identical)
    }
}
