import XCTest
import Evidence
import HTTP

/// How the reports word what they show: a Host rewrite by its name, field
/// names in one case, rows that never print an empty method or target.
final class VerifierReportWordingTests: XCTestCase {
    private typealias S = VerificationScenario

    func testAHostRewriteSaysHostChanged() throws {
        // Apache ProxyPreserveHost Off: the upstream's address as Host.
        var scenario = S([S.exchange("/suite/rest/a", trace: "t1")])
        scenario.alter = { place, view in
            if place.tap == "server" || place.leg == .upstream {
                var head = HTTPRequestHead(method: "GET", authority: "127.0.0.1:9443", path: "/suite/rest/a", version: .http1_1,
                                           fields: ["Host": "127.0.0.1:9443", "User-Agent": "intact-test"])
                head.fields.append(ExchangeRecord.traceFieldName, "t1")
                view.request = head
            }
        }
        let report = try Verifier().verify(scenario.recordings())
        let difference = try XCTUnwrap(report.exchanges[0].hops[1].request.differences.first)
        XCTAssertEqual(difference.kind, .targetChanged)
        XCTAssertEqual(difference.text, "Host changed (app.test → 127.0.0.1:9443)")
    }

    func testAFieldNameReadsInOneCaseOnBothMessages() throws {
        // HAProxy writes names in lower case on the response, the request's addition is capitalised by the proxy.
        var scenario = S([S.exchange("/suite/rest/a", trace: "t1")])
        scenario.alter = { place, view in
            guard place.tap == "server" || place.leg == .upstream else { return }
            view.request?.fields.append("Via", "1.1 lb")
        }
        scenario.alter = { [alter = scenario.alter] place, view in
            alter(place, &view)
            if place.tap == "client" || place.leg == .downstream { view.response?.fields.append("via", "1.1 lb") }
        }
        let report = try Verifier().verify(scenario.recordings())
        let hop = report.exchanges[0].hops[1]
        XCTAssertEqual(hop.request.differences.map(\.text), ["Via added (1.1 lb)"])
        XCTAssertEqual(hop.response.differences.map(\.text), ["Via added (1.1 lb)"])
    }

    func testRowsWithoutAPathOrRequestPrintWhatTheyAre() throws {
        // A CONNECT (authority-form target) and a request refused before it parsed (only the 431 recorded).
        var connect = S.exchange("/", trace: "t1")
        connect.request = HTTPRequestHead(method: "CONNECT", authority: "app.test:443", path: "", version: .http1_1,
                                          fields: ["Host": "app.test:443"])
        var refused = S.exchange("/big", trace: nil)
        refused.response = S.ok(status: 431)
        var scenario = S([connect, refused])
        scenario.alter = { place, view in
            if place.exchange == 1 { view.request = nil }
        }
        let report = try Verifier().verify(scenario.recordings())
        let text = TextReport.render(report)
        XCTAssertTrue(text.contains("CONNECT  app.test:443"), text)
        XCTAssertTrue(text.contains("?        (no request recorded)"), text)
        XCTAssertTrue(HTMLReport.render(report).contains("CONNECT app.test:443"))
    }

    func testAnHTTP3AdvertisementAddedOnTheWayIsItsOwnWarning() throws {
        var scenario = S([S.exchange("/suite/rest/a", trace: "t1"), S.exchange("/suite/rest/b", trace: "t2")])
        scenario.alter = { place, view in
            if place.tap == "client" || place.leg == .downstream { view.response?.fields.append("alt-svc", "h3=\":443\"; ma=2592000") }
        }
        let report = try Verifier().verify(scenario.recordings())
        XCTAssertEqual(report.warnings.filter { $0.contains("HTTP/3") }, [
            "proxy-a itself advertises HTTP/3 (Alt-Svc: h3=\":443\"; ma=2592000 added on 2 responses): "
            + "clients may leave this path (QUIC over UDP, past every TCP tap and TCP policy); turn the advertisement off "
            + "(Caddy: servers { protocols h1 h2 })"])
        XCTAssertTrue(TextReport.render(report).contains("Warning: proxy-a itself advertises HTTP/3"))
    }
}
