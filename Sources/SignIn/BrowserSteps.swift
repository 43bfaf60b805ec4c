import AuthFlow
import Browser
import Foundation
import HTTP

/// Maps what a real browser did (`BrowserRun`) onto the flow's steps 6–7:
/// the login page and the credentials POST go through the flow's own
/// checks as the browser saw them; what only a browser shows (a refused
/// cookie, a CSP block, a net error, a crash, a form it could not fill)
/// ends the run with a browser diagnosis. Pure: tested without a browser.
enum BrowserSteps {
    /// Feeds `run` to `flow`, which must be waiting for the browser's login
    /// page. Each step's time is its exchange's as DevTools timed it; a
    /// failure's is `elapsed`, the browser's whole part.
    static func apply(_ run: BrowserRun, to flow: inout SignInFlow, paths: AgentPaths, elapsed: TimeInterval, now: Date = Date()) {
        guard flow.awaitsBrowserLoginPage else { return }
        let upgrade = hstsUpgrade(in: run)
        if let upgrade, upgrade.hop < (run.loginPage ?? run.exchanges.count) {
            // The login page's own redirect chain went through HSTS: the login page step is the one that fails.
            let page = run.loginPageExchange
            return flow.failInBrowser(.browserHSTS, evidence: hstsEvidence(upgrade, run: run, configuration: flow.configuration),
                                      sentence: flow.configuration.expectsTraceEcho ? .unmodified : nil,
                                      sentFields: fields(page?.requestFields ?? []), traced: page?.traceID != nil,
                                      head: page.flatMap(head(of:)), elapsed: page?.duration ?? elapsed, now: now)
        }
        if let page = run.loginPageExchange, page.netError == nil, let head = head(of: page) {
            flow.receiveFromBrowser(sentFields: fields(page.requestFields), traced: page.traceID != nil, head: head,
                                    body: run.loginPageBody ?? [], elapsed: page.duration ?? elapsed, now: now,
                                    notes: loginPageNotes(run))
        } else {
            fail(run, at: &flow, exchange: run.loginPageExchange, paths: paths, elapsed: elapsed, now: now)
            return
        }
        guard flow.awaitsBrowserCredentials else { return }
        let post = run.credentialsExchange
        if let upgrade {
            return flow.failInBrowser(.browserHSTS, evidence: hstsEvidence(upgrade, run: run, configuration: flow.configuration),
                                      sentence: flow.configuration.expectsTraceEcho ? .unmodified : nil,
                                      sentFields: fields(post?.requestFields ?? []), traced: post?.traceID != nil,
                                      head: post.flatMap(head(of:)), elapsed: post?.duration ?? elapsed, now: now)
        }
        if let callback = run.callbackURL {
            var head = post.flatMap(head(of:)) ?? HTTPResponseHead(status: 302)
            if head.fields["Location"] == nil { head.fields.append("Location", callback) }
            flow.receiveFromBrowser(sentFields: fields(post?.requestFields ?? []), traced: post?.traceID != nil, head: head,
                                    body: [], elapsed: post?.duration ?? elapsed, now: now,
                                    notes: run.findings.map { "the browser: \($0)" } + ["Chromium caught the callback \(callback)"])
            return
        }
        let postHead = post.flatMap(head(of:))
        for finding in run.findings {
            switch finding {
            case .contentSecurityPolicy(let directive, let blocked, _):
                // After a redirect CSP reports the URL before it (the form's action), not the callback.
                let scheme = flow.configuration.callbackScheme
                let location = postHead?.fields["Location"]
                let toCallback = location.map { BrowserSignIn.scheme(of: $0) == scheme.lowercased() } == true
                let target = toCallback ? "the redirect to \(scheme)://" : "the browser's request to \(blocked)"
                let policy = run.loginPageExchange?.responseField("Content-Security-Policy").map { "policy \($0)" }
                let detail = [policy, toCallback ? location.map { "Location \($0)" } : nil].compactMap { $0 }
                return flow.failInBrowser(.browserCSPBlocked,
                                          evidence: "\(target) was blocked by the page's Content-Security-Policy \(directive)"
                                              + (detail.isEmpty ? "" : " (\(detail.joined(separator: "; ")))"),
                                          sentFields: fields(post?.requestFields ?? []), traced: post?.traceID != nil,
                                          head: postHead, elapsed: elapsed, now: now)
            case .cookieRefused(let cookie, let url):
                let origin = flow.configuration.expectsTraceEcho && cookie.name == MockServer.loginTransactionCookie
                    ? "set by the intermediary (the mock server sets it Secure, without SameSite)"
                    : "as it arrived from \(url)"
                return flow.failInBrowser(.browserCookieRefused,
                                          evidence: "the browser refused cookie \(cookie.name): \(cookie.explanation), \(origin): Set-Cookie: \(cookie.line)",
                                          sentFields: fields(post?.requestFields ?? []), traced: post?.traceID != nil, head: postHead, elapsed: elapsed, now: now)
            case .hstsUpgrade:
                continue // A page's upgrade ended the run above; another request's (the favicon) is no step.
            case .mixedContent:
                continue // Named with the failure it caused (the insecure-form warning), if any.
            }
        }
        if let post, post.netError == nil, let head = postHead, run.credentialsBody != nil || head.status >= 300 {
            flow.receiveFromBrowser(sentFields: fields(post.requestFields), traced: post.traceID != nil, head: head,
                                    body: run.credentialsBody ?? [], elapsed: elapsed, now: now)
            return
        }
        fail(run, at: &flow, exchange: post, paths: paths, elapsed: elapsed, now: now)
    }

    /// The first HSTS upgrade of a page request of the main frame (an
    /// intermediary's redirect to `http://`), as (from, to, index of the upgraded hop).
    static func hstsUpgrade(in run: BrowserRun) -> (from: String, to: String, hop: Int)? {
        for case .hstsUpgrade(let from, let to) in run.findings {
            if let hop = run.exchanges.firstIndex(where: { $0.isMainDocument && $0.url == from && $0.redirectedTo == to }) {
                return (from, to, hop)
            }
        }
        return nil
    }

    /// What `browser-hsts` says: where the browser was sent, what it did
    /// instead and on which `Strict-Transport-Security`, and what a browser
    /// without that entry does. Against the mock server (it sends neither an
    /// http URL nor HSTS) both came from the intermediary.
    static func hstsEvidence(_ upgrade: (from: String, to: String, hop: Int), run: BrowserRun,
                             configuration: SignInFlow.Configuration) -> String {
        func short(_ url: String) -> String { url.firstIndex(of: "?").map { url[..<$0] + "?…" } ?? url }
        let setter = run.exchanges[..<upgrade.hop].last { $0.responseField("Strict-Transport-Security") != nil }
        let sender = run.exchanges[..<upgrade.hop].last { $0.redirectedTo == upgrade.from }
        let sent = sender.map { "\(short($0.url)) was answered with \($0.status.map(String.init) ?? "a redirect") to \(short(upgrade.from))" }
            ?? "the browser was sent to \(short(upgrade.from))"
        let policy = setter.map { exchange in
            let value = exchange.responseField("Strict-Transport-Security") ?? ""
            return exchange.url == sender?.url ? "the same answer set Strict-Transport-Security: \(value)"
                : "\(short(exchange.url)) had set Strict-Transport-Security: \(value)"
        } ?? "it held an HSTS entry for the host already"
        var evidence = "HSTS made the browser use https: \(sent), and the browser turned that into https itself "
            + "(an internal 307, Non-Authoritative-Reason: HSTS) because \(policy)"
        if configuration.expectsTraceEcho {
            evidence += "; the mock server sends neither an http URL nor Strict-Transport-Security: both came from the intermediary"
        }
        let outcome = run.failure.map { "then \($0)" } ?? "the sign-in went on only because the browser honoured that field"
        return evidence + "; \(outcome): a browser that never saw it goes to \(short(upgrade.from)) in plain http"
    }

    /// What the login page's step says besides its checks: how the trace
    /// travelled, and the browser's requests that are no step of the flow.
    static func loginPageNotes(_ run: BrowserRun) -> [String] {
        var notes = ["in Chromium: \(run.trace)"]
        let others = run.exchanges.enumerated()
            .filter { $0.offset != run.loginPage && $0.offset != run.credentials && BrowserSignIn.scheme(of: $0.element.url) != "data" }
            .map { "\($0.element.method) \($0.element.url)\($0.element.status.map { " (\($0))" } ?? "")" }
        if !others.isEmpty { notes.append("the browser also requested, untraced: " + others.joined(separator: ", ")) }
        if let form = run.form {
            notes.append("filled \([form.usernameField, form.passwordField].compactMap { $0 }.joined(separator: " and ")) in a form with \(form.fields.joined(separator: ", "))")
        }
        return notes
    }

    /// Ends the run at the browser step in flight with the browser's failure.
    private static func fail(_ run: BrowserRun, at flow: inout SignInFlow, exchange: BrowserExchange?, paths: AgentPaths,
                             elapsed: TimeInterval, now: Date) {
        let failure = run.failure ?? .protocolError("the browser stopped without a callback or a failure")
        var mode = FailureMode.browserFailed
        var sentence: DocumentSentence?
        var evidence = "\(failure)"
        if case .insecureFormBlocked = failure, flow.configuration.expectsTraceEcho {
            evidence += "; the mock server's form posts to a relative action: the intermediary rewrote it to http"
            sentence = .unmodified
        }
        if case .navigationFailed(_, let error) = failure {
            if error.contains("CLIENT_AUTH_CERT") || error.contains("SSL_CLIENT_AUTH") {
                mode = .browserClientCert
                evidence += "; the gateway asked the browser for a client certificate and it has none"
                if paths.appHasCertificate { evidence += " (the app holds one, the browser does not)" }
            } else if paths.appHasCertificate && ["RESET", "CONNECTION_CLOSED", "SOCKET_NOT_CONNECTED", "SSL_PROTOCOL_ERROR"].contains(where: error.contains) {
                // TLS 1.3: the gateway's certificate_required alert comes after the handshake; Chromium reports the
                // reset, the close, or (when the gateway closed before Chromium wrote its request) a socket not connected.
                mode = .browserClientCert
                evidence += "; the app holds a client certificate, the browser does not: a gateway that challenges for one "
                    + "ends the browser's TLS connection this way"
            } else if paths.differ {
                mode = .browserOffPath
                sentence = .perAppVPN
                evidence += "; the app reaches the server \(paths.app), the browser goes \(paths.browser)"
            }
        }
        flow.failInBrowser(mode, evidence: evidence, sentence: sentence, sentFields: exchange.map { fields($0.requestFields) },
                           traced: exchange?.traceID != nil, head: exchange.flatMap(head(of:)), elapsed: elapsed, now: now)
    }

    /// The response head as the browser received it: for HTTP/1.x from the
    /// raw head text (wire order), else from DevTools' field list.
    static func head(of exchange: BrowserExchange) -> HTTPResponseHead? {
        guard let status = exchange.status else { return nil }
        var fields = HTTPFields()
        if let text = exchange.responseHeadText, !text.isEmpty {
            for line in text.split(separator: "\r\n").dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                fields.append(String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            }
        } else {
            // DevTools joins repeated fields with newlines (Set-Cookie): split them again.
            for field in exchange.responseFields {
                for value in field.value.split(separator: "\n", omittingEmptySubsequences: false) {
                    fields.append(field.name, String(value))
                }
            }
        }
        let version: HTTPVersion = exchange.protocolName == "h2" ? .http2 : .http1_1
        return HTTPResponseHead(status: HTTPStatus(status), version: version, fields: fields)
    }

    static func fields(_ pairs: [(name: String, value: String)]) -> [HTTPField] {
        pairs.map { HTTPField(name: $0.name, value: $0.value) }
    }
}

/// The app's path and the browser's, for diagnoses that name the split.
struct AgentPaths: Hashable, Sendable {
    /// `through proxy http://…` or `directly`.
    var app: String
    var browser: String
    /// True when the browser does not share the app's path.
    var differ: Bool
    var appHasCertificate: Bool
}
