import XCTest
import Evidence
import HTTP

/// Every verdict kind and every named difference, on the path
/// client → proxy-a → server (hop 1: client → proxy-a, hop 2: inside proxy-a,
/// hop 3: proxy-a → server).
final class VerifierTests: XCTestCase {
    private typealias S = VerificationScenario

    private func verify(_ scenario: VerificationScenario, policy: VerificationPolicy = .strict) throws -> VerificationReport {
        try Verifier(Verifier.Configuration(policy: policy)).verify(scenario.recordings())
    }

    private func verdicts(_ exchange: VerifiedExchange) -> [HopVerdict] {
        exchange.hops.map(\.verdict)
    }

    func testUnchangedMessagesAreIdenticalOnEveryHop() throws {
        let report = try verify(S([S.exchange("/suite/rest/a", trace: "t1"), S.exchange("/suite/rest/b", trace: "t2")]))
        XCTAssertEqual(report.path.taps.map(\.name), ["client", "proxy-a", "server"])
        XCTAssertEqual(report.path.hops.map(\.label), ["client → proxy-a", "inside proxy-a", "proxy-a → server"])
        XCTAssertEqual(report.path.hops.map(\.kind), [.network, .inside, .network])
        XCTAssertEqual(report.exchanges.map(\.target), ["/suite/rest/a", "/suite/rest/b"])
        for exchange in report.exchanges {
            XCTAssertEqual(verdicts(exchange), [.identical, .identical, .identical])
            XCTAssertEqual(exchange.hops.map(\.pairing), [.trace, .sameRecord, .trace])
            XCTAssertEqual(exchange.records.map(\.tap), ["client", "proxy-a", "server"])
        }
        XCTAssertEqual(report.summary.count(.identical), 6)
        XCTAssertEqual(report.problems, [])
        XCTAssertTrue(report.policyHolds)
    }

    func testHTTP1ToHTTP2IsEquivalentAndSaysWhy() throws {
        var scenario = S([S.exchange("/suite/rest/a", trace: "t1", requestFields: [("Cookie", "JSESSIONID=abc; lb=1")])])
        // The proxy speaks HTTP/2 upstream: the server side sees lowercase names, no Host, cookie crumbs.
        scenario.alter = { place, view in
            guard place.leg == .upstream || place.tap == "server" else { return }
            view.request = view.request.map(S.asHTTP2)
            view.response = view.response.map(S.asHTTP2)
        }
        let report = try verify(scenario)
        let exchange = try XCTUnwrap(report.exchanges.first)
        XCTAssertEqual(verdicts(exchange), [.identical, .equivalent, .identical])
        let inside = exchange.hops[1]
        XCTAssertEqual(inside.request.outcome, .equivalent)
        let kinds = inside.request.reasons.map(\.kind)
        for kind in [Equivalence.Kind.version, .host, .cookieCrumbs, .fieldNameCase] {
            XCTAssertTrue(kinds.contains(kind), "\(kind) missing from \(kinds)")
        }
        XCTAssertTrue(inside.request.reasons.contains(Equivalence(kind: .cookieCrumbs, text: "cookie crumbs (1 → 2 fields)")))
        XCTAssertTrue(inside.request.reasons.contains(Equivalence(kind: .version, text: "version HTTP/1.1 → HTTP/2")))
        XCTAssertEqual(inside.response.outcome, .equivalent)
        XCTAssertTrue(inside.response.reasons.map(\.kind).contains(.version))
        XCTAssertEqual(inside.request.differences, [])
        XCTAssertTrue(report.policyHolds)
    }

    func testFramingAndHopByHopFieldsAreEquivalent() throws {
        var scenario = S([S.exchange("/suite/rest/a", trace: "t1")])
        scenario.alter = { place, view in
            guard place.tap == "client" || place.leg == .downstream else { return }
            view.request?.fields.append("Connection", "keep-alive")
            view.request?.fields.append("Keep-Alive", "timeout=5")
            _ = view.response?.fields.remove("Content-Length")
            view.response?.fields.append("Transfer-Encoding", "chunked")
        }
        let exchange = try XCTUnwrap(try verify(scenario).exchanges.first)
        XCTAssertEqual(verdicts(exchange), [.identical, .equivalent, .identical])
        XCTAssertEqual(exchange.hops[1].request.reasons.map(\.kind), [.hopByHop])
        XCTAssertEqual(exchange.hops[1].request.reasons.first?.text, "hop-by-hop fields (connection, keep-alive)")
        XCTAssertTrue(exchange.hops[1].response.reasons.contains(
            Equivalence(kind: .framing, text: "framing (content-length, transfer-encoding)")), "\(exchange.hops[1].response.reasons)")
    }

    func testModifiedRequestNamesEachFieldTheTargetAndTheBody() throws {
        var scenario = S([S.exchange("/suite/auth", trace: "t1", method: "POST", body: "un=alice",
                                     requestFields: [("X-Mode", "mobile"), ("Accept", "text/html")])])
        scenario.alter = { place, view in
            guard place.leg == .upstream || place.tap == "server" else { return }
            view.request?.fields.append("Via", "1.1 lb")
            _ = view.request?.fields.remove("Accept")
            view.request?.fields.set("X-Mode", "web")
            view.request?.path = "/internal/auth"
            view.requestBody = Array("un=alice&x=1".utf8)
        }
        let exchange = try XCTUnwrap(try verify(scenario).exchanges.first)
        XCTAssertEqual(verdicts(exchange), [.identical, .modified, .identical])
        let request = exchange.hops[1].request
        XCTAssertEqual(request.outcome, .modified)
        XCTAssertEqual(request.differences.map(\.kind), [.targetChanged, .fieldRemoved, .fieldAdded, .fieldChanged, .bodyChanged])
        XCTAssertEqual(request.differences.map(\.text), [
            "target changed (https://app.test/suite/auth → https://app.test/internal/auth)",
            "Accept removed (text/html)",
            "Via added (1.1 lb)",
            "X-Mode changed (mobile → web)",
            "body changed (8 → 12 bytes)",
        ])
        XCTAssertEqual(request.differences[2].field, "via")
        XCTAssertEqual(request.differences[2].after, "1.1 lb")
        XCTAssertEqual(request.differences[3].before, "mobile")
        XCTAssertEqual(request.differences[4].before, "8")
        XCTAssertEqual(request.differences[4].after, "12")
        XCTAssertTrue(request.differences.allSatisfy { $0.toleratedBy == nil })
        XCTAssertEqual(exchange.hops[1].response.outcome, .identical)
        XCTAssertEqual(exchange.verdict, .modified)
    }

    func testModifiedResponseNamesStatusSecretsAndMethod() throws {
        var scenario = S([S.exchange("/suite/rest/a", trace: "t1", responseFields: [("Set-Cookie", "JSESSIONID=abc; Path=/suite")])])
        scenario.alter = { place, view in
            // The proxy turns the 200 into a 302, drops Set-Cookie and rewrites the method upstream.
            if place.tap == "client" || place.leg == .downstream {
                view.response?.status = 302
                _ = view.response?.fields.remove("Set-Cookie")
            } else {
                view.request?.method = "HEAD"
            }
        }
        let exchange = try XCTUnwrap(try verify(scenario).exchanges.first)
        let inside = exchange.hops[1]
        XCTAssertEqual(inside.response.differences.map(\.text), ["status 200 → 302", "JSESSIONID removed"])
        XCTAssertEqual(inside.response.differences.first?.before, "200")
        XCTAssertEqual(inside.response.differences.first?.after, "302")
        XCTAssertEqual(inside.response.differences[1].cookie, "JSESSIONID")
        XCTAssertNil(inside.response.differences[1].before, "a secret is never shown, not even as its digest")
        XCTAssertEqual(inside.request.differences.map(\.kind), [.methodChanged])
        XCTAssertEqual(inside.request.differences.first?.text, "method GET → HEAD")
    }

    func testSecretValueChangeIsNamedWithoutTheValue() throws {
        var scenario = S([S.exchange("/suite/rest/a", trace: "t1", requestFields: [("Cookie", "JSESSIONID=abc")])])
        scenario.alter = { place, view in
            if place.leg == .upstream || place.tap == "server" { view.request?.fields.set("Cookie", "JSESSIONID=evil") }
        }
        let request = try XCTUnwrap(try verify(scenario).exchanges.first).hops[1].request
        XCTAssertEqual(request.differences.map(\.text), ["JSESSIONID: value changed (secret)"])
        XCTAssertEqual(request.differences.map(\.kind), [.cookieChanged])
        XCTAssertNil(request.differences[0].after, "the secret value is never shown")
    }

    func testMissingRequestAndMissingResponse() throws {
        var scenario = S([S.exchange("/blocked", trace: "t1"), S.exchange("/lost", trace: "t2")])
        scenario.alter = { place, view in
            switch (place.exchange, place.tap) {
            case (0, "client"): view.response = nil          // the client sent it and got nothing back
            case (0, _): view = VerificationScenario.View(requestBody: [], responseBody: [])  // nobody else saw it
            case (1, "server"): break                        // the server answered…
            case (1, _): view.response = nil                 // …and the answer never reached the proxy
            default: break
            }
        }
        let report = try verify(scenario)
        let blocked = report.exchanges[0], lost = report.exchanges[1]
        XCTAssertEqual(verdicts(blocked), [.missing, .notReached, .notReached])
        XCTAssertEqual(blocked.hops[0].request.outcome, .missing)
        XCTAssertEqual(blocked.hops[0].request.before?.target, "/blocked")
        XCTAssertNil(blocked.hops[0].pairing)
        XCTAssertEqual(verdicts(lost), [.identical, .identical, .missing])
        XCTAssertEqual(lost.hops[2].response.outcome, .missing)
        XCTAssertEqual(lost.hops[2].response.before?.status, 200)
        XCTAssertEqual(lost.hops[2].notes(report.path.hops[2]),
                       ["response missing: 200 left server, never reached proxy-a"])
        XCTAssertEqual(lost.verdict, .missing)
        XCTAssertFalse(report.policyHolds)
    }

    func testForeignResponseFromTheProxyItself() throws {
        var scenario = S([S.exchange("/suite/rest/a", trace: "t1")])
        scenario.alter = { place, view in
            switch (place.tap, place.leg) {
            case ("server", _), ("proxy-a", .upstream):
                view = VerificationScenario.View(requestBody: [], responseBody: [])
            default:
                view.response = HTTPResponseHead(status: 503, fields: ["Content-Type": "text/html"])
                view.responseBody = Array("<h1>Maintenance</h1>".utf8)
            }
        }
        let report = try verify(scenario)
        let exchange = try XCTUnwrap(report.exchanges.first)
        XCTAssertEqual(verdicts(exchange), [.identical, .foreign, .notReached])
        XCTAssertEqual(exchange.hops[1].request.outcome, .missing)
        XCTAssertEqual(exchange.hops[1].response.outcome, .foreign)
        XCTAssertEqual(exchange.hops[1].response.after?.status, 503)
        XCTAssertEqual(exchange.records.map(\.tap), ["client", "proxy-a"])
        XCTAssertTrue(exchange.hops[1].notes(report.path.hops[1]).contains(
            "response foreign: 503 reached proxy-a downstream but never left proxy-a upstream (an intermediary answered in the server's place)"))
        XCTAssertEqual(exchange.verdict, .foreign)
        XCTAssertFalse(report.policyHolds)
    }

    func testForeignResponseOnTheNetworkBeforeTheProxy() throws {
        var scenario = S([S.exchange("/suite/rest/a", trace: "t1")])
        scenario.alter = { place, view in
            if place.tap == "client" {
                view.response = HTTPResponseHead(status: 302, fields: ["Location": "https://gateway.test/login"])
            } else {
                view = VerificationScenario.View(requestBody: [], responseBody: [])
            }
        }
        let exchange = try XCTUnwrap(try verify(scenario).exchanges.first)
        XCTAssertEqual(verdicts(exchange), [.foreign, .notReached, .notReached])
        XCTAssertEqual(exchange.hops[0].request.outcome, .missing)
        XCTAssertEqual(exchange.hops[0].response.outcome, .foreign)
    }

    func testBrokenExchangeSaysWhere() throws {
        var scenario = S([S.exchange("/suite/mobileAuthTokenConsumer", trace: "t1", method: "POST", body: "token=x")])
        scenario.alter = { place, view in
            if place.tap != "server" { view.response = nil }
        }
        scenario.decorate = { tap, _, record in
            if tap == "proxy-a" {
                record.error = ExchangeRecord.Failure(kind: .reset, location: "upstream response head", message: "connection reset by peer")
            }
            if tap == "client" {
                record.error = ExchangeRecord.Failure(kind: .closedEarly, location: "client response", message: "closed before the head")
            }
        }
        let report = try verify(scenario)
        let exchange = try XCTUnwrap(report.exchanges.first)
        XCTAssertEqual(verdicts(exchange), [.broken, .broken, .broken])
        XCTAssertEqual(exchange.hops[2].failures.map(\.description),
                       ["proxy-a, upstream response head: reset: connection reset by peer"])
        XCTAssertEqual(exchange.hops[0].failures.map(\.tap), ["client", "proxy-a"])
        XCTAssertTrue(exchange.hops[2].notes(report.path.hops[2]).contains(
            "broken: proxy-a, upstream response head: reset: connection reset by peer"))
        XCTAssertEqual(report.summary.count(.broken), 3)
    }

    func testIncompleteMessageWithAFailureIsBroken() throws {
        var scenario = S([S.exchange("/suite/rest/a", trace: "t1")])
        scenario.alter = { place, view in
            if place.tap == "client" {
                view.responseComplete = false
                view.responseBody = Array(view.responseBody.prefix(3))
            }
        }
        scenario.decorate = { tap, _, record in
            if tap == "client" { record.error = ExchangeRecord.Failure(kind: .timeout, location: "client response body", message: "no data for 30 s") }
        }
        let exchange = try XCTUnwrap(try verify(scenario).exchanges.first)
        XCTAssertEqual(verdicts(exchange), [.broken, .identical, .identical])
        XCTAssertEqual(exchange.hops[0].response.after?.complete, false)
    }

    func testAFailureAfterEverythingCrossedStillBreaksTheTapsOwnHop() throws {
        var scenario = S([S.exchange("/suite/rest/a", trace: "t1")])
        scenario.decorate = { tap, _, record in
            if tap == "proxy-a" { record.error = ExchangeRecord.Failure(kind: .internal, location: "downstream", message: "writer failed") }
        }
        let exchange = try XCTUnwrap(try verify(scenario).exchanges.first)
        XCTAssertEqual(verdicts(exchange), [.identical, .broken, .identical])
        XCTAssertEqual(exchange.hops[0].failures.map(\.tap), ["proxy-a"], "listed where seen, not breaking a hop that crossed whole")
    }

    func testPolicyToleratesNamedFieldsAndShowsThem() throws {
        var scenario = S([S.exchange("/suite/rest/a", trace: "t1", requestFields: [("X-Forwarded-For", "10.0.0.1")])])
        scenario.alter = { place, view in
            guard place.leg == .upstream || place.tap == "server" else { return }
            view.request?.fields.append("Via", "1.1 lb")
            view.request?.fields.set("X-Forwarded-For", "10.0.0.1, 10.0.0.2")
        }
        let strict = try verify(scenario)
        XCTAssertEqual(strict.exchanges[0].hops[1].verdict, .modified)
        XCTAssertFalse(strict.policyHolds)

        let policy = VerificationPolicy(name: "lb", tolerations: [
            Toleration(.field("via"), message: .request, reason: "the LB announces itself"),
            Toleration(.field("x-forwarded-for"), changes: [.added, .changed]),
        ])
        let tolerant = try verify(scenario, policy: policy)
        let request = tolerant.exchanges[0].hops[1].request
        XCTAssertEqual(tolerant.exchanges[0].hops[1].verdict, .tolerated)
        XCTAssertEqual(request.outcome, .tolerated)
        XCTAssertEqual(request.differences.map(\.text), ["Via added (1.1 lb)", "X-Forwarded-For changed (10.0.0.1 → 10.0.0.1, 10.0.0.2)"])
        XCTAssertEqual(request.differences.map(\.toleratedBy), [
            "field via added in requests (the LB announces itself)", "field x-forwarded-for added or changed",
        ])
        XCTAssertTrue(tolerant.policyHolds)
        XCTAssertEqual(tolerant.summary.count(.tolerated), 1)
    }

    func testPolicyScopeAndKindAreRespected() throws {
        var scenario = S([S.exchange("/suite/rest/a", trace: "t1")])
        scenario.alter = { place, view in
            guard place.tap == "client" || place.leg == .downstream else { return }
            view.response?.fields.append("Via", "1.1 lb")
        }
        let requestsOnly = VerificationPolicy(name: "p", tolerations: [Toleration(.field("via"), message: .request)])
        XCTAssertEqual(try verify(scenario, policy: requestsOnly).exchanges[0].hops[1].verdict, .modified)
        let removalsOnly = VerificationPolicy(name: "p", tolerations: [Toleration(.field("via"), changes: [.removed])])
        XCTAssertEqual(try verify(scenario, policy: removalsOnly).exchanges[0].hops[1].verdict, .modified)
        let both = VerificationPolicy(name: "p", tolerations: [Toleration(.field("via"))])
        XCTAssertEqual(try verify(scenario, policy: both).exchanges[0].hops[1].verdict, .tolerated)
    }

    func testAffinityCookieToleratedWhetherCookiesAreRedactedOrInClear() throws {
        var scenario = S([S.exchange("/suite/rest/a", trace: "t1", requestFields: [("Cookie", "JSESSIONID=abc")],
                                     responseFields: [("Set-Cookie", "JSESSIONID=abc; Path=/suite")])])
        scenario.alter = { place, view in
            if place.leg == .upstream || place.tap == "server" {
                view.request?.fields.set("Cookie", "JSESSIONID=abc; SERVERID=s1")
            } else {
                view.response?.fields.append("Set-Cookie", "SERVERID=s1; Path=/")
            }
        }
        let policy = VerificationPolicy(name: "affinity", tolerations: [Toleration(.cookie("SERVERID"), reason: "affinity")])
        let redacted = try verify(scenario, policy: policy).exchanges[0].hops[1]
        XCTAssertEqual(redacted.verdict, .tolerated, "redacted cookies are recorded part by part")
        XCTAssertEqual(redacted.request.differences.map(\.text), ["SERVERID added"])
        XCTAssertEqual(redacted.response.differences.map(\.text), ["SERVERID added"])
        XCTAssertEqual(redacted.request.differences.map(\.kind), [.cookieAdded])

        scenario.redaction = RedactionPolicy(recordSecrets: true)
        let clear = try verify(scenario, policy: policy).exchanges[0].hops[1]
        XCTAssertEqual(clear.verdict, .tolerated)
        XCTAssertEqual(clear.request.differences.map(\.toleratedBy), ["cookie SERVERID added (affinity)"])
        XCTAssertEqual(clear.response.differences.map(\.toleratedBy), ["cookie SERVERID added (affinity)"])

        var changed = scenario
        changed.alter = { place, view in
            if place.leg == .upstream || place.tap == "server" { view.request?.fields.set("Cookie", "JSESSIONID=other") }
        }
        XCTAssertEqual(try verify(changed, policy: policy).exchanges[0].hops[1].verdict, .modified,
                       "a cookie rule for SERVERID does not cover JSESSIONID")
    }

    func testInjectedFaultsAreShownBesideTheProxysOwnHop() throws {
        var scenario = S([S.exchange("/suite/mobileAuthTokenConsumer", trace: "t1", step: "bootstrap",
                                     responseFields: [("Set-Cookie", "JSESSIONID=abc")])])
        scenario.alter = { place, view in
            if place.tap == "client" || place.leg == .downstream { _ = view.response?.fields.remove("Set-Cookie") }
        }
        scenario.decorate = { tap, _, record in
            if tap == "proxy-a" { record.faults = [ExchangeRecord.RecordedFault(name: "strip-set-cookie", detail: "removed 1 Set-Cookie")] }
        }
        let report = try verify(scenario)
        let exchange = try XCTUnwrap(report.exchanges.first)
        XCTAssertEqual(exchange.hops.map(\.injected.count), [0, 1, 0])
        XCTAssertEqual(exchange.hops[1].verdict, .modified, "an injected fault still fails the policy: it is shown, not excused")
        XCTAssertEqual(exchange.hops[1].notes(report.path.hops[1]), [
            "response modified: JSESSIONID removed",
            "injected on purpose: strip-set-cookie (removed 1 Set-Cookie)",
        ])
        XCTAssertEqual(report.summary.injectedHops, 1)
        XCTAssertFalse(report.policyHolds)
    }

    func testClientAndServerFaultsShowOnTheirNeighbouringHop() throws {
        var scenario = S([S.exchange("/a", trace: "t1")])
        scenario.decorate = { tap, _, record in
            if tap != "proxy-a" { record.faults = [ExchangeRecord.RecordedFault(name: "latency-\(tap)")] }
        }
        let exchange = try XCTUnwrap(try verify(scenario).exchanges.first)
        XCTAssertEqual(exchange.hops.map { $0.injected.map(\.name) }, [["latency-client"], [], ["latency-server"]])
    }
}
