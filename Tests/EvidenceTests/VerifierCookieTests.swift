import XCTest
import Evidence
import HTTP

/// `Cookie` and `Set-Cookie` compared part by part on the hop inside proxy-a
/// (path client → proxy-a → server), with secrets redacted as by default.
final class VerifierCookieTests: XCTestCase {
    private typealias S = VerificationScenario
    private static let session = "JSESSIONID=abc; Path=/suite; Secure; HttpOnly"

    /// The bootstrap exchange, with the upstream side (proxy-a's upstream leg and the server) changed by `upstream`.
    private func insideHop(requestCookie: String? = "JSESSIONID=abc", setCookies: [String] = [session],
                           upstream: @escaping (inout S.View) -> Void,
                           policy: VerificationPolicy = .strict) throws -> HopResult {
        var scenario = S([S.exchange("/suite/rest/a", trace: "t1",
                                     requestFields: requestCookie.map { [("Cookie", $0)] } ?? [],
                                     responseFields: setCookies.map { ("Set-Cookie", $0) })])
        scenario.alter = { place, view in
            if place.leg == .upstream || place.tap == "server" { upstream(&view) }
        }
        return try Verifier(Verifier.Configuration(policy: policy)).verify(scenario.recordings()).exchanges[0].hops[1]
    }

    /// Replaces every Set-Cookie of a view's response.
    private static func setCookies(_ lines: [String]) -> (inout S.View) -> Void {
        { view in
            _ = view.response?.fields.remove("Set-Cookie")
            for line in lines { view.response?.fields.append("Set-Cookie", line) }
        }
    }

    // The server (after the hop, for a response: before it) sent `lines`; the client got the session line.

    func testAnAttributeAddedOnTheWayIsNamed() throws {
        // The response travels server → client: the server's line has no SameSite; the client's has it.
        let hop = try insideHop(setCookies: [Self.session + "; SameSite=None"], upstream: Self.setCookies([Self.session]))
        XCTAssertEqual(hop.response.differences.map(\.text), ["JSESSIONID: attribute SameSite=None added"])
        XCTAssertEqual(hop.response.differences.map(\.kind), [.cookieChanged])
        XCTAssertEqual(hop.response.differences.first?.cookie, "JSESSIONID")
        XCTAssertEqual(hop.response.differences.first?.after, "SameSite=None")
        XCTAssertEqual(hop.verdict, .modified)
        XCTAssertFalse(hop.notes(Self.inside).joined().contains("secret values differ"))
    }

    private static let inside = HopInfo(number: 2, kind: .inside, from: ObservationPoint(tap: "proxy-a", leg: .downstream),
                                        to: ObservationPoint(tap: "proxy-a", leg: .upstream))

    func testAPathRewriteIsNamed() throws {
        let hop = try insideHop(setCookies: ["JSESSIONID=abc; Path=/; Secure; HttpOnly"], upstream: Self.setCookies([Self.session]))
        XCTAssertEqual(hop.response.differences.map(\.text), ["JSESSIONID: Path changed (/suite → /)"])
        XCTAssertEqual(hop.response.differences.first.map { [$0.before, $0.after] }, ["/suite", "/"])
    }

    func testAChangedSecretValueIsNamedWithoutTheValue() throws {
        let hop = try insideHop(setCookies: ["JSESSIONID=stolen; Path=/suite; Secure; HttpOnly"],
                                upstream: Self.setCookies([Self.session]))
        XCTAssertEqual(hop.response.differences.map(\.text), ["JSESSIONID: value changed (secret)"])
        XCTAssertNil(hop.response.differences.first?.before, "no secret's digest is shown as a value")
    }

    func testAnAddedAffinityCookieIsNamedAndTheServersLinesAreUntouched() throws {
        let hop = try insideHop(setCookies: [Self.session, "SERVERID=s1; path=/"], upstream: Self.setCookies([Self.session]))
        XCTAssertEqual(hop.response.differences.map(\.text), ["SERVERID added"])
        XCTAssertEqual(hop.response.differences.map(\.kind), [.cookieAdded])
        let lb = try VerificationPolicy.load(path: Self.loadBalancerPolicy)
        let tolerated = try insideHop(setCookies: [Self.session, "SERVERID=s1; path=/"],
                                      upstream: Self.setCookies([Self.session]), policy: lb)
        XCTAssertEqual(tolerated.verdict, .tolerated)
    }

    func testAnAffinityCookieAddedToAResponseWithoutSetCookie() throws {
        let hop = try insideHop(setCookies: ["SERVERID=s1; path=/"], upstream: Self.setCookies([]))
        XCTAssertEqual(hop.response.differences.map(\.text), ["SERVERID added"])
        XCTAssertEqual(hop.response.differences.map(\.kind), [.fieldAdded])
        XCTAssertEqual(hop.response.differences.first?.field, "set-cookie")
    }

    func testARequestCookieThatLostOnePartNamesIt() throws {
        // The client sent JSESSIONID and SERVERID; the server got JSESSIONID only (HAProxy `indirect`).
        let hop = try insideHop(requestCookie: "JSESSIONID=abc; SERVERID=s1", upstream: { view in
            view.request?.fields.set("Cookie", "JSESSIONID=abc")
        })
        XCTAssertEqual(hop.request.differences.map(\.text), ["SERVERID removed"])
        XCTAssertEqual(hop.request.differences.map(\.kind), [.cookieRemoved])
        let lb = try VerificationPolicy.load(path: Self.loadBalancerPolicy)
        let tolerated = try insideHop(requestCookie: "JSESSIONID=abc; SERVERID=s1", upstream: { view in
            view.request?.fields.set("Cookie", "JSESSIONID=abc")
        }, policy: lb)
        XCTAssertEqual(tolerated.verdict, .tolerated)
        XCTAssertEqual(tolerated.request.differences.first?.toleratedBy,
                       "cookie SERVERID added or removed or changed (HAProxy affinity cookie (cookie SERVERID insert indirect))")
        let onlyAffinity = try insideHop(requestCookie: "SERVERID=s1", upstream: { view in _ = view.request?.fields.remove("Cookie") },
                                         policy: lb)
        XCTAssertEqual(onlyAffinity.request.differences.map(\.text), ["SERVERID removed"])
        XCTAssertEqual(onlyAffinity.verdict, .tolerated)
    }

    func testAMalformedSetCookieIsComparedAsOneOpaquePartAndSaysSo() throws {
        let hop = try insideHop(setCookies: ["JSESSIONID=abc; Path=/suite; =odd; Secure"],
                                upstream: Self.setCookies(["JSESSIONID=abc; Path=/; =odd; Secure"]))
        XCTAssertEqual(hop.response.differences.map(\.text),
                       ["JSESSIONID changed (malformed Set-Cookie, kept verbatim and compared as one opaque part)"])
        XCTAssertEqual(hop.verdict, .modified)
    }

    func testRedactedSetCookieIsRecordedPartByPart() {
        let field = RedactionPolicy().record(HTTPField(name: "Set-Cookie", value: Self.session))
        XCTAssertTrue(field.isRedacted)
        XCTAssertEqual(field.value, RedactionPolicy().redactedValue(Self.session))
        XCTAssertEqual(field.cookies, [CookieParts(name: "JSESSIONID", value: RedactionPolicy().redactedValue("abc"),
                                                   attributes: ["Path=/suite", "Secure", "HttpOnly"])])
        XCTAssertNil(RedactionPolicy(recordSecrets: true).record(HTTPField(name: "Set-Cookie", value: Self.session)).cookies)
    }

    private static let loadBalancerPolicy = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Examples/policies/load-balancer.json").path
}
