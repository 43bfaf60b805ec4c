import AuthFlow
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

        public init(flow: SignInFlow.Configuration, proxy: ForwardProxy? = nil, trust: TLSTrustRoots = .systemStore,
                    clientIdentity: TLSIdentity? = nil, protocols: Protocols = .http2OrHTTP1,
                    exchangeTimeout: Duration = .seconds(10)) {
            self.flow = flow
            self.proxy = proxy
            self.trust = trust
            self.clientIdentity = clientIdentity
            self.protocols = protocols
            self.exchangeTimeout = exchangeTimeout
        }
    }
}
