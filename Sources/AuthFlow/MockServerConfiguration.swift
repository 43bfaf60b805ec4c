import Foundation

/// Everything the mock Appian server is configured with (`AUTH_FLOW.md`, "Mock server").
///
/// `contextUrl` and `tokenUrl` are built from `externalOrigin` and
/// `contextPath` only — never from a request's Host — as a real server behind
/// a load balancer does; that is what makes host rewriting visible.
/// Parts marked *synthetic* are Intact's choices where the public record is silent.
public struct MockServerConfiguration: Sendable {
    /// The server's external origin as clients see it (scheme, host, optional
    /// port; a default port is never appended).
    public var externalOrigin: Origin
    /// The context path without slashes (`suite`); empty serves at the root.
    public var contextPath: String {
        didSet { contextPath = MockServerConfiguration.trimSlashes(contextPath) }
    }
    /// Callback schemes the login URL may ask for.
    public var allowedCallbackSchemes: [String]
    public var users: [MockUser]
    /// How long a sign-in token stays valid (default 120 s).
    public var tokenLifetime: TimeInterval
    /// How long a session may stay unused (default 65 min).
    public var sessionIdleTimeout: TimeInterval
    /// How long a login form stays valid (*synthetic*, default 10 min).
    public var loginTransactionLifetime: TimeInterval
    /// The token POST body (*synthetic*; see `TokenPostFormat`).
    public var tokenPost: TokenPostFormat
    /// Reported in the bootstrap response (*synthetic*).
    public var serverVersion: String
    /// When true, a request without a client-certificate subject gets 403. The
    /// I/O layer does the TLS part and normally fails the handshake first.
    public var requiresClientCertificate: Bool
    /// Requests with larger bodies get 413 (default 64 KiB). The I/O layer
    /// should stop buffering and answer 413 itself once this is exceeded.
    public var maxRequestBodyBytes: Int
    /// When true (default), responses repeat the request's `Intact-Trace`
    /// field, so the client can tell a response this server produced from one
    /// an intermediary made up (*synthetic*; a real Appian server does not).
    public var echoesTraceField: Bool
    /// When true, a response with a body is gzip-encoded for a request whose
    /// `Accept-Encoding` accepts gzip, as a server with compression turned on
    /// does, and says so in `Intact-Content-Encoding` (*synthetic*), so the
    /// client can tell the server's encoding from an intermediary's. Default
    /// false: the server answers unencoded whatever the client accepts.
    public var gzipsResponses: Bool

    /// Callback schemes of the Appian apps.
    public static let defaultCallbackSchemes = ["appian", "appianauth", "com.appian.tempo", "com.appian.android"]

    public init(externalOrigin: Origin, contextPath: String = "suite",
                allowedCallbackSchemes: [String] = MockServerConfiguration.defaultCallbackSchemes,
                users: [MockUser] = [.demo], tokenLifetime: TimeInterval = 120,
                sessionIdleTimeout: TimeInterval = 65 * 60, loginTransactionLifetime: TimeInterval = 10 * 60,
                tokenPost: TokenPostFormat = TokenPostFormat(), serverVersion: String = "intact-mock/1",
                requiresClientCertificate: Bool = false, maxRequestBodyBytes: Int = 64 * 1024,
                echoesTraceField: Bool = true, gzipsResponses: Bool = false) {
        self.externalOrigin = externalOrigin
        self.contextPath = MockServerConfiguration.trimSlashes(contextPath)
        self.allowedCallbackSchemes = allowedCallbackSchemes
        self.users = users
        self.tokenLifetime = tokenLifetime
        self.sessionIdleTimeout = sessionIdleTimeout
        self.loginTransactionLifetime = loginTransactionLifetime
        self.tokenPost = tokenPost
        self.serverVersion = serverVersion
        self.requiresClientCertificate = requiresClientCertificate
        self.maxRequestBodyBytes = maxRequestBodyBytes
        self.echoesTraceField = echoesTraceField
        self.gzipsResponses = gzipsResponses
    }

    /// `/suite`, or empty for a root context. Every endpoint path starts with it.
    public var contextRoot: String { contextPath.isEmpty ? "" : "/" + contextPath }

    /// The login and context path: `/suite` (or `/` at the root).
    public var contextRequestPath: String { contextPath.isEmpty ? "/" : contextRoot }

    /// `{base}/{ctx}`, the step-3 `contextUrl`.
    public var contextURL: AbsoluteURL { AbsoluteURL(origin: externalOrigin, path: contextRequestPath) }

    /// `{base}/{ctx}/mobileAuthTokenConsumer`, the step-3 `tokenUrl`.
    public var tokenURL: AbsoluteURL { AbsoluteURL(origin: externalOrigin, path: contextRoot + "/" + StepClassifier.tokenEndpoint) }

    static func trimSlashes(_ path: String) -> String {
        String(path.drop(while: { $0 == "/" }).reversed().drop(while: { $0 == "/" }).reversed())
    }
}
