/// What a real browser did for steps 6–8, as its DevTools events showed
/// it: every request it made (the login page, the credentials POST, the
/// favicon, redirects), what it refused, how far it got and why it stopped.
/// `BrowserSignIn` builds it; the client maps it onto the flow's steps.
public struct BrowserRun: Sendable {
    /// Every request, in the order the browser started them; a redirect
    /// ends one exchange and starts the next under the same request id.
    public var exchanges: [BrowserExchange] = []
    /// Index in `exchanges` of the login page's document request.
    public var loginPage: Int?
    /// The login page's body, as the browser received it (decoded).
    public var loginPageBody: [UInt8]?
    /// What the form filler found and did.
    public var form: BrowserFormFill?
    /// Index in `exchanges` of the request the form's submission made.
    public var credentials: Int?
    /// The body of the page shown after the submission, when one loaded instead of the callback.
    public var credentialsBody: [UInt8]?
    /// The custom-scheme URL the browser was sent to (step 7), caught from DevTools.
    public var callbackURL: String?
    /// What the browser refused or changed on its own (cookies, CSP, HSTS).
    public var findings: [BrowserFinding] = []
    /// Why the run stopped short of the callback; nil when it was caught.
    public var failure: BrowserFailure?
    /// How the browser's requests carried the trace field.
    public var trace: BrowserTraceSupport = .off
    /// What the browser did, newest last (`"loaded https://…/login (200)"`), for diagnoses.
    public var activity: [String] = []

    public init() {}

    /// The newest activity line, or a phrase when there is none.
    public var lastActivity: String {
        activity.last ?? "nothing yet (no DevTools event arrived)"
    }

    /// The login page's exchange.
    public var loginPageExchange: BrowserExchange? { loginPage.map { exchanges[$0] } }
    /// The credentials POST's exchange (its response: the redirect, or the page shown).
    public var credentialsExchange: BrowserExchange? { credentials.map { exchanges[$0] } }
}

/// One request the browser made and what came back.
public struct BrowserExchange: Sendable {
    /// DevTools' request id (shared by the hops of a redirect chain).
    public var requestID: String
    public var url: String
    public var method: String
    /// `Document`, `Image`, `Other`… as DevTools names it.
    public var resourceType: String
    /// True for navigations of the page's main frame.
    public var isMainDocument: Bool
    /// The fields sent, as DevTools reports them: the network stack's final
    /// list (`requestWillBeSentExtraInfo`, with `Cookie`, `Host`,
    /// `Sec-Fetch-*`) when it came, else the renderer's. DevTools gives them
    /// as a JSON object, sorted by name: the wire order is not in it.
    public var requestFields: [(name: String, value: String)] = []
    public var requestFieldsAreFinal = false
    /// The request body DevTools reported (`postData`), for a POST.
    public var requestBody: [UInt8]?
    /// The trace id this request was given, when the browser could add one.
    public var traceID: String?
    /// `h2`, `http/1.1`… (`Network.Response.protocol`).
    public var protocolName: String?
    public var status: Int?
    public var responseFields: [(name: String, value: String)] = []
    /// The raw response head for HTTP/1.x, as received (DevTools `headersText`).
    public var responseHeadText: String?
    public var responseIsRaw = false
    /// Cookies the browser refused from this response.
    public var blockedCookies: [BlockedCookie] = []
    /// The net error that ended it (`net::ERR_…`), when it failed.
    public var netError: String?
    /// Why the browser blocked it (`csp`, `mixed-content`…), when it did.
    public var blockedReason: String?
    /// Where a redirect sent it.
    public var redirectedTo: String?
    /// DevTools' monotonic timestamps (seconds) of the request's start and of its response's end.
    public var started: Double?
    public var ended: Double?

    /// Seconds from the request to the end of its response, when DevTools said both.
    public var duration: Double? {
        guard let started, let ended, ended >= started else { return nil }
        return ended - started
    }

    public init(requestID: String, url: String, method: String, resourceType: String, isMainDocument: Bool) {
        self.requestID = requestID
        self.url = url
        self.method = method
        self.resourceType = resourceType
        self.isMainDocument = isMainDocument
    }

    /// The first value of response field `name` (any case).
    public func responseField(_ name: String) -> String? {
        let lowered = name.lowercased()
        return responseFields.first { $0.name.lowercased() == lowered }?.value
    }
}

/// A `Set-Cookie` the browser refused, with DevTools' reasons.
public struct BlockedCookie: Hashable, Sendable {
    public var name: String
    /// DevTools' reasons (`SameSiteNoneInsecure`, `SecureOnly`, `DomainMismatch`…).
    public var reasons: [String]
    /// The `Set-Cookie` value as received.
    public var line: String

    /// `SameSite=None without Secure`, `Domain does not match the URL`… for people.
    public var explanation: String {
        reasons.map(BlockedCookie.explain).joined(separator: "; ")
    }

    static func explain(_ reason: String) -> String {
        switch reason {
        case "SameSiteNoneInsecure": return "SameSite=None without Secure"
        case "SecureOnly": return "Secure, but the page is not https"
        case "DomainMismatch": return "its Domain does not match the URL"
        case "InvalidDomain": return "an invalid Domain"
        case "InvalidPrefix": return "a __Host-/__Secure- prefix its attributes break"
        case "SameSiteStrict", "SameSiteLax", "SameSiteUnspecifiedTreatedAsLax": return "SameSite keeps it from this cross-site request"
        case "SyntaxError": return "a syntax error"
        case "OverwriteSecure": return "it would overwrite a Secure cookie from an insecure page"
        case "UserPreferences": return "the browser's cookie settings"
        default: return reason
        }
    }
}

/// What the browser did on its own that the flow must hear about.
public enum BrowserFinding: Hashable, Sendable, CustomStringConvertible {
    /// It refused a `Set-Cookie` (`Network.responseReceivedExtraInfo.blockedCookies`).
    case cookieRefused(BlockedCookie, url: String)
    /// Content-Security-Policy blocked a load or a navigation.
    case contentSecurityPolicy(directive: String, blockedURL: String, page: String)
    /// HSTS turned an http URL into https (an internal 307).
    case hstsUpgrade(from: String, to: String)
    /// A page served over https uses an http URL (`Audits` `MixedContentIssue`): for a
    /// form's action, Chromium's insecure-form warning stops the submission.
    case mixedContent(insecureURL: String, page: String)

    public var description: String {
        switch self {
        case .cookieRefused(let cookie, let url):
            return "the browser refused cookie \(cookie.name) from \(url): \(cookie.explanation)"
        case .contentSecurityPolicy(let directive, let blocked, let page):
            return "the page \(page)'s Content-Security-Policy \(directive) blocked \(blocked)"
        case .hstsUpgrade(let from, let to):
            return "HSTS made the browser use https: \(from) became \(to)"
        case .mixedContent(let insecure, let page):
            return "the https page \(page) uses the http URL \(insecure)"
        }
    }
}

/// Why the browser did not reach the callback.
public enum BrowserFailure: Hashable, Sendable, CustomStringConvertible {
    case launch(String)
    /// The browser process ended (crash, kill) before the callback.
    case browserEnded(termination: String, lastActivity: String)
    /// The page crashed (`Inspector.targetCrashed`).
    case pageCrashed(lastActivity: String)
    /// The whole browser part took longer than allowed.
    case timedOut(seconds: Double, lastActivity: String)
    /// A navigation failed with a net error (`net::ERR_PROXY_CONNECTION_FAILED`…).
    case navigationFailed(url: String, netError: String)
    /// The browser stopped the form's submission to an http URL from an https page
    /// (its insecure-form warning page instead, `net::ERR_BLOCKED_BY_CLIENT`), before any request.
    case insecureFormBlocked(action: String, page: String)
    /// The login page has no form to fill.
    case noForm(url: String, status: Int?, title: String)
    /// The form lacks a field the user would fill; the others were filled.
    case missingField(String, fields: [String], filled: [String])
    /// After the submission the browser loaded a page, not the callback.
    case noCallback(url: String, status: Int?)
    /// The browser refused a command or sent what is not DevTools.
    case protocolError(String)

    public var description: String {
        switch self {
        case .launch(let reason): return reason
        case .browserEnded(let termination, let last):
            return "the browser \(termination) before the callback; last it \(last)"
        case .pageCrashed(let last): return "the page crashed; last the browser \(last)"
        case .timedOut(let seconds, let last):
            return "the browser did not reach the callback within \(BrowserFailure.format(seconds)) s; last it \(last)"
        case .navigationFailed(let url, let error): return "the browser could not load \(url): \(error)"
        case .insecureFormBlocked(let action, let page):
            return "the browser did not submit the sign-in form: its action \(action) is http on the https page \(page), "
                + "and Chromium showed its insecure-form warning (\"The information you're about to submit is not secure\", "
                + "net::ERR_BLOCKED_BY_CLIENT) instead of sending the credentials"
        case .noForm(let url, let status, let title):
            return "the page \(url) (\(status.map(String.init) ?? "no status")\(title.isEmpty ? "" : ", \"\(title)\"")) shows no form to sign in with"
        case .missingField(let field, let fields, let filled):
            return "the sign-in form has no \(field) field (its fields: \(fields.isEmpty ? "none" : fields.joined(separator: ", "))"
                + (filled.isEmpty ? ")" : "; filled: \(filled.joined(separator: ", ")))")
        case .noCallback(let url, let status):
            return "after the submission the browser showed \(url) (\(status.map(String.init) ?? "no status")), not the callback"
        case .protocolError(let reason): return "DevTools: \(reason)"
        }
    }

    static func format(_ seconds: Double) -> String {
        String(Double(Int(seconds * 10)) / 10)
    }
}

/// How the trace field reached the browser's requests.
public enum BrowserTraceSupport: Hashable, Sendable, CustomStringConvertible {
    /// Tracing is off for the run.
    case off
    /// Added to each main-frame document request through DevTools `Fetch` interception.
    case fetchInterception
    /// The browser could not add it: taps pair its requests by other means.
    case unavailable(String)

    public var description: String {
        switch self {
        case .off: return "the trace field is off"
        case .fetchInterception: return "each page request carried the trace field (added through DevTools Fetch)"
        case .unavailable(let reason): return "the browser's requests carry no trace field (\(reason)): the taps pair them by method, URL and time"
        }
    }
}

/// What the form filler found in the page and did.
public struct BrowserFormFill: Hashable, Sendable {
    public var forms: Int
    /// Every field of the chosen form as `name:type`.
    public var fields: [String]
    public var usernameField: String?
    public var passwordField: String?
    public var submitted: Bool
    public var title: String
}
