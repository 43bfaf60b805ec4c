import XCTest
import Evidence
import HTTP

/// What is not an exchange of the app: requests an intermediary made itself
/// (health checks) and connections that carried no request. Path:
/// client → proxy-a → proxy-b → server; the load balancer sits between the
/// two proxies.
final class VerifierCategoryTests: XCTestCase {
    private typealias S = VerificationScenario

    private func scenario(_ exchanges: [S.Exchange], onlyBehind: Set<Int>) -> VerificationScenario {
        var scenario = S(exchanges)
        scenario.taps = [("client", .client), ("proxy-a", .intermediary), ("proxy-b", .intermediary), ("server", .server)]
        scenario.alter = { place, view in
            // A health check: only the taps behind the load balancer see it.
            if onlyBehind.contains(place.exchange) && (place.tap == "client" || place.tap == "proxy-a") {
                view.request = nil
                view.response = nil
            }
        }
        return scenario
    }

    private func healthChecked() -> VerificationScenario {
        scenario([S.exchange("/suite/rest/a", trace: "t1"), S.exchange("/health"), S.exchange("/health"),
                  S.exchange("/suite/rest/b", trace: "t2")], onlyBehind: [1, 2])
    }

    private func verify(_ recordings: [Recording], policy: VerificationPolicy = .strict) throws -> VerificationReport {
        try Verifier(Verifier.Configuration(policy: policy)).verify(recordings)
    }

    func testHealthChecksAreIntermediaryRequestsAndTheStrictPolicyHolds() throws {
        let report = try verify(healthChecked().recordings())
        XCTAssertEqual(report.exchanges.map(\.target), ["/suite/rest/a", "/suite/rest/b"])
        XCTAssertTrue(report.exchanges.allSatisfy(\.passes))
        XCTAssertEqual(report.intermediaryRequests.total, 2)
        let group = try XCTUnwrap(report.intermediaryRequests.groups.first)
        XCTAssertEqual(report.intermediaryRequests.groups.count, 1)
        XCTAssertEqual([group.tap, group.method, group.target], ["proxy-b", "GET", "/health"])
        XCTAssertEqual(group.count, 2)
        XCTAssertEqual(group.statuses, [200])
        XCTAssertTrue(group.allowed)
        XCTAssertLessThan(try XCTUnwrap(group.first), try XCTUnwrap(group.last))
        XCTAssertEqual(report.summary.intermediaryRequests, 2)
        XCTAssertEqual(report.summary.exchanges, 2)
        XCTAssertTrue(report.policyHolds)

        let text = TextReport.render(report)
        XCTAssertTrue(text.contains("Intermediary requests (made by an intermediary itself, not exchanges of the app; "
                                    + "policy: allowed): 2"), text)
        XCTAssertTrue(text.contains("  2 × GET /health at proxy-b, "), text)
        XCTAssertTrue(text.contains("; 2 intermediary requests"), text)
        XCTAssertTrue(text.contains("Policy strict holds."), text)
        let html = HTMLReport.render(report)
        XCTAssertTrue(html.contains("<ul id=\"intermediary-requests\"><li>2 × GET /health at proxy-b"), html)

        let json = try JSONSerialization.jsonObject(with: Data(report.jsonBytes())) as? [String: Any]
        XCTAssertEqual(json?["schema"] as? String, "intact-verify/2")
        let section = json?["intermediaryRequests"] as? [String: Any]
        XCTAssertEqual(section?["total"] as? Int, 2)
        XCTAssertEqual((section?["groups"] as? [[String: Any]])?.first?["target"] as? String, "/health")
        XCTAssertEqual((json?["summary"] as? [String: Any])?["verdicts"] as? [String: Int] != nil, true,
                       "verdict counts stay an object keyed by verdict")
        XCTAssertEqual(try VerificationReport.decode(json: report.jsonBytes()), report)
    }

    func testAPolicyCanForbidIntermediaryRequestsOrAllowSomePaths() throws {
        let recordings = healthChecked().recordings()
        let forbidden = try verify(recordings, policy: VerificationPolicy(name: "no-checks", intermediaryRequests: .forbid))
        XCTAssertFalse(forbidden.policyHolds)
        XCTAssertEqual(forbidden.intermediaryRequests.forbidden, 2)
        XCTAssertTrue(TextReport.render(forbidden).contains(
            "Policy no-checks FAILS: 2 intermediary requests the policy does not allow."), TextReport.render(forbidden))
        XCTAssertTrue(TextReport.render(forbidden).contains("NOT ALLOWED by the policy"))

        let health = try verify(recordings, policy: VerificationPolicy(name: "h", intermediaryRequests: .paths(["/health"])))
        XCTAssertTrue(health.policyHolds)
        let other = try verify(recordings, policy: VerificationPolicy(name: "o", intermediaryRequests: .paths(["/status"])))
        XCTAssertFalse(other.policyHolds)
    }

    func testOnlyIntermediaryRequestsSaySoAndProveNothing() throws {
        let recordings = scenario([S.exchange("/health"), S.exchange("/health")], onlyBehind: [0, 1]).recordings()
        let report = try Verifier(Verifier.Configuration(path: ["client", "proxy-a", "proxy-b", "server"])).verify(recordings)
        XCTAssertEqual(report.exchanges, [])
        XCTAssertEqual(report.intermediaryRequests.total, 2)
        XCTAssertEqual(report.problems.map(\.kind), [.onlyIntermediaryRequests])
        XCTAssertEqual(report.problems.first?.message, "the recordings hold 2 requests an intermediary made itself and no "
                       + "exchange of the app: nothing to verify for the app")
        XCTAssertFalse(report.policyHolds)
    }

    func testARetryCarryingTheAppsTraceIsNotAnIntermediaryRequest() throws {
        // The load balancer sends the app's request (trace t1) again: tap B sees it twice.
        var recordings = scenario([S.exchange("/suite/rest/a", trace: "t1")], onlyBehind: []).recordings()
        var retry = recordings[2].records[0]
        retry.exchangeID = "proxy-b-retry"
        recordings[2].records.append(retry)
        let report = try verify(recordings)
        XCTAssertEqual(report.intermediaryRequests.total, 0)
        XCTAssertEqual(report.exchanges.count, 2)
        XCTAssertFalse(report.policyHolds, "a request the app sent once arriving twice is foreign")
    }

    // MARK: Connection events

    private func connectionRecord(_ number: Int, _ event: RequestlessConnection, error: ExchangeRecord.Failure? = nil) -> ExchangeRecord {
        ExchangeRecord(exchangeID: "d\(number).0", tap: "proxy-b",
                       legs: [ExchangeRecord.Leg(role: .downstream, connectionID: "d\(number)")], error: error, connection: event)
    }

    func testThousandsOfConnectionEventsAreSummarisedAndNeverFailThePolicy() throws {
        var recordings = scenario([S.exchange("/suite/rest/a", trace: "t1")], onlyBehind: []).recordings()
        let closed = ExchangeRecord.Failure(kind: .closedEarly, location: "downstream TLS handshake", message: "peer closed")
        for number in 0..<3000 {
            let at = Timestamp(millisecondsSince1970: 1_700_000_000_000 + Double(number))
            recordings[2].records.append(connectionRecord(number, RequestlessConnection(outcome: .closed, peer: "127.0.0.1:\(40000 + number % 7)",
                                                                                 at: at), error: closed))
        }
        recordings[2].records.append(connectionRecord(5000, RequestlessConnection(outcome: .handshakeOnly, peer: "127.0.0.1:1")))
        let report = try verify(recordings)
        XCTAssertEqual(report.exchanges.count, 1)
        XCTAssertTrue(report.policyHolds)
        XCTAssertEqual(report.connections.count, 1)
        let summary = report.connections[0]
        XCTAssertEqual(summary.tap, "proxy-b")
        XCTAssertEqual(summary.total, 3001)
        XCTAssertEqual(summary.outcomes, [.closed: 3000, .handshakeOnly: 1])
        XCTAssertEqual(summary.distinctPeers, 8)
        XCTAssertEqual(summary.peers.count, TapConnections.listedPeerLimit)
        XCTAssertEqual(report.summary.connectionEvents, 3001)
        let text = TextReport.render(report)
        XCTAssertLessThan(text.split(separator: "\n").count, 30, "the report stays readable:\n\(text)")
        XCTAssertTrue(text.contains("proxy-b: 3001 connections without a request (3000 connected and closed, "
                                    + "1 TLS handshake, no request) from 8 peers ("), text)
        XCTAssertTrue(HTMLReport.render(report).contains("<ul id=\"connections\">"))
    }

    func testARecordOfAnOlderBuildWithNoMessageIsAConnectionEvent() throws {
        var recordings = scenario([S.exchange("/suite/rest/a", trace: "t1")], onlyBehind: []).recordings()
        recordings[2].records.append(ExchangeRecord(
            exchangeID: "d9.0", tap: "proxy-b", legs: [ExchangeRecord.Leg(role: .downstream, connectionID: "d9")],
            error: ExchangeRecord.Failure(kind: .closedEarly, location: "downstream TLS handshake", message: "peer closed")))
        let report = try verify(recordings)
        XCTAssertEqual(report.exchanges.count, 1)
        XCTAssertEqual(report.connections.first?.outcomes, [.closed: 1])
        XCTAssertTrue(report.policyHolds)
    }

    func testAHandshakeFailureIsPairedWithTheClientsFailedExchange() throws {
        // The client rejects proxy-a's certificate: the client recorded its request and a TLS failure,
        // proxy-a recorded a connection whose handshake failed after the ClientHello.
        var scenario = S([S.exchange("/suite/rest/a", trace: "t1")])
        scenario.alter = { place, view in
            if place.tap != "client" { view.request = nil; view.response = nil } else { view.response = nil }
        }
        scenario.decorate = { tap, _, record in
            if tap == "client" {
                record.error = ExchangeRecord.Failure(kind: .tls, location: "client exchange", message: "certificate verify failed")
            }
        }
        var recordings = scenario.recordings()
        let failure = ExchangeRecord.Failure(kind: .tls, location: "downstream TLS handshake", message: "alert unknown_ca")
        recordings[1].records.append(ExchangeRecord(
            exchangeID: "d1.0", tap: "proxy-a", legs: [ExchangeRecord.Leg(role: .downstream, connectionID: "d1")], error: failure,
            connection: RequestlessConnection(outcome: .handshakeFailed, peer: "127.0.0.1:5000",
                                        at: Timestamp(millisecondsSince1970: 1_700_000_000_004))))
        let report = try Verifier().verify(recordings)
        XCTAssertEqual(report.exchanges.count, 1, "the handshake failure is not an exchange of its own")
        let hop = report.exchanges[0].hops[0]
        XCTAssertEqual(hop.verdict, .broken)
        XCTAssertEqual(hop.failures.map(\.tap), ["client", "proxy-a"])
        XCTAssertEqual(hop.failures.map(\.side), [.upstream, .client])
        XCTAssertEqual(hop.failures.map(\.stage), [.tls, .tls])
        XCTAssertEqual(report.connections.first?.failures.first?.pairedExchange, 1)
        XCTAssertTrue(TextReport.render(report).contains(
            "handshake failed at 22:13:20.004 from 127.0.0.1:5000: proxy-a, downstream TLS handshake: tls: alert unknown_ca "
            + "(the same attempt as exchange 1)"), TextReport.render(report))
    }

    // MARK: Failures: side and stage

    func testFailuresNameTheirSideAndStage() throws {
        typealias F = ExchangeRecord.Failure
        let cases: [(F, F.Side?, F.Stage?)] = [
            (F(kind: .connectionRefused, location: "upstream connect", message: "refused"), .upstream, .connect),
            (F(kind: .tls, location: "downstream TLS handshake", message: "alert"), .client, .tls),
            (F(kind: .tls, location: "client exchange", message: "verify failed"), .upstream, .tls),
            (F(kind: .reset, location: "upstream 127.0.0.1:8443", message: "reset"), .upstream, nil),
            (F(kind: .closedEarly, location: "downstream response body", message: "gone"), .client, .response),
            (F(kind: .protocolError, location: "downstream request", message: "bad"), .client, .request),
            (F(kind: .protocolError, location: "server HTTP/1.1 request", message: "bad"), .client, .request),
            (F(kind: .reset, location: "downstream connection", message: "reset"), .client, nil),
            (F(kind: .internal, location: "proxy", message: "stopped"), nil, nil),
        ]
        for (failure, side, stage) in cases {
            XCTAssertEqual(failure.side, side, failure.location)
            XCTAssertEqual(failure.stage, stage, failure.location)
        }
        // A record of an older build has no side or stage: they are read from where it failed.
        let old = #"{"kind":"tls","where":"upstream TLS handshake","message":"alert"}"#
        let decoded = try JSONDecoder().decode(F.self, from: Data(old.utf8))
        XCTAssertEqual(decoded.side, .upstream)
        XCTAssertEqual(decoded.stage, .tls)
        let encoded = String(decoding: try JSONEncoder().encode(decoded), as: UTF8.self)
        XCTAssertTrue(encoded.contains("\"side\":\"upstream\"") && encoded.contains("\"stage\":\"tls\""), encoded)
    }
}
