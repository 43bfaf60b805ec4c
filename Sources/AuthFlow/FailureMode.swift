/// The failure modes a diagnosis can name. The first thirteen are the fault
/// presets of `FAULTS.md` (same names); the rest are generic causes that no
/// preset injects. Raw values are stable: reports and tests use them.
public enum FailureMode: String, Hashable, Sendable, Codable, CaseIterable {
    case authRedirect = "auth-redirect"
    case html401 = "html-401"
    case foreignResponse = "foreign-response"
    case gatewayCookie = "gateway-cookie"
    case stripSetCookie = "strip-set-cookie"
    case rewriteSetCookie = "rewrite-set-cookie"
    case stripCookie = "strip-cookie"
    case rewriteURLs = "rewrite-urls"
    case dropChallenge = "drop-challenge"
    case alterTokenPost = "alter-token-post"
    case compress = "compress"
    case clientCertRequired = "client-cert-required"
    case resetTokenPost = "reset-token-post"

    case unexpectedResponse = "unexpected-response"
    /// The server answered (its trace echo or identity is there), but the
    /// answer was changed on the way: its status, fields or body.
    case modifiedResponse = "modified-response"
    case credentialsRejected = "credentials-rejected"
    case loginURLRejected = "login-url-rejected"
    case tokenReplayed = "token-replayed"
    case tokenExpired = "token-expired"
    case csrfRejected = "csrf-rejected"
    case transportFailure = "transport-failure"
    /// An intermediary served the server's answer to another request again
    /// (its trace echo names that request): a cache.
    case cachedResponse = "cached-response"

    // What only a real browser shows (`intact client --browser chromium`), and the app/browser split.
    /// The browser refused a cookie (its attributes, as they arrived).
    case browserCookieRefused = "browser-cookie-refused"
    /// The page's Content-Security-Policy blocked the redirect to the callback.
    case browserCSPBlocked = "browser-csp-blocked"
    /// HSTS made the browser use https where it was sent to http.
    case browserHSTS = "browser-hsts"
    /// The browser's path (not the app's) does not reach the server: per-app VPN.
    case browserOffPath = "browser-off-path"
    /// A gateway challenged the browser, which holds no client certificate (the app does).
    case browserClientCert = "browser-client-cert"
    /// The browser crashed, hung, showed no form, or its form lacked a field.
    case browserFailed = "browser-failed"

    /// True for the names of `FAULTS.md` presets.
    public var isPreset: Bool {
        switch self {
        case .unexpectedResponse, .modifiedResponse, .credentialsRejected, .loginURLRejected, .tokenReplayed,
             .tokenExpired, .csrfRejected, .transportFailure, .browserCookieRefused, .browserCSPBlocked, .browserHSTS,
             .browserOffPath, .browserClientCert, .browserFailed, .cachedResponse:
            return false
        default:
            return true
        }
    }

    /// The sentence a failure of this mode breaks, unless the place it was found names a closer one.
    public var sentence: DocumentSentence {
        switch self {
        case .authRedirect, .unexpectedResponse, .tokenExpired, .transportFailure: return .directCommunication
        case .html401: return .step4Keys
        case .foreignResponse, .cachedResponse: return .onlyAppianResponses
        case .gatewayCookie: return .noAuthenticationCookies
        case .stripSetCookie: return .step11Bootstrap
        case .rewriteSetCookie, .stripCookie, .rewriteURLs, .alterTokenPost, .compress, .tokenReplayed, .csrfRejected,
             .modifiedResponse:
            return .unmodified
        case .dropChallenge, .loginURLRejected: return .step5LoginURL
        case .clientCertRequired: return .clientCertificateImport
        case .resetTokenPost: return .step10Session
        case .credentialsRejected, .browserFailed, .browserHSTS: return .step6SignIn
        case .browserCookieRefused: return .unmodified
        case .browserCSPBlocked: return .step7Callback
        case .browserOffPath: return .perAppVPN
        case .browserClientCert: return .certificateGateway
        }
    }

    /// One line: what the user should check.
    public var advice: String {
        switch self {
        case .authRedirect:
            return "Let unauthenticated requests reach the Appian server: its 401 must not become a redirect to a gateway login page."
        case .html401:
            return "Find what replaces the server's 401 JSON (an error page on the load balancer, WAF or proxy for status 401) and turn it off."
        case .foreignResponse:
            return "Find the intermediary that answered instead of the Appian server (maintenance, block or error page) and let the request through."
        case .gatewayCookie:
            return "Remove the gateway's own sign-in cookie requirement for the app; restrict access with a VPN or client certificates instead."
        case .stripSetCookie:
            return "Make sure the server's Set-Cookie fields (the bootstrap's session cookies, the sign-in page's) cross the intermediary untouched."
        case .rewriteSetCookie:
            return "Stop the intermediary rewriting cookie attributes (Path, Domain, Secure, SameSite), folding Set-Cookie fields or adding cookies."
        case .stripCookie:
            return "Make sure requests keep their Cookie field across the intermediary."
        case .rewriteURLs:
            return "Set the server's external URL to the address the app uses, and stop the intermediary rewriting URLs in bodies and Location."
        case .dropChallenge:
            return "Make sure the login URL's query (codeChallenge, scheme) reaches the server unchanged."
        case .alterTokenPost:
            return "Make sure the token POST body and its Content-Type reach the server unchanged (no re-encoding or body rewriting)."
        case .compress:
            return "Turn off response compression on the intermediary, or tolerate it explicitly: the bytes the server sent were changed."
        case .clientCertRequired:
            return "Import the client certificate the gateway expects (the simulator: a PKCS#12 file) and check the gateway trusts its CA."
        case .resetTokenPost:
            return "Check the intermediary's timeouts, body limits and connection handling for the token POST."
        case .unexpectedResponse:
            return "Compare this exchange in the server's and the intermediary's recordings to see who produced it."
        case .modifiedResponse:
            return "The server answered, but its status, fields or body changed on the way: find the intermediary's rule that rewrites responses."
        case .credentialsRejected:
            return "Check the user name and password given to the client and the users the server knows."
        case .loginURLRejected:
            return "Check that the callback scheme is one the server allows and that the login URL's query arrives intact."
        case .tokenReplayed:
            return "Something sent the token POST twice (a retry of a non-idempotent request); turn off retries for POST."
        case .tokenExpired:
            return "The token POST arrived after the token's lifetime; look for delays or stalls on the path."
        case .csrfRejected:
            return "Make sure the X-APPIAN-CSRF-TOKEN field reaches the server unchanged."
        case .transportFailure:
            return "The connection failed: check reachability, proxy settings and TLS trust."
        case .cachedResponse:
            return "Turn off caching for the Appian server on the intermediary (its answers are per user and per request): a cache serving one request's answer to another can hand out another user's session."
        case .browserCookieRefused:
            return "Stop the intermediary changing the cookie's attributes (Secure, SameSite, Domain, Path): a browser refuses what a simple HTTP client keeps."
        case .browserCSPBlocked:
            return "Remove the Content-Security-Policy (form-action) the intermediary adds to the sign-in page, or let it allow the app's callback scheme."
        case .browserHSTS:
            return "Keep the sign-in page's URLs https end to end: the intermediary sends the browser to http, which HSTS turns back into https."
        case .browserOffPath:
            return "Put the browser on the VPN too (an OS-level VPN, or add the system browser to the per-app VPN), or make the sign-in page reachable from where the browser is."
        case .browserClientCert:
            return "The sign-in page opens in the browser, not in the app: install the client certificate where the browser finds it, or do not challenge the sign-in page."
        case .browserFailed:
            return "Look at what the browser did last (above): its net error, the page it showed, or the field it could not find."
        }
    }
}
