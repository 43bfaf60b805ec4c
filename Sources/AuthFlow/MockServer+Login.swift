import Codecs
import Foundation
import HTTP

/// Steps 6–7 on the server: the login page and the credentials POST.
///
/// Login transaction (Intact's choice, *synthetic*): the login page sets a
/// pre-auth cookie `__intactLoginTx` (HttpOnly, Path=/{ctx}) naming a
/// transaction that holds the code challenge, the callback scheme and a CSRF
/// token; the form carries that CSRF token in the hidden field `csrf`. The
/// credentials POST must bring both back, so a stripped request cookie
/// shows up right here. A wrong user name or password answers 200 with the
/// form again and an error message (as a browser sign-in page does), keeping
/// the transaction. The page also names the challenge it received in
/// `<meta name="intact-code-challenge">` (*synthetic*) so the client can
/// tell a login URL altered on the way.
extension MockServer {
    /// The pre-auth cookie naming the login transaction.
    public static let loginTransactionCookie = "__intactLoginTx"

    mutating func loginPage(_ request: MockRequest, now: Date) -> Reply {
        guard let items = FormEncoding.decode(request.head.queryString) else { return .plain(400, "malformed query string") }
        func value(_ name: String) -> String? { items.first { $0.name == name }?.value }
        guard let challenge = value("codeChallenge") else { return .plain(400, "missing codeChallenge") }
        guard PKCE.isWellFormedChallenge(challenge) else {
            return .plain(400, "malformed codeChallenge: must match ^[A-Za-z0-9_-]{43}$")
        }
        guard let scheme = value("scheme") else { return .plain(400, "missing scheme") }
        guard configuration.allowedCallbackSchemes.contains(scheme) else {
            return .plain(400, "callback scheme \"\(scheme)\" is not allowed (allowed: \(configuration.allowedCallbackSchemes.joined(separator: ", ")))")
        }

        let transactionID = MockServer.randomToken()
        let csrf = MockServer.randomToken()
        transactions[transactionID] = LoginTransaction(csrf: csrf, codeChallenge: challenge, callbackScheme: scheme,
                                                       expires: now.addingTimeInterval(configuration.loginTransactionLifetime))
        var reply = Reply.html(200, loginPageHTML(csrf: csrf, challenge: challenge, error: nil), note: "login form shown")
        if endBrowserSession(request.head.fields) {
            reply.setCookie(contextCookie(StepClassifier.sessionCookie, "", httpOnly: false, maxAge: 0))
            reply.note += "; existing browser session ended"
        }
        reply.setCookie(contextCookie(MockServer.loginTransactionCookie, transactionID, httpOnly: true))
        return reply
    }

    mutating func credentials(_ request: MockRequest, now: Date) -> Reply {
        let contentType = request.head.fields["Content-Type"]
        guard let contentType, MediaType.essence(of: contentType) == FormEncoding.mediaType else {
            return .plain(400, "expected Content-Type \(FormEncoding.mediaType), got \(contentType ?? "none")")
        }
        guard let text = String(validating: request.body, as: UTF8.self), let form = FormEncoding.decode(text) else {
            return .plain(400, "malformed form body")
        }
        func value(_ name: String) -> String? { form.first { $0.name == name }?.value }
        let cookies = CookieJar.parseCookieHeader(request.head.fields)
        guard let transactionID = cookies.first(where: { $0.name == MockServer.loginTransactionCookie })?.value else {
            return .plain(400, "no \(MockServer.loginTransactionCookie) cookie: open the login URL first")
        }
        guard let transaction = transactions[transactionID] else {
            return .plain(400, "unknown or expired login transaction")
        }
        guard value("csrf") == transaction.csrf else {
            return .plain(403, "CSRF token does not match the login transaction")
        }
        guard let username = value("un"), let password = value("pw"),
              let user = configuration.users.first(where: { $0.username == username }), user.password == password else {
            return .html(200, loginPageHTML(csrf: transaction.csrf, challenge: transaction.codeChallenge,
                                            error: "Wrong user name or password."),
                         note: "rejected: wrong user name or password; form shown again")
        }

        transactions[transactionID] = nil
        let token = MockServer.randomToken()
        tokens[token] = OneTimeToken(username: user.username, codeChallenge: transaction.codeChallenge,
                                     expires: now.addingTimeInterval(configuration.tokenLifetime), used: false)
        let browserSession = MockServer.randomToken()
        sessions[browserSession] = Session(username: user.username, csrfToken: MockServer.randomToken(),
                                           multipartCsrfToken: MockServer.randomToken(),
                                           clientCertificateSubject: request.clientCertificateSubject, lastUsed: now)
        let callback = AbsoluteURL(origin: Origin(scheme: transaction.callbackScheme, host: configuration.externalOrigin.host,
                                                  port: configuration.externalOrigin.port),
                                   path: configuration.contextRequestPath)
            .appendingQuery([("result", "login"), ("token", token)])
        var reply = Reply(status: 302, contentType: nil, body: [], note: "signed in \(user.username); callback issued")
        reply.head.fields.append("Location", callback.serialized)
        reply.setCookie(contextCookie(MockServer.loginTransactionCookie, "", httpOnly: true, maxAge: 0))
        reply.setCookie(contextCookie(StepClassifier.sessionCookie, browserSession, httpOnly: true))
        return reply
    }

    /// Ends the session named by the request's `JSESSIONID`, if it has one;
    /// true when the request carried that cookie (so the browser must drop it).
    private mutating func endBrowserSession(_ fields: HTTPFields) -> Bool {
        let ids = CookieJar.parseCookieHeader(fields).filter { $0.name == StepClassifier.sessionCookie }.map(\.value)
        for id in ids { sessions[id] = nil }
        return !ids.isEmpty
    }

    private func loginPageHTML(csrf: String, challenge: String, error: String?) -> String {
        let action = configuration.contextRoot + "/auth"
        let errorLine = error.map { "<p class=\"error\">\($0.htmlEscaped)</p>\n" } ?? ""
        return """
        <!DOCTYPE html>
        <html><head><meta charset="utf-8"><title>Sign in</title>
        <meta name="intact-code-challenge" content="\(challenge.htmlEscaped)"></head>
        <body><h1>Sign in</h1>
        \(errorLine)<form method="post" action="\(action.htmlEscaped)">
        <input type="hidden" name="csrf" value="\(csrf.htmlEscaped)">
        <label>User name <input type="text" name="un" autocomplete="username"></label>
        <label>Password <input type="password" name="pw" autocomplete="current-password"></label>
        <button type="submit">Sign in</button>
        </form></body></html>

        """
    }
}
