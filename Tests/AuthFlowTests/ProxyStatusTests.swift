import HTTP
import XCTest
@testable import AuthFlow

/// Parsing `Proxy-Status` (RFC 9209) as an RFC 8941 list.
final class ProxyStatusTests: XCTestCase {
    func testIntactsOwnAnswerParses() throws {
        let status = try XCTUnwrap(ProxyStatus(parsing:
            #"intact; error=connection_refused; details="TCP connect failed: connection refused by 127.0.0.1:1 (ECONNREFUSED)""#))
        XCTAssertEqual(status.entries, [ProxyStatus.Entry(
            intermediary: "intact", error: "connection_refused",
            details: "TCP connect failed: connection refused by 127.0.0.1:1 (ECONNREFUSED)")])
        XCTAssertEqual(status.error?.intermediary, "intact")
    }

    func testEveryMemberAndParameterKindIsRead() throws {
        // Origin-most first: the CDN passed the response on, the gateway failed its TLS handshake.
        let status = try XCTUnwrap(ProxyStatus(parsing:
            #"cdn.example; received-status=200, "gateway 2"; error=tls_alert_received; alert-id=116; "#
            + #"alert-message="certificate required"; next-hop="10.0.0.7:8443"; details="esc \"q\" \\ x"; "#
            + #"ratio=0.5; flag; bin=:AQID:; weird=?0"#))
        XCTAssertEqual(status.entries.count, 2)
        XCTAssertEqual(status.entries[0], ProxyStatus.Entry(intermediary: "cdn.example"))
        XCTAssertEqual(status.entries[1], ProxyStatus.Entry(
            intermediary: "gateway 2", error: "tls_alert_received", details: #"esc "q" \ x"#, nextHop: "10.0.0.7:8443",
            alertID: 116))
        XCTAssertEqual(status.error?.intermediary, "gateway 2")
    }

    func testSeveralFieldLinesAreOneList() throws {
        var fields = HTTPFields()
        fields.append("Proxy-Status", "origin-side; error=http_response_incomplete")
        fields.append("Content-Type", "text/plain")
        fields.append("proxy-status", "client-side")
        let status = try XCTUnwrap(ProxyStatus(fields))
        XCTAssertEqual(status.entries.map(\.intermediary), ["origin-side", "client-side"])
        XCTAssertEqual(status.error?.error, "http_response_incomplete")
        XCTAssertNil(ProxyStatus(HTTPFields()))
    }

    func testAFieldThatIsNotAValidListIsIgnored() {
        for value in ["", "intact;", "intact; Error=x", #"intact; details="open"#, #"intact; details="bad \n""#,
                      "intact,", "(a b); error=x", "intact error=x", "1intact", "intact; details=\"tab\t\"",
                      "intact; n=1234567890123456", "intact; d=1.2345"] {
            XCTAssertNil(ProxyStatus(parsing: value), value)
        }
        // A member naming no intermediary by token or string is not a Proxy-Status member.
        XCTAssertNil(ProxyStatus(parsing: "42; error=dns_error"))
    }
}
