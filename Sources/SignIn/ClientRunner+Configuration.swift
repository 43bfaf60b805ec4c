import AuthFlow
import Browser
import TLS
import Transport

extension ClientRunner {
    /// Which HTTP versions the client offers in ALPN.
    public enum Protocols: String, Hashable, Sendable {
        /// `h2`, then `http/1.1`: the server picks.
        case http2OrHTTP1
        case http1Only
        case http2Only

        /// The transport's choice: ALPN offer and the version spoken.
        var choice: HTTPProtocolChoice {
            switch self {
            case .http2OrHTTP1: return .negotiated
            case .http1Only: return .http1
            case .http2Only: return .http2
            }
        }
    }

    /// Everything a run needs besides the flow's own settings.
    public struct Configuration: Sendable {
        /// The flow: resource URL, user, callback scheme, token POST format, trace run.
        public var flow: SignInFlow.Configuration
        /// Forward proxy reached with `CONNECT`, or nil to connect directly.
        public var proxy: ForwardProxy?
        /// The roots the server's certificate must lead to.
        public var trust: TLSTrustRoots
        /// Presented whenever a server or gateway asks for a client certificate.
        public var clientIdentity: TLSIdentity?
        public var protocols: Protocols
        /// The most one exchange may take, from connecting to the response's end.
        public var exchangeTimeout: Duration
        /// Who plays the browser of steps 6–8: Intact's own HTTP requests, or Chromium.
        public var browser: BrowserChoice = .simulated
        /// The browser's own path when it differs from the app's (`proxy`): per-app VPN.
        public var browserPath: BrowserPath = .sameAsApp
        /// The simulated browser's client certificate when it differs from the app's;
        /// Chromium's (imported into its profile) when it is `.identity`.
        public var browserIdentity: BrowserIdentity = .sameAsApp
        /// Names resolved here, not by DNS (`--resolve`): for the app's and the
        /// simulated browser's direct connections, and Chromium's resolver rules.
        public var resolve = ResolveTable()

        public init(flow: SignInFlow.Configuration, proxy: ForwardProxy? = nil, trust: TLSTrustRoots = .systemStore,
                    clientIdentity: TLSIdentity? = nil, protocols: Protocols = .http2OrHTTP1,
                    exchangeTimeout: Duration = .seconds(10), browser: BrowserChoice = .simulated) {
            self.flow = flow
            self.proxy = proxy
            self.trust = trust
            self.clientIdentity = clientIdentity
            self.protocols = protocols
            self.exchangeTimeout = exchangeTimeout
            self.browser = browser
        }
    }
}

extension ClientRunner {
    /// Who plays the browser.
    public enum BrowserChoice: Sendable {
        /// The flow's own requests, with the browser's own cookie jar and connections (fast, no dependency).
        case simulated
        /// Headless Chromium driven over DevTools (`ChromiumBrowser`).
        case chromium(ChromiumSettings)
    }

    /// Where the browser's connections go, relative to the app's.
    public enum BrowserPath: Hashable, Sendable, CustomStringConvertible {
        case sameAsApp
        case direct
        case proxy(ForwardProxy)

        public var description: String {
            switch self {
            case .sameAsApp: return "the app's path"
            case .direct: return "direct"
            case .proxy(let proxy): return "proxy \(proxy)"
            }
        }
    }

    /// The client certificate the simulated browser presents.
    public enum BrowserIdentity: Sendable {
        case sameAsApp
        case none
        case identity(TLSIdentity)
    }
}
