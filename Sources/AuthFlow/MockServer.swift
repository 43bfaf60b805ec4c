import Foundation
import HTTP
import Hashing

/// The mock Appian server: the endpoints of the sign-in flow (`AUTH_FLOW.md`)
/// as a sans-io core. A request (head, whole body, client-certificate subject)
/// goes in with the current time; a response comes out.
///
/// It owns users, login transactions, one-time tokens, sessions and their
/// CSRF tokens. It is a value type with no locks: the I/O layer keeps one
/// instance and calls `handle` only from one serial queue (the server's
/// event loop), which is the only place its state changes.
///
/// Endpoints, under `ctx` = `/{contextPath}`:
/// - `GET|POST|… {ctx}/rest/…` — protected: 401 + step-3 JSON without a
///   live session; 403 for an unsafe method without a matching
///   `X-APPIAN-CSRF-TOKEN`; else 200 JSON.
/// - `GET {ctx}?codeChallenge=C&scheme=S` — the login page (see `+Login`).
/// - `POST {ctx}/auth` — the credentials (see `+Login`).
/// - `POST {ctx}/mobileAuthTokenConsumer` — the token exchange (see `+Token`).
/// - `GET {ctx}/cors/ping` — `{"authed": true|false}`.
/// - anything else — 404.
///
/// Every 4xx response carries an `Intact-Reason` field (*synthetic*) with the
/// precise reason; 400/403/404/405/413 bodies are that reason as text, 401
/// bodies are the step-3 JSON, as the document describes.
public struct MockServer: Sendable {
    public let configuration: MockServerConfiguration
    let classifier: StepClassifier

    /// A login form handed to a browser, waiting for credentials.
    struct LoginTransaction: Sendable {
        let csrf: String
        let codeChallenge: String
        let callbackScheme: String
        let expires: Date
    }

    /// A sign-in token from a callback: single use, short lifetime, bound to the code challenge.
    struct OneTimeToken: Sendable {
        let username: String
        let codeChallenge: String
        let expires: Date
        var used: Bool
    }

    /// An authenticated session (the app's, or a browser's).
    struct Session: Sendable {
        let username: String
        let csrfToken: String
        let multipartCsrfToken: String
        let clientCertificateSubject: String?
        var lastUsed: Date
    }

    var transactions: [String: LoginTransaction] = [:]
    var tokens: [String: OneTimeToken] = [:]
    var sessions: [String: Session] = [:]

    public init(configuration: MockServerConfiguration) {
        self.configuration = configuration
        classifier = StepClassifier(contextPath: configuration.contextPath)
    }

    /// Answers one request at `now`. Never fails: bad input gets a 4xx with its reason.
    public mutating func handle(_ request: MockRequest, now: Date) -> MockResponse {
        purgeExpired(now: now)
        var reply = route(request, now: now)
        let trace = configuration.echoesTraceField ? request.head.fields[SignInFlow.traceFieldName] : nil
        let gzip = configuration.gzipsResponses && MockServer.acceptsGzip(request.head.fields["Accept-Encoding"])
        reply.finish(traceEcho: trace, now: now, server: configuration.serverVersion, gzip: gzip)
        return MockResponse(head: reply.head, body: reply.body,
                            step: classifier.classify(request.head, response: reply.head), note: reply.note)
    }

    /// How many sessions are alive (not idle past the timeout) at `now`.
    public func liveSessionCount(now: Date) -> Int {
        sessions.values.filter { now.timeIntervalSince($0.lastUsed) <= configuration.sessionIdleTimeout }.count
    }

    /// The client-certificate subject recorded for a session, if it presented one.
    public func clientCertificateSubject(ofSession id: String) -> String? {
        sessions[id]?.clientCertificateSubject
    }

    private mutating func route(_ request: MockRequest, now: Date) -> Reply {
        if request.body.count > configuration.maxRequestBodyBytes {
            return .plain(413, "request body of \(request.body.count) bytes exceeds the limit of \(configuration.maxRequestBodyBytes)")
        }
        if configuration.requiresClientCertificate && request.clientCertificateSubject == nil {
            return .plain(403, "client certificate required")
        }
        let method = request.head.method
        switch classifier.endpoint(ofPath: request.head.pathOnly) {
        case .context:
            guard method == .get else { return .methodNotAllowed(method, allowed: .get) }
            return loginPage(request, now: now)
        case .auth:
            guard method == .post else { return .methodNotAllowed(method, allowed: .post) }
            return credentials(request, now: now)
        case .token:
            guard method == .post else { return .methodNotAllowed(method, allowed: .post) }
            return tokenExchange(request, now: now)
        case .corsPing:
            guard method == .get else { return .methodNotAllowed(method, allowed: .get) }
            let authed = if case .live = lookUpSession(request.head.fields, now: now) { true } else { false }
            return .json(200, ["authed": authed], note: "cors ping: authed=\(authed)")
        case .protected:
            return protectedResource(request, now: now)
        case .unknown:
            return .plain(404, "no resource at \(request.head.pathOnly)")
        }
    }

    /// Drops state nobody can use any more. Used and expired tokens, and idle
    /// sessions, are kept a while longer so a late request gets the precise
    /// reason ("token expired", "session expired") instead of "unknown".
    private mutating func purgeExpired(now: Date) {
        let grace: TimeInterval = 10 * 60
        transactions = transactions.filter { $0.value.expires > now }
        tokens = tokens.filter { $0.value.expires.addingTimeInterval(grace) > now }
        sessions = sessions.filter { now.timeIntervalSince($0.value.lastUsed) <= configuration.sessionIdleTimeout + grace }
    }

    /// A fresh URL-safe random value: 32 random bytes, base64url (43 characters).
    static func randomToken() -> String {
        Encoding.base64URL(SecureRandom.bytes(32))
    }
}
