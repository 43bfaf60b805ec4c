import XCTest
import Evidence
import HTTP

/// Connection failures beside the exchange they explain. Path: client →
/// proxy-a → (an intermediary) → proxy-b → server; the intermediary never
/// gets through to proxy-b and answers 502 itself.
final class VerifierConnectionFailureTests: XCTestCase {
    private typealias S = VerificationScenario
    /// Exchange 0's request starts at 1_700_000_000_000 + tap offsets (`VerificationScenario`).
    private static let attempt = Timestamp(millisecondsSince1970: 1_700_000_000_030)

    /// The intermediary answered the exchange itself: proxy-a saw its 502, proxy-b and the server saw nothing.
    private func answeredByTheIntermediary() -> VerificationScenario {
        var scenario = S([S.exchange("/suite/rest/protected", trace: "t1")])
        scenario.taps = [("client", .client), ("proxy-a", .intermediary), ("proxy-b", .intermediary), ("server", .server)]
        scenario.alter = { place, view in
            if place.tap == "proxy-b" || place.tap == "server" { view.request = nil; view.response = nil; return }
            view.response = S.ok([("Server", "nginx/1.22.1"), ("Content-Type", "text/html")], status: 502)
            view.responseBody = []
        }
        return scenario
    }

    private func connection(_ tap: String, _ outcome: RequestlessConnection.Outcome, _ failure: ExchangeRecord.Failure,
                            faults: [ExchangeRecord.RecordedFault] = []) -> ExchangeRecord {
        ExchangeRecord(exchangeID: "d1.0", tap: tap, legs: [ExchangeRecord.Leg(role: .downstream, connectionID: "d1")],
                       faults: faults, error: failure,
                       connection: RequestlessConnection(outcome: outcome, peer: "127.0.0.1:56606", at: Self.attempt))
    }

    /// As tap B records nginx's `proxy_pass http://` to its TLS port (the outcome says `closed`: the peer sent no ClientHello).
    private let plainHTTP = ExchangeRecord.Failure(
        kind: .tls, location: "downstream TLS handshake",
        message: "TLS handshake failed: plain text where a TLS ClientHello was expected (an HTTP request? "
            + "\"GET /suite/rest/protected HTTP/1.1\")")

    func testPlainHTTPToATLSPortSurfacesBesideTheForeignAnswerItExplains() throws {
        var recordings = answeredByTheIntermediary().recordings()
        recordings[2].records.append(connection("proxy-b", .closed, plainHTTP))
        let report = try Verifier().verify(recordings)

        XCTAssertEqual(report.exchanges.count, 1)
        let hop = report.exchanges[0].hops[2]
        XCTAssertEqual(hop.verdict, .foreign, "the app got the intermediary's answer: that stays the verdict")
        XCTAssertEqual(hop.failures.map(\.tap), ["proxy-b"])
        XCTAssertEqual(hop.failures.first?.at, Self.attempt)
        let explanation = "proxy-b refused plain HTTP on its TLS port at 22:13:20.030: the intermediary in front of it "
            + "speaks http:// to it"
        XCTAssertEqual(hop.failures.first?.explanation, explanation)

        let summary = try XCTUnwrap(report.connections.first)
        XCTAssertEqual(summary.outcomes, [.handshakeFailed: 1], "a peer that spoke plain HTTP did not just connect and close")
        XCTAssertEqual(summary.failures.first?.pairedExchange, 1)

        let text = TextReport.render(report)
        XCTAssertTrue(text.contains("hop 3 failure recorded: \(explanation) (proxy-b, downstream TLS handshake: tls: "), text)
        XCTAssertTrue(text.contains("1 TLS handshake failed"), text)
        XCTAssertTrue(text.contains("(the same attempt as exchange 1)"), text)
        XCTAssertTrue(HTMLReport.render(report).contains("refused plain HTTP on its TLS port"))
        let json = try JSONSerialization.jsonObject(with: Data(report.jsonBytes())) as? [String: Any]
        let exchange = (json?["exchanges"] as? [[String: Any]])?.first
        let failure = ((exchange?["hops"] as? [[String: Any]])?[2]["failures"] as? [[String: Any]])?.first
        XCTAssertEqual(failure?["explanation"] as? String, explanation)
        XCTAssertEqual(failure?["at"] as? Double, Self.attempt.millisecondsSince1970)
        XCTAssertEqual(try VerificationReport.decode(json: report.jsonBytes()), report)
    }

    func testAClientCertificateRefusalBehindATLSInspectingProxyIsAttachedWithItsFault() throws {
        // Squid (ssl-bump) answers 502 itself; behind it, proxy-b demanded a client certificate Squid cannot have.
        var recordings = answeredByTheIntermediary().recordings()
        let refused = ExchangeRecord.Failure(kind: .tls, location: "downstream TLS handshake",
                                             message: "TLS handshake failed: peer presented no client certificate but one is required")
        recordings[2].records.append(connection("proxy-b", .handshakeFailed, refused,
                                                faults: [ExchangeRecord.RecordedFault(name: "client-cert-required")]))
        let report = try Verifier().verify(recordings)
        let hops = report.exchanges[0].hops
        XCTAssertEqual(hops[2].verdict, .foreign)
        XCTAssertEqual(hops[2].failures.first?.explanation?.hasPrefix(
            "proxy-b refused a TLS handshake without a client certificate at 22:13:20.030: "), true)
        XCTAssertEqual(hops[3].injected.map(\.name), ["client-cert-required"], "the injected fault shows on proxy-b's own hop")
        XCTAssertEqual(hops[3].verdict, .broken)
    }

    func testTheMockServersRefusedHandshakeWithItsConnectionPairsByTime() throws {
        // The server refuses proxy-b's handshake; proxy-b answers 502 itself, its upstream leg never sent the request.
        var scenario = S([S.exchange("/suite/rest/protected", trace: "t1")])
        scenario.taps = [("client", .client), ("proxy-b", .intermediary), ("server", .server)]
        scenario.alter = { place, view in
            if place.tap == "server" || place.leg == .upstream { view.request = nil; view.response = nil; return }
            view.response = S.ok(status: 502)
        }
        scenario.decorate = { tap, _, record in
            if tap == "proxy-b" {
                record.error = ExchangeRecord.Failure(kind: .tls, location: "upstream TLS handshake",
                                                      message: "TLS handshake failed: server requires a client certificate and none was presented")
            }
        }
        var recordings = scenario.recordings()
        let refused = ExchangeRecord.Failure(kind: .tls, location: "server TLS handshake",
                                             message: "TLS handshake failed: peer presented no client certificate but one is required")
        recordings[2].records.append(ExchangeRecord(
            exchangeID: "c7", tap: "server", legs: [ExchangeRecord.Leg(role: .server, connectionID: "c7")], error: refused,
            connection: RequestlessConnection(outcome: .handshakeFailed, peer: "127.0.0.1:40000", at: Self.attempt)))
        let report = try Verifier().verify(recordings)
        XCTAssertEqual(report.exchanges.count, 1)
        let last = try XCTUnwrap(report.exchanges[0].hops.last)
        XCTAssertEqual(last.failures.map(\.tap), ["proxy-b", "server"], "both sides of the refused handshake")
        XCTAssertEqual(last.verdict, .broken)
        XCTAssertEqual(report.connections.first?.failures.first?.pairedExchange, 1)
    }

    func testAProbesSilentCloseIsCountedNotListed() throws {
        var recordings = answeredByTheIntermediary().recordings()
        recordings[2].records.append(connection("proxy-b", .closed, ExchangeRecord.Failure(
            kind: .closedEarly, location: "downstream TLS handshake", message: "peer closed")))
        let report = try Verifier().verify(recordings)
        XCTAssertEqual(report.connections.first?.outcomes, [.closed: 1])
        XCTAssertEqual(report.connections.first?.failures, [])
        XCTAssertEqual(report.exchanges[0].hops[2].failures, [])
    }
}
