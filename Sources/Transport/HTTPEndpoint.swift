import HTTP
import TLS

/// Where an HTTP client connects and how: host and port, TLS (with SNI and
/// ALPN) or plaintext, optionally through an HTTP forward proxy (CONNECT).
/// Hashable, so a pool keys its connections by it: two endpoints share
/// connections only when every setting (the TLS context by identity) matches.
public struct HTTPEndpoint: Hashable, Sendable, CustomStringConvertible {
    /// The origin's host: a DNS name or an IP literal (IPv6 without brackets).
    public var host: String
    public var port: UInt16
    /// nil: plaintext.
    public var tls: HTTPClientTLS?
    /// An HTTP forward proxy to reach the origin through: the connection
    /// opens a CONNECT tunnel to `host:port` (for plaintext origins too), then
    /// TLS inside it.
    public var proxy: HTTPProxyAddress?
    /// `.negotiated` follows ALPN under TLS and means HTTP/1.1 over plaintext;
    /// `.http2` over plaintext speaks HTTP/2 with prior knowledge.
    public var protocolChoice: HTTPProtocolChoice

    public init(host: String, port: UInt16, tls: HTTPClientTLS? = nil, proxy: HTTPProxyAddress? = nil,
                protocolChoice: HTTPProtocolChoice = .negotiated) {
        self.host = host
        self.port = port
        self.tls = tls
        self.proxy = proxy
        self.protocolChoice = protocolChoice
    }

    /// `host:port`, with brackets around an IPv6 literal: the CONNECT target and the default `Host`.
    public var authority: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// `https` under TLS, else `http`.
    public var scheme: String { tls == nil ? "http" : "https" }

    public var description: String {
        "\(scheme)://\(authority)" + (proxy.map { " via proxy \($0.host):\($0.port)" } ?? "")
    }
}

/// TLS settings of an `HTTPEndpoint`.
public struct HTTPClientTLS: Hashable, Sendable {
    /// A client context: trust roots, ALPN offer, client certificate.
    public var context: TLSContext
    /// SNI and the name checked in the certificate; nil: the endpoint's host.
    public var serverName: String?
    public var handshakeTimeout: Duration

    public init(context: TLSContext, serverName: String? = nil, handshakeTimeout: Duration = .seconds(10)) {
        self.context = context
        self.serverName = serverName
        self.handshakeTimeout = handshakeTimeout
    }

    /// A context that trusts `trustRoots`, offers `protocols` by ALPN, and
    /// presents `identity` when the server asks for a client certificate.
    /// Make it once and share it: endpoints with the same context share pooled connections.
    public init(trustRoots: TLSTrustRoots, identity: TLSIdentity? = nil, protocols: HTTPProtocolChoice = .negotiated,
                serverName: String? = nil, handshakeTimeout: Duration = .seconds(10)) throws(TLSError) {
        var configuration = TLSClientConfiguration(verification: .verify(trustRoots), identity: identity)
        configuration.alpnOffer = protocols.alpnProtocols
        self.init(context: try TLSContext(client: configuration), serverName: serverName,
                  handshakeTimeout: handshakeTimeout)
    }

    public static func == (lhs: HTTPClientTLS, rhs: HTTPClientTLS) -> Bool {
        lhs.context === rhs.context && lhs.serverName == rhs.serverName && lhs.handshakeTimeout == rhs.handshakeTimeout
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(context))
        hasher.combine(serverName)
        hasher.combine(handshakeTimeout)
    }
}
