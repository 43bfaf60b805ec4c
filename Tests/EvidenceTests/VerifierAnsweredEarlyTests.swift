import XCTest
import Evidence
import HTTP

/// A request cut inside a proxy because the server answered before the
/// request ended (nginx `return 200` on a POST, a 413): the proxy stops
/// forwarding the body, and the verifier names that instead of `modified`.
final class VerifierAnsweredEarlyTests: XCTestCase {
    private typealias S = VerificationScenario

    private static let body = "hello=world1234"  // 15 bytes
    private static let start = 1_700_000_000_000.0

    private static func at(_ offset: Double) -> Timestamp {
        Timestamp(millisecondsSince1970: start + offset)
    }

    /// One POST through client → proxy-a → server. proxy-a's upstream leg and
    /// the server saw `forwarded` of the body and an incomplete request; the
    /// response on proxy-a's upstream leg ended at `answeredAt`, the request
    /// on its downstream leg at 100 ms.
    private func report(forwarded: String = "", answeredAt: Double = 50, upstreamHead: ((inout HTTPRequestHead) -> Void)? = nil,
                        storeBodies: Bool = false) throws -> VerificationReport {
        var scenario = S([S.exchange("/upload", trace: "t1", method: "POST", body: Self.body)])
        scenario.alter = { place, view in
            guard place.tap == "server" || (place.tap == "proxy-a" && place.leg == .upstream) else { return }
            view.requestBody = Array(forwarded.utf8)
            view.requestComplete = false
            if let upstreamHead, view.request != nil { upstreamHead(&view.request!) }
        }
        scenario.decorate = { tap, _, record in
            for index in record.legs.indices {
                let role = record.legs[index].role
                if tap == "proxy-a", role == .downstream {
                    record.legs[index].request?.timings = MessageTimings(start: Self.at(0), headersDone: Self.at(1), end: Self.at(100))
                }
                if role == .upstream || role == .server {
                    record.legs[index].request?.timings.end = nil
                    record.legs[index].response?.timings = MessageTimings(start: Self.at(answeredAt - 2),
                                                                          headersDone: Self.at(answeredAt - 1), end: Self.at(answeredAt))
                }
                if storeBodies, role == .downstream {
                    record.legs[index].request?.body = StoredBody(base64: Data(Self.body.utf8).base64EncodedString(), truncated: false)
                }
                if storeBodies, role == .upstream {
                    record.legs[index].request?.body = StoredBody(base64: Data(forwarded.utf8).base64EncodedString(), truncated: false)
                }
            }
        }
        return try Verifier(Verifier.Configuration(policy: .strict)).verify(scenario.recordings())
    }

    func testACutRequestAnsweredBeforeItEndedIsAnsweredEarlyAndPassesStrict() throws {
        let report = try report()
        let exchange = try XCTUnwrap(report.exchanges.first)
        let inside = exchange.hops[1]
        XCTAssertEqual(inside.request.outcome, .equivalent)
        XCTAssertEqual(inside.verdict, .equivalent)
        XCTAssertEqual(inside.request.differences, [])
        XCTAssertEqual(inside.request.reasons.map(\.kind), [.answeredEarly])
        XCTAssertEqual(inside.request.reasons.last?.text,
                       "answered early: the server answered before the request ended; 0 of 15 body bytes forwarded")
        XCTAssertEqual(report.summary.count(.modified), 0)
        XCTAssertTrue(report.policyHolds)

        XCTAssertTrue(TextReport.render(report).contains(
            "request equivalent: answered early: the server answered before the request ended; 0 of 15 body bytes forwarded"))
        XCTAssertTrue(HTMLReport.render(report).contains("answered early: the server answered before the request ended"))
        let json = String(decoding: try report.jsonBytes(), as: UTF8.self)
        XCTAssertTrue(json.contains("\"answered-early\""), json)
    }

    func testAPartOfTheBodyForwardedIsCountedAndItsStoredBytesMustBeAPrefix() throws {
        let prefix = try report(forwarded: "hello", storeBodies: true)
        XCTAssertEqual(prefix.exchanges.first?.hops[1].request.reasons.last?.text,
                       "answered early: the server answered before the request ended; 5 of 15 body bytes forwarded")
        XCTAssertTrue(prefix.policyHolds)

        let notPrefix = try XCTUnwrap(report(forwarded: "HELLO", storeBodies: true).exchanges.first)
        XCTAssertEqual(notPrefix.hops[1].request.outcome, .modified)
        XCTAssertEqual(notPrefix.hops[1].request.differences.map(\.kind), [.bodyChanged])
    }

    func testMoreBytesForwardedThanSentIsModified() throws {
        let exchange = try XCTUnwrap(report(forwarded: Self.body + "&extra=1").exchanges.first)
        XCTAssertEqual(exchange.hops[1].request.outcome, .modified)
        XCTAssertFalse(exchange.hops[1].request.reasons.contains { $0.kind == .answeredEarly })
    }

    func testAResponseThatEndedAfterTheRequestEndedLeavesTheCutRequestModified() throws {
        let report = try report(answeredAt: 150)
        let inside = try XCTUnwrap(report.exchanges.first?.hops[1])
        XCTAssertEqual(inside.request.outcome, .modified)
        XCTAssertEqual(inside.request.differences.map(\.text), ["body changed (15 → 0 bytes)"])
        XCTAssertFalse(report.policyHolds)
    }

    func testACutRequestWithAChangedHeadIsModified() throws {
        let exchange = try XCTUnwrap(report { head in head.fields.append("X-Added", "1") }.exchanges.first)
        let request = exchange.hops[1].request
        XCTAssertEqual(request.outcome, .modified)
        XCTAssertEqual(Set(request.differences.map(\.kind)), [.fieldAdded, .bodyChanged])
        XCTAssertFalse(request.reasons.contains { $0.kind == .answeredEarly })
    }

    func testACutRequestWithAFailureRecordedStaysBroken() throws {
        var scenario = S([S.exchange("/upload", trace: "t1", method: "POST", body: Self.body)])
        scenario.alter = { place, view in
            guard place.tap == "proxy-a", place.leg == .upstream else { return }
            view.requestBody = []
            view.requestComplete = false
            view.response = nil
        }
        scenario.decorate = { tap, _, record in
            guard tap == "proxy-a" else { return }
            record.error = ExchangeRecord.Failure(kind: .reset, location: "upstream request", message: "connection reset")
        }
        let report = try Verifier(Verifier.Configuration(policy: .strict)).verify(scenario.recordings())
        let inside = try XCTUnwrap(report.exchanges.first?.hops[1])
        XCTAssertEqual(inside.verdict, .broken)
        XCTAssertEqual(inside.request.outcome, .modified)
    }
}
