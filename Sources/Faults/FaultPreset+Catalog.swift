import AuthFlow
extension FaultPreset {
    /// Every preset, in the order of `FAULTS.md`'s table. Each is made only of
    /// ordinary rules and actions, so a rule file can do the same.
    public static let catalog: [FaultPreset] = [
        authRedirect, html401, foreignResponse, gatewayCookie, stripSetCookie, rewriteSetCookie, stripCookie,
        rewriteURLs, dropChallenge, alterTokenPost, compress, clientCertRequired, resetTokenPost, latency,
    ]

    private static let gatewayLogin = "https://gateway.example.test/login"

    static let authRedirect = FaultPreset(
        name: "auth-redirect",
        summary: "an unauthenticated 401 becomes a 302 to a gateway login page",
        reference: "steps 3–4; Network Requirements",
        breaks: [.step4Keys, .directCommunication],
        clientSees: "no 401 JSON: it cannot tell it is talking to the server",
        parameters: [FaultPresetParameter(name: "location", defaultValue: gatewayLogin, meaning: "the gateway's login page")]
    ) { args throws(FaultPresetError) in
        let location = try args.string("location")
        return [FaultRule(name: "auth-redirect", match: FaultMatch(leg: .response, statuses: [401]), actions: [
            .setStatus(status: 302, reason: nil, location: location),
            .removeHeader(name: "WWW-Authenticate"),
            .replaceBody(body: CannedResponse.htmlPage(title: "Sign in", detail: "Continue at \(location)."),
                         contentType: CannedResponse.htmlContentType),
        ])]
    }

    static let html401 = FaultPreset(
        name: "html-401",
        summary: "the 401 body is replaced by an HTML error page",
        reference: "step 4",
        breaks: [.step4Keys],
        clientSees: "a 401 without the contextUrl and tokenUrl keys"
    ) { _ throws(FaultPresetError) in
        [FaultRule(name: "html-401", match: FaultMatch(leg: .response, statuses: [401]), actions: [
            .replaceBody(body: CannedResponse.htmlPage(title: "401 Authorization Required", detail: "This server could not verify that you are authorized."),
                         contentType: CannedResponse.htmlContentType),
        ])]
    }

    private enum ForeignKind: String, CaseIterable { case maintenance, block }

    static let foreignResponse = FaultPreset(
        name: "foreign-response",
        summary: "the intermediary answers itself (maintenance page or block page)",
        reference: "Network Requirements",
        breaks: [.onlyAppianResponses],
        clientSees: "a response the server never sent",
        parameters: [
            FaultPresetParameter(name: "kind", defaultValue: "maintenance", meaning: "maintenance (503) or block (403)"),
            FaultPresetParameter(name: "status", defaultValue: nil, meaning: "another status for the page"),
        ]
    ) { args throws(FaultPresetError) in
        let kind = try args.choice("kind", ForeignKind.self)
        let status = args.optionalString("status") == nil ? (kind == .maintenance ? 503 : 403) : try args.int("status", in: 200...599)
        let page = kind == .maintenance
            ? CannedResponse(status: status, fields: [("Retry-After", "600")], html: "Down for maintenance", detail: "The service is temporarily unavailable.")
            : CannedResponse(status: status, fields: [], html: "Request blocked", detail: "This request was blocked by the security policy.")
        return [FaultRule(name: "foreign-response", match: FaultMatch(leg: .request), actions: [.answer(page)])]
    }

    static let gatewayCookie = FaultPreset(
        name: "gateway-cookie",
        summary: "a gateway demands its own session cookie before forwarding",
        reference: "Network Requirements",
        breaks: [.noAuthenticationCookies],
        clientSees: "redirected or blocked until it has a cookie it cannot get",
        parameters: [
            FaultPresetParameter(name: "cookie", defaultValue: "GATEWAY_SESSION", meaning: "the cookie the gateway requires"),
            FaultPresetParameter(name: "status", defaultValue: "302", meaning: "302 (redirect to the login page), 401 or 403"),
            FaultPresetParameter(name: "location", defaultValue: gatewayLogin, meaning: "the gateway's login page (with 302)"),
        ]
    ) { args throws(FaultPresetError) in
        let cookie = try args.string("cookie")
        let status = try args.int("status", in: 100...599)
        let denial: Gate.Denial
        switch status {
        case 302: denial = .redirect(location: try args.string("location"))
        case 401, 403: denial = .status(status)
        default: throw .invalidValue(preset: "gateway-cookie", parameter: "status", value: String(status), reason: "302, 401 or 403")
        }
        return [FaultRule(name: "gateway-cookie", match: FaultMatch(leg: .request),
                          actions: [.gate(Gate(requirement: .cookie(cookie), denial: denial))])]
    }

    static let stripSetCookie = FaultPreset(
        name: "strip-set-cookie",
        summary: "the bootstrap response loses its Set-Cookie fields",
        reference: "step 11; Network Requirements",
        breaks: [.step11Bootstrap, .unmodified],
        clientSees: "signed in, but the next request is 401 again",
        parameters: [FaultPresetParameter(name: "cookie", defaultValue: nil, meaning: "strip only this cookie (default: all)")]
    ) { args throws(FaultPresetError) in
        [FaultRule(name: "strip-set-cookie", match: FaultMatch(leg: .response, steps: [.bootstrap]),
                   actions: [.removeSetCookie(cookie: args.optionalString("cookie"))])]
    }

    private enum CookieMode: String, CaseIterable { case path, domain, secure, samesite, fold, affinity }

    static let rewriteSetCookie = FaultPreset(
        name: "rewrite-set-cookie",
        summary: "cookie attributes changed (Path, Domain, Secure, SameSite), fields folded, or an affinity cookie added",
        reference: "step 11; Network Requirements",
        breaks: [.unmodified],
        clientSees: "cookies not sent back, or changed",
        parameters: [
            FaultPresetParameter(name: "mode", defaultValue: "path", meaning: "path, domain, secure, samesite, fold or affinity"),
            FaultPresetParameter(name: "cookie", defaultValue: "JSESSIONID", meaning: "the cookie whose attributes change"),
            FaultPresetParameter(name: "path", defaultValue: "/wrong", meaning: "the new Path (mode=path)"),
            FaultPresetParameter(name: "domain", defaultValue: "gateway.example.test", meaning: "the new Domain (mode=domain)"),
            FaultPresetParameter(name: "samesite", defaultValue: "Strict", meaning: "the new SameSite (mode=samesite)"),
            FaultPresetParameter(name: "affinity", defaultValue: "INTACT_LB=node-1; Path=/; HttpOnly", meaning: "the Set-Cookie value added (mode=affinity)"),
        ]
    ) { args throws(FaultPresetError) in
        let cookie = try args.string("cookie")
        let action: FaultAction
        switch try args.choice("mode", CookieMode.self) {
        case .path: action = .rewriteSetCookie(cookie: cookie, edit: SetCookieEdit(attributes: [("Path", .set(try args.string("path")))]))
        case .domain: action = .rewriteSetCookie(cookie: cookie, edit: SetCookieEdit(attributes: [("Domain", .set(try args.string("domain")))]))
        case .secure: action = .rewriteSetCookie(cookie: cookie, edit: SetCookieEdit(attributes: [("Secure", .remove)]))
        case .samesite: action = .rewriteSetCookie(cookie: cookie, edit: SetCookieEdit(attributes: [("SameSite", .set(try args.string("samesite")))]))
        case .fold: action = .foldSetCookie
        case .affinity: action = .addSetCookie(value: try args.string("affinity"))
        }
        return [FaultRule(name: "rewrite-set-cookie", match: FaultMatch(leg: .response, steps: [.bootstrap]), actions: [action])]
    }

    static let stripCookie = FaultPreset(
        name: "strip-cookie",
        summary: "requests lose their Cookie field",
        reference: "Network Requirements",
        breaks: [.unmodified],
        clientSees: "the session is lost after sign-in",
        parameters: [FaultPresetParameter(name: "cookie", defaultValue: nil, meaning: "strip only this cookie (default: the whole field)")]
    ) { args throws(FaultPresetError) in
        let action: FaultAction = args.optionalString("cookie").map { .removeCookie(cookie: $0) } ?? .removeHeader(name: "Cookie")
        return [FaultRule(name: "strip-cookie", match: FaultMatch(leg: .request), actions: [action])]
    }

    static let rewriteURLs = FaultPreset(
        name: "rewrite-urls",
        summary: "contextUrl, tokenUrl and Location rewritten to an internal host or to http",
        reference: "steps 3, 7, 9",
        breaks: [.step3Challenge, .step7Callback, .step9TokenURL],
        clientSees: "the token posted to the wrong place, or the callback not delivered",
        parameters: [
            FaultPresetParameter(name: "host", defaultValue: "internal.example.test", meaning: "the host URLs are rewritten to"),
            FaultPresetParameter(name: "scheme", defaultValue: nil, meaning: "http or https (default: unchanged)"),
        ]
    ) { args throws(FaultPresetError) in
        let host = try args.string("host")
        let scheme = args.optionalString("scheme") == nil ? nil : try args.choice("scheme", URLRewrite.Scheme.self).rawValue
        return [FaultRule(name: "rewrite-urls", match: FaultMatch(leg: .response), actions: [
            .rewriteURLs(URLRewrite(scheme: scheme, host: host), places: [.location, .body]),
        ])]
    }

    private enum ChallengeMode: String, CaseIterable { case strip, alter }

    static let dropChallenge = FaultPreset(
        name: "drop-challenge",
        summary: "codeChallenge stripped from or altered in the login URL",
        reference: "steps 5, 10",
        breaks: [.step5LoginURL, .step10Session],
        clientSees: "the token exchange rejected",
        parameters: [FaultPresetParameter(name: "mode", defaultValue: "strip", meaning: "strip the parameter or alter its value")]
    ) { args throws(FaultPresetError) in
        let action: FaultAction
        switch try args.choice("mode", ChallengeMode.self) {
        case .strip:
            action = .regexTarget(try args.regex("(?<=[?&])codeChallenge=[^&#]*&|[?&]codeChallenge=[^&#]*(?=$|#)", for: "mode"), template: "")
        case .alter:
            action = .regexTarget(try args.regex("(codeChallenge=)[^&#]*", for: "mode"), template: "$1" + String(repeating: "A", count: 43))
        }
        return [FaultRule(name: "drop-challenge", match: FaultMatch(leg: .request, steps: [.loginPage]), actions: [action])]
    }

    private enum TokenMode: String, CaseIterable { case alter, reencode }

    static let alterTokenPost = FaultPreset(
        name: "alter-token-post",
        summary: "the token POST body changed, or re-encoded with the same meaning",
        reference: "steps 9–10; Network Requirements",
        breaks: [.step9TokenURL, .step10Session, .unmodified],
        clientSees: "the token rejected (alter), or a modified request reported (reencode)",
        parameters: [
            FaultPresetParameter(name: "mode", defaultValue: "alter", meaning: "alter the field's value, or reencode (percent-encode - and _)"),
            FaultPresetParameter(name: "field", defaultValue: "token", meaning: "the form field altered (mode=alter)"),
        ]
    ) { args throws(FaultPresetError) in
        let actions: [FaultAction]
        switch try args.choice("mode", TokenMode.self) {
        case .alter:
            let field = CompiledRegex.literal(try args.string("field"))
            actions = [.regexBody(try args.regex("(^|&)(\(field)=)", for: "field"), template: "$1$2altered-")]
        case .reencode:
            actions = [.regexBody(try args.regex("-", for: "mode"), template: "%2D"),
                       .regexBody(try args.regex("_", for: "mode"), template: "%5F")]
        }
        return [FaultRule(name: "alter-token-post", match: FaultMatch(leg: .request, steps: [.tokenPost]), actions: actions)]
    }

    static let compress = FaultPreset(
        name: "compress",
        summary: "responses gzip-encoded by the intermediary",
        reference: "Network Requirements (strict)",
        breaks: [.unmodified],
        clientSees: "the same meaning in different bytes: reported as modified, with the cause"
    ) { _ throws(FaultPresetError) in
        [FaultRule(name: "compress", match: FaultMatch(leg: .response), actions: [.gzipBody])]
    }

    static let clientCertRequired = FaultPreset(
        name: "client-cert-required",
        summary: "the gateway requires a client certificate",
        reference: "Client Certificates",
        breaks: [.certificateGateway, .clientCertificateImport],
        clientSees: "without a certificate: a TLS failure with a diagnosis; with one: success",
        parameters: [FaultPresetParameter(name: "ca", defaultValue: nil,
                                           meaning: "PEM file of the CA client certificates must chain to (default: the proxy's own CA)")]
    ) { args throws(FaultPresetError) in
        [FaultRule(name: "client-cert-required", match: FaultMatch(leg: nil),
                   actions: [.requireClientCertificate(caFile: args.optionalString("ca"))])]
    }

    static let resetTokenPost = FaultPreset(
        name: "reset-token-post",
        summary: "the connection is reset during the token POST",
        reference: "steps 9–11",
        breaks: [.step9TokenURL, .step10Session, .step11Bootstrap],
        clientSees: "a broken exchange, and where it broke",
        parameters: [
            FaultPresetParameter(name: "leg", defaultValue: "response", meaning: "request (before the server has the token) or response (after it used it)"),
            FaultPresetParameter(name: "at", defaultValue: "before-headers", meaning: "before-headers, after-headers or after-body-bytes"),
            FaultPresetParameter(name: "bytes", defaultValue: nil, meaning: "body bytes forwarded first (at=after-body-bytes)"),
        ]
    ) { args throws(FaultPresetError) in
        let leg = try args.choice("leg", FaultLeg.self)
        let point: ResetPoint
        switch try args.choice("at", ResetPoint.Name.self) {
        case .beforeHeaders: point = .beforeHeaders
        case .afterHeaders: point = .afterHeaders
        case .afterBodyBytes: point = .afterBodyBytes(try args.int("bytes", in: 0...Int.max))
        }
        // The response leg sees the step the response tells: a token POST answered 200 is the bootstrap.
        let steps: Set<AuthStep> = leg == .request ? [.tokenPost] : [.tokenPost, .bootstrap]
        return [FaultRule(name: "reset-token-post", match: FaultMatch(leg: leg, steps: steps), actions: [.reset(point)])]
    }

    static let latency = FaultPreset(
        name: "latency",
        summary: "delay and jitter on every exchange",
        reference: "— (resilience)",
        breaks: [],
        clientSees: "slower, still correct",
        parameters: [
            FaultPresetParameter(name: "ms", defaultValue: "200", meaning: "the delay before each response, in milliseconds"),
            FaultPresetParameter(name: "jitter", defaultValue: "50", meaning: "up to this many milliseconds more or less, drawn with --seed"),
        ]
    ) { args throws(FaultPresetError) in
        let ms = try args.int("ms", in: 0...3_600_000)
        let jitter = try args.int("jitter", in: 0...3_600_000)
        return [FaultRule(name: "latency", match: FaultMatch(leg: .response), actions: [.delay(milliseconds: ms, jitter: jitter)])]
    }
}
