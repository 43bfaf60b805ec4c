import Evidence
import HTTP

/// One report with a verdict of every kind, for the renderer tests: five
/// sign-in exchanges through client → proxy-a → server.
///
/// 1. challenge-401 `/suite/rest/a`: HTTP/2 upstream → equivalent inside proxy-a.
/// 2. login-page `/suite?x=<b>`: `Via` added (tolerated by the lb policy), inferred pairing.
/// 3. credentials-post `/suite/auth`: `Set-Cookie` stripped by an injected fault → modified.
/// 4. token-post `/suite/mobileAuthTokenConsumer`: reset upstream → broken.
/// 5. authenticated-request `/suite/rest/b`: the proxy answered 503 itself → foreign.
/// 6. authenticated-request `/suite/rest/c`: blocked by the proxy → missing.
enum ReportSamples {
    private typealias S = VerificationScenario

    static let policy = VerificationPolicy(name: "lb", description: "the load balancer may announce itself",
                                           tolerations: [Toleration(.field("via"), message: .request, reason: "LB")])

    static func scenario() -> VerificationScenario {
        var scenario = S([
            S.exchange("/suite/rest/a", trace: "t1", step: "challenge-401", requestFields: [("Cookie", "a=1; b=2")]),
            S.exchange("/suite?x=<b>", step: "login-page"),
            S.exchange("/suite/auth", trace: "t3", step: "credentials-post", method: "POST", body: "un=alice",
                       responseFields: [("Set-Cookie", "JSESSIONID=abc")]),
            S.exchange("/suite/mobileAuthTokenConsumer", trace: "t4", step: "token-post", method: "POST", body: "token=x"),
            S.exchange("/suite/rest/b", trace: "t5", step: "authenticated-request"),
            S.exchange("/suite/rest/c", trace: "t6", step: "authenticated-request"),
        ])
        scenario.alter = { place, view in
            let serverSide = place.leg == .upstream || place.tap == "server"
            switch place.exchange {
            case 0 where serverSide:
                view.request = view.request.map(S.asHTTP2)
                view.response = view.response.map(S.asHTTP2)
            case 1 where serverSide:
                view.request?.fields.append("Via", "1.1 lb")
            case 2 where !serverSide:
                _ = view.response?.fields.remove("Set-Cookie")
            case 3 where place.tap != "server":
                view.response = nil
            case 4 where serverSide:
                view = S.View(requestBody: [], responseBody: [])
            case 4:
                view.response = HTTPResponseHead(status: 503, fields: ["Content-Type": "text/html"])
            case 5 where place.tap != "client":
                view = S.View(requestBody: [], responseBody: [])
            case 5:
                view.response = nil
            default:
                break
            }
        }
        scenario.decorate = { tap, exchange, record in
            guard tap == "proxy-a" else { return }
            if exchange == 2 { record.faults = [ExchangeRecord.RecordedFault(name: "strip-set-cookie", detail: "removed 1 Set-Cookie")] }
            if exchange == 3 {
                record.error = ExchangeRecord.Failure(kind: .reset, location: "upstream response head", message: "connection reset by peer")
            }
        }
        return scenario
    }

    static func report() throws -> VerificationReport {
        try Verifier(Verifier.Configuration(policy: policy)).verify(scenario().recordings())
    }
}
