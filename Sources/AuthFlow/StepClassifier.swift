import HTTP

/// Which step of the mobile sign-in flow an exchange is. Raw values are
/// stable strings: recordings carry them.
public enum AuthStep: String, Hashable, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// A protected resource requested without a session cookie (step 1), answer not yet known.
    case unauthenticatedRequest = "unauthenticated-request"
    /// A protected resource answered 401 (steps 2–3).
    case challenge401 = "challenge-401"
    /// The browser opening the login URL (step 6).
    case loginPage = "login-page"
    /// The browser posting credentials (step 6b), not answered with the callback.
    case credentialsPost = "credentials-post"
    /// The credentials POST answered with the callback redirect (step 7).
    case callbackRedirect = "callback-redirect"
    /// The app posting the token (step 9), not answered 200.
    case tokenPost = "token-post"
    /// The token POST answered 200 (steps 10–11).
    case bootstrap = "bootstrap"
    /// A protected resource requested with a session cookie and not answered 401.
    case authenticatedRequest = "authenticated-request"
    /// `GET {ctx}/cors/ping`.
    case corsPing = "cors-ping"
    /// Anything else.
    case other = "other"

    /// The stable label.
    public var description: String { rawValue }
}

/// Labels any exchange with its `AuthStep` from the request target, the
/// `Cookie` field and (when known) the response status and `Location`.
/// Pure and cheap: proxies call it on every exchange.
public struct StepClassifier: Hashable, Sendable {
    /// The token endpoint under the context path.
    public static let tokenEndpoint = "mobileAuthTokenConsumer"
    /// The cookie that carries a session.
    public static let sessionCookie = "JSESSIONID"

    /// `/suite` for context path `suite`, empty for a root context.
    public let contextRoot: String
    /// `contextRoot` and `/`, made once: the prefix of every path under the
    /// context (`classify` runs on every exchange and builds no `String`).
    private let contextPrefix: String

    public init(contextPath: String = "suite") {
        let trimmed = MockServerConfiguration.trimSlashes(contextPath)
        contextRoot = trimmed.isEmpty ? "" : "/" + trimmed
        contextPrefix = contextRoot + "/"
    }

    /// The step of an exchange; pass the response head when it is known.
    public func classify(_ request: HTTPRequestHead, response: HTTPResponseHead? = nil) -> AuthStep {
        switch endpoint(ofPath: request.pathOnly) {
        case .protected:
            if response?.status == 401 { return .challenge401 }
            let hasSession = CookieJar.parseCookieHeader(request.fields).contains { $0.name == StepClassifier.sessionCookie }
            return hasSession ? .authenticatedRequest : .unauthenticatedRequest
        case .context:
            let names = (FormEncoding.decode(request.queryString) ?? []).map(\.name)
            return names.contains("codeChallenge") ? .loginPage : .other
        case .auth:
            guard let response else { return .credentialsPost }
            if (300...399).contains(response.status), let location = response.fields["Location"],
               let url = AbsoluteURL(location), url.queryValue("result") == "login" {
                return .callbackRedirect
            }
            return .credentialsPost
        case .token:
            return response?.status == 200 ? .bootstrap : .tokenPost
        case .corsPing:
            return .corsPing
        case .unknown:
            return .other
        }
    }

    /// The server's endpoints, by path (query excluded).
    enum Endpoint: Hashable, Sendable {
        case context, auth, token, corsPing, protected, unknown
    }

    /// Compares bytes, not `Character`s: a path is ASCII on the wire (its
    /// other bytes percent-encoded), and byte equality is what a server's
    /// router matches on.
    func endpoint(ofPath path: String) -> Endpoint {
        let bytes = path.utf8
        if bytes.elementsEqual(contextRoot.utf8) || bytes.elementsEqual(contextPrefix.utf8) { return .context }
        guard bytes.starts(with: contextPrefix.utf8) else { return .unknown }
        let rest = bytes.dropFirst(contextPrefix.utf8.count)
        if rest.elementsEqual("auth".utf8) { return .auth }
        if rest.elementsEqual(StepClassifier.tokenEndpoint.utf8) { return .token }
        if rest.elementsEqual("cors/ping".utf8) { return .corsPing }
        return rest.elementsEqual("rest".utf8) || rest.starts(with: "rest/".utf8) ? .protected : .unknown
    }
}
