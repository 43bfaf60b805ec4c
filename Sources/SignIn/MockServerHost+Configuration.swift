import AuthFlow
import TLS
import Wire

extension MockServerHost {
    /// Everything a host needs to serve the mock server on a socket.
    public struct Configuration: Sendable {
        /// The mock server itself. Its `externalOrigin` is replaced by
        /// `https://<bound address>` at start when `externalOriginFollowsListener`.
        public var server: MockServerConfiguration
        /// Where to listen; port 0 picks a free port (see `Started.listenAddress`).
        /// With `listeningSocket`, that socket's address.
        public var listenAddress: SocketAddress
        /// A socket bound and listening already (inherited: `intact server
        /// --listen-fd`) to serve on instead of binding `listenAddress`; the
        /// host takes it over at `start()`.
        public var listeningSocket: ListeningSocket?
        /// True when the external URL is the listening address (no `--external-url`):
        /// then it is known only once the socket is bound.
        public var externalOriginFollowsListener: Bool
        public var certificate: ServerCertificateSource
        /// The name of the certificate presented to a client that sends no
        /// SNI; nil: the external origin's host (the listening address when it follows it).
        /// The demo behind a proxy reached by name sets the listening address: its proxy dials by IP.
        public var certificateNameWithoutSNI: String?
        /// When set, the TLS handshake fails without a client certificate that
        /// leads to these roots; the subject of the one presented is recorded.
        public var clientCertificateRoots: TLSTrustRoots?
        /// ALPN protocols in order of preference (`h2`, `http/1.1`).
        public var alpn: [String]
        /// How long a client may take to finish the TLS handshake.
        public var handshakeTimeout: Duration

        public init(server: MockServerConfiguration, listenAddress: SocketAddress,
                    externalOriginFollowsListener: Bool = false, certificate: ServerCertificateSource,
                    clientCertificateRoots: TLSTrustRoots? = nil, alpn: [String] = ["h2", "http/1.1"],
                    handshakeTimeout: Duration = .seconds(10)) {
            self.server = server
            self.listenAddress = listenAddress
            self.externalOriginFollowsListener = externalOriginFollowsListener
            self.certificate = certificate
            self.clientCertificateRoots = clientCertificateRoots
            self.alpn = alpn
            self.handshakeTimeout = handshakeTimeout
        }
    }

    /// What `start()` settled.
    public struct Started: Sendable {
        /// The bound address (with the port chosen when 0 was asked for).
        public var listenAddress: SocketAddress
        /// The mock server's configuration as it runs (with its external origin).
        public var server: MockServerConfiguration
        /// The CA certificate to trust, when a CA mints the server certificate.
        public var caCertificatePath: String?
        /// True when the development CA was created by this start.
        public var createdCA: Bool
    }
}
