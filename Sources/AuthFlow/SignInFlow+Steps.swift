import Foundation
import HTTP

/// The steps of the run: each checks the answer to the request in flight and
/// makes the next request (or ends the run).
extension SignInFlow {
    /// Checks `r` against the current state; returns the next state, or nil when the run succeeded.
    mutating func advance(_ r: Received, log: inout CheckLog, now: Date) throws(FlowFailure) -> State? {
        switch state {
        case .protectedRequest:
            return try afterProtectedRequest(r, log: &log, now: now)
        case .loginPage(_, let challenge, let proof):
            return try afterLoginPage(r, challenge: challenge, proof: proof, log: &log, now: now)
        case .credentials(_, let challenge, let proof, let confirmed):
            return try afterCredentials(r, challenge: challenge, proof: proof, challengeConfirmed: confirmed, log: &log, now: now)
        case .tokenExchange(_, let challenge, let confirmed):
            return try afterTokenExchange(r, challenge: challenge, challengeConfirmed: confirmed, log: &log, now: now)
        case .followUp:
            try afterFollowUp(r, log: &log)
            return nil
        case .finished:
            return nil
        }
    }

    /// Steps 2–5: the 401 with contextUrl and tokenUrl, then PKCE and the login URL.
    private mutating func afterProtectedRequest(_ r: Received, log: inout CheckLog, now: Date) throws(FlowFailure) -> State {
        if r.isRedirect { throw redirectInsteadOfChallenge(r) }
        try screen(r, log: &log)
        guard r.status == 401 else { throw notAChallenge(r) }
        log.pass("status 401")
        guard r.isJSON, let object = JSONBody.decodeObject(r.body) else {
            throw FlowFailure(mode: .html401, evidence: "401 with \(r.contentType ?? "no Content-Type") and a body that is not a JSON object (\(r.body.count) bytes)")
        }
        guard let context = object["contextUrl"] as? String, let token = object["tokenUrl"] as? String else {
            throw FlowFailure(mode: .html401, evidence: "401 JSON without string keys contextUrl and tokenUrl (keys: \(object.keys.sorted().joined(separator: ", ")))")
        }
        log.pass("JSON with contextUrl and tokenUrl")
        let origin = r.request.url.origin
        guard let contextURL = AbsoluteURL(context), contextURL.origin.scheme == "https",
              let tokenURL = AbsoluteURL(token), tokenURL.origin.scheme == "https" else {
            throw FlowFailure(mode: .rewriteURLs, evidence: "contextUrl \(context) / tokenUrl \(token): not both absolute https URLs",
                              sentence: .step3Challenge)
        }
        guard contextURL.origin == origin else {
            throw FlowFailure(mode: .rewriteURLs, evidence: "context URL mismatch: contextUrl \(context) is not on \(origin), where the request went",
                              sentence: .step3Challenge)
        }
        guard tokenURL.origin == origin else {
            throw FlowFailure(mode: .rewriteURLs, evidence: "context URL mismatch: tokenUrl \(token) is not on \(origin), where the request went",
                              sentence: .step9TokenURL)
        }
        log.pass("contextUrl and tokenUrl are https URLs on \(origin)")

        let verifier = configuration.codeVerifier ?? PKCE.makeVerifier()
        let proof = Proof(verifier: verifier, challenge: PKCE.challenge(for: verifier))
        let loginURL = contextURL.appendingQuery([("codeChallenge", proof.challenge), ("scheme", configuration.callbackScheme)])
        log.note("step 5: login URL \(loginURL)")
        let request = makeRequest(.loginPage, agent: .browser, method: "GET", url: loginURL,
                                  accept: "text/html", now: now)
        return .loginPage(request, Challenge(contextURL: contextURL, tokenURL: tokenURL), proof)
    }

    /// Step 6: the sign-in form, with its CSRF field, for the challenge the app sent.
    private mutating func afterLoginPage(_ r: Received, challenge: Challenge, proof: Proof,
                                         log: inout CheckLog, now: Date) throws(FlowFailure) -> State {
        if r.isRedirect { throw gatewayRedirect(r) }
        try screen(r, log: &log)
        if r.status == 400 {
            let mode: FailureMode = r.reason.contains("codeChallenge") ? .dropChallenge : .loginURLRejected
            throw FlowFailure(mode: mode, evidence: "the server rejected the login URL: \(r.reason)")
        }
        let text = r.bodyText
        guard r.status == 200, let form = HTMLForm(html: text), form.method == "POST" else {
            throw FlowFailure(mode: .unexpectedResponse, evidence: "\(r.brief) without a sign-in form", sentence: .step6SignIn)
        }
        log.pass("sign-in form present")
        guard form.hiddenFields.contains(where: { $0.name == "csrf" }) else {
            throw FlowFailure(mode: .unexpectedResponse, evidence: "the sign-in form has no hidden csrf field", sentence: .step6SignIn)
        }
        log.pass("CSRF field found")
        var confirmed = false
        if let received = HTMLForm.meta(named: "intact-code-challenge", in: text) {
            guard received == proof.challenge else {
                throw FlowFailure(mode: .dropChallenge, evidence: "the server received codeChallenge \(received); the app sent \(proof.challenge)")
            }
            log.pass("the server received the app's codeChallenge")
            confirmed = true
        }
        if r.cookieDecisions.contains(.deleted(name: StepClassifier.sessionCookie)) {
            log.note("the server ended the browser's existing session")
        }
        guard let action = form.action.isEmpty ? r.request.url : r.request.url.resolving(form.action) else {
            throw FlowFailure(mode: .unexpectedResponse, evidence: "the form action \(form.action) is not a URL the browser can post to",
                              sentence: .step6SignIn)
        }
        let fields = form.hiddenFields.map { ($0.name, $0.value) } + [("un", configuration.username), ("pw", configuration.password)]
        let request = makeRequest(.credentials, agent: .browser, method: "POST", url: action,
                                  body: Array(FormEncoding.encode(fields).utf8), contentType: FormEncoding.mediaType,
                                  accept: "text/html", now: now)
        return .credentials(request, challenge, proof, challengeConfirmed: confirmed)
    }

    /// Steps 7–8: the callback redirect, then the browser closes.
    private mutating func afterCredentials(_ r: Received, challenge: Challenge, proof: Proof, challengeConfirmed: Bool,
                                           log: inout CheckLog, now: Date) throws(FlowFailure) -> State {
        try screen(r, log: &log)
        if r.status == 200, HTMLForm(html: r.bodyText) != nil {
            throw FlowFailure(mode: .credentialsRejected, evidence: "the sign-in form came back: user \(configuration.username) was not signed in")
        }
        if r.status == 400 || r.status == 403 {
            let sentCookies = !CookieJar.parseCookieHeader(r.request.head.fields).isEmpty
            if sentCookies && r.reason.contains("cookie") {
                throw FlowFailure(mode: .stripCookie, evidence: "the browser sent its login cookie, the server answered \(r.status): \(r.reason)")
            }
            let loginPageCookies = results.last { $0.step == .loginPage }?.response?.setCookieNames
            if !sentCookies && r.reason.contains("cookie") && loginPageCookies?.isEmpty == true {
                throw FlowFailure(mode: .stripSetCookie,
                                  evidence: "the server answered \(r.status): \(r.reason); the browser had no cookie to send: the login page arrived with no Set-Cookie field",
                                  sentence: .unmodified)
            }
            throw FlowFailure(mode: .unexpectedResponse, evidence: "\(r.status): \(r.reason)", sentence: .step6SignIn)
        }
        guard r.isRedirect, let location = r.location, let callback = AbsoluteURL(location),
              let token = callback.queryValue("token"), !token.isEmpty else {
            throw FlowFailure(mode: .unexpectedResponse, evidence: "\(r.brief) instead of a redirect to the callback URL",
                              sentence: .step7Callback)
        }
        guard callback.origin.scheme == HTTPField.lowercaseASCII(configuration.callbackScheme) else {
            throw FlowFailure(mode: .rewriteURLs, evidence: "the callback \(location) uses scheme \(callback.origin.scheme); the app asked for \(configuration.callbackScheme)",
                              sentence: .step7Callback)
        }
        guard callback.origin.host == challenge.contextURL.origin.host else {
            throw FlowFailure(mode: .rewriteURLs, evidence: "the callback names host \(callback.origin.host); the context URL is on \(challenge.contextURL.origin.host)",
                              sentence: .step7Callback)
        }
        guard callback.queryValue("result") == "login" else {
            throw FlowFailure(mode: .unexpectedResponse, evidence: "the callback has result=\(callback.queryValue("result") ?? "(none)"), not result=login",
                              sentence: .step7Callback)
        }
        log.pass("callback uses scheme \(callback.origin.scheme), result=login, token present")
        browserJar.removeAll()
        log.note("step 8: the browser is closed and its cookies dropped")
        let request = makeRequest(.tokenExchange, agent: .app, method: "POST", url: challenge.tokenURL,
                                  body: configuration.tokenPost.encode(token: token, verifier: proof.verifier),
                                  contentType: configuration.tokenPost.mediaType, accept: "application/json", now: now)
        return .tokenExchange(request, challenge, challengeConfirmed: challengeConfirmed)
    }

    /// Steps 10–11: the bootstrap with its three cookies.
    private mutating func afterTokenExchange(_ r: Received, challenge: Challenge, challengeConfirmed: Bool,
                                             log: inout CheckLog, now: Date) throws(FlowFailure) -> State {
        if r.isRedirect { throw gatewayRedirect(r) }
        try screen(r, log: &log)
        switch r.status {
        case 200:
            break
        case 400:
            throw FlowFailure(mode: .alterTokenPost, evidence: "the server could not read the token POST: \(r.reason)",
                              sentence: .step9TokenBody)
        case 401:
            let reason = r.head.fields[MockServer.reasonFieldName]
            switch reason.flatMap(MockServer.TokenRejection.init(rawValue:)) {
            case .alreadyUsed:
                throw FlowFailure(mode: .tokenReplayed, evidence: "token rejected: \(reason ?? "") (the app sent it once)")
            case .expired:
                throw FlowFailure(mode: .tokenExpired, evidence: "token rejected: \(reason ?? "")")
            case .verifierMismatch where challengeConfirmed:
                throw FlowFailure(mode: .alterTokenPost, evidence: "token rejected: \(reason ?? ""); the server had the app's challenge, so the verifier changed on the way",
                                  sentence: .step10Session)
            default:
                throw FlowFailure(mode: .alterTokenPost, evidence: "token rejected with 401: \(reason ?? "no reason given")",
                                  sentence: .step10Session)
            }
        default:
            throw FlowFailure(mode: .unexpectedResponse, evidence: "\(r.brief) where the server answers the token POST with 200 or 401",
                              sentence: .step11Bootstrap)
        }
        guard r.isJSON, let bootstrap = JSONBody.decodeObject(r.body) else {
            throw FlowFailure(mode: .unexpectedResponse, evidence: "200 with \(r.contentType ?? "no Content-Type"), not a JSON bootstrap",
                              sentence: .step11Bootstrap)
        }
        username = bootstrap["username"] as? String
        log.pass("200 bootstrap JSON\(username.map { " for \($0)" } ?? "")")
        try auditSessionCookies(r, contextPath: challenge.contextURL.path, log: &log, now: now)

        let method = configuration.followUpMethod
        var extra: [(String, String)] = []
        if MockServer.isUnsafe(HTTPMethod(method)), let csrf = appJar.value(of: MockServer.csrfCookie, for: configuration.resourceURL, now: now) {
            extra.append((MockServer.csrfHeader, csrf))
        }
        let request = makeRequest(.followUp, agent: .app, method: method, url: configuration.resourceURL,
                                  accept: "application/json", extraFields: extra, now: now)
        return .followUp(request)
    }

    /// After: the protected resource again, now with the session: 200, no second sign-in.
    private func afterFollowUp(_ r: Received, log: inout CheckLog) throws(FlowFailure) {
        if r.isRedirect { throw gatewayRedirect(r) }
        try screen(r, log: &log)
        switch r.status {
        case 200:
            log.pass("200 with the session cookies: no second sign-in")
        case 401:
            let sent = CookieJar.parseCookieHeader(r.request.head.fields).map(\.name)
            throw FlowFailure(mode: .stripCookie,
                              evidence: "401 again after sign-in (\(r.head.fields[MockServer.reasonFieldName] ?? "no reason given")); the app sent cookies: \(sent.isEmpty ? "none" : sent.joined(separator: ", "))",
                              sentence: .step11Bootstrap)
        case 403:
            throw FlowFailure(mode: .csrfRejected, evidence: "403: \(r.reason)")
        default:
            throw FlowFailure(mode: .unexpectedResponse, evidence: "\(r.brief) where the signed-in request gets 200")
        }
    }
}
