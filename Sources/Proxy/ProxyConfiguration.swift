import Evidence
import TLS
import Wire

/// Everything a `ProxyServer` runs with; `intact proxy` builds one from its
/// options, the demo builds one in code.
public struct ProxyConfiguration: Sendable {
    /// How the proxy checks upstream server certificates.
    public enum UpstreamVerification: Sendable, Hashable {
        /// The system's trusted roots (the default).
        case systemStore
        /// The certificates in this PEM file (`--upstream-ca`).
        case caFile(String)
        /// The system's roots and the certificates in this PEM file
        /// (`--upstream-ca FILE --upstream-ca-adds`: a TLS-inspecting proxy's CA besides the public ones).
        case systemStoreAndCAFile(String)
        /// No check at all (`--insecure-upstream`); the outcome is still recorded.
        case insecure
    }

    /// Where recorded exchanges go.
    public struct Recording: Sendable {
        /// The JSON Lines file; it must not exist unless `replacing`.
        public var path: String
        public var replacing: Bool
        /// The most bytes of each body stored; 0 stores none (the default).
        public var bodyStoreLimit: Int
        /// What the recording keeps in clear and the key it digests the rest
        /// under (`--record-secrets`, `--secret-name`, `--digest-key`).
        public var redaction: RedactionPolicy
        /// Queued bytes at which the writer has no room and each loop stops
        /// reading its client connections until it has (`RecordingWriter.queueLimit`).
        public var queueLimit = RecordingWriter.defaultQueueLimit

        public init(path: String, replacing: Bool = false, bodyStoreLimit: Int = 0,
                    redaction: RedactionPolicy = RedactionPolicy()) {
            self.path = path
            self.replacing = replacing
            self.bodyStoreLimit = bodyStoreLimit
            self.redaction = redaction
        }

        /// Secrets in clear (`recordSecrets`) or digested under a key made for this process.
        public init(path: String, replacing: Bool = false, bodyStoreLimit: Int = 0, recordSecrets: Bool) {
            self.init(path: path, replacing: replacing, bodyStoreLimit: bodyStoreLimit,
                      redaction: RedactionPolicy(recordSecrets: recordSecrets))
        }

        /// Keep secret field values in clear.
        public var recordSecrets: Bool { redaction.recordSecrets }
    }

    /// The address to listen on: an IP literal, or a host name whose every
    /// address is bound (`localhost`: 127.0.0.1 and ::1); loopback by default.
    public var listenHost: String = "127.0.0.1"
    /// The port; 0 picks an ephemeral one (`ProxyServer.start` returns it).
    public var listenPort: Int = 8080
    public var mode: ProxyMode = .forward
    /// Reverse mode only: the client leg speaks plain HTTP/1.x instead of TLS
    /// (`--listen-plain`), for intermediaries that speak `http://` to their
    /// backends (Varnish, many appliances). Requests are recorded with scheme
    /// `http` on the downstream leg; forward mode listens in plain HTTP always.
    public var listenPlain = false
    /// Mints the leaves presented to clients.
    public var authority: CertificateAuthority
    /// Hosts tunnelled without interception (forward mode).
    public var passthroughHosts: [String] = []
    /// When not empty, the only hosts intercepted (forward mode, `--intercept`):
    /// every other CONNECT is tunnelled and recorded as a tunnel.
    public var interceptHosts: [String] = []
    public var upstreamVerification: UpstreamVerification = .systemStore
    /// Presented when an upstream asks for a client certificate.
    public var upstreamClientIdentity: TLSIdentity?
    /// Where both legs' TLS secrets go (NSS key log); `SSLKEYLOGFILE` by default.
    public var keyLog: TLSKeyLogSetting = .environment
    /// The tap name on every record and in the recording header.
    public var tap: String = "proxy"
    /// Nil: exchanges are not written to a file (they still reach `exchangeLog`).
    public var recording: Recording?
    /// Add-ons run on every exchange, in order (`intact proxy` and the demo
    /// give the sign-in flow's: `ProxyAddons`' `signInAddons`).
    public var addons: [any ProxyAddon] = []
    /// The HTTP proxy every upstream connection is tunnelled through with
    /// CONNECT (`--upstream-proxy`, or `HTTPS_PROXY`); nil: direct.
    public var upstreamProxy: UpstreamProxy?
    /// Clients allowed to connect (`--allow`); empty: everyone.
    public var allowedClients = ClientAllowList()
    /// Called with the address of each client `allowedClients` refused, on
    /// its loop (`intact proxy` logs a line). Must not block.
    public var refusedClientLog: (@Sendable (SocketAddress) -> Void)?
    /// Answers forward-mode requests addressed to the proxy itself
    /// (`http://intact.proxy/`, `http://PROXY:PORT/`): the CA page. Nil: none.
    public var localSite: (any LocalSite)?
    /// Called with each finished exchange's record, on the exchange's loop
    /// (`intact proxy` logs a line). Must not block.
    public var exchangeLog: (@Sendable (ExchangeRecord) -> Void)?
    /// False when `exchangeLog` (if any) reads no message digests, as
    /// `intact proxy`'s (`ExchangeLogLine`: method, URL, status, body length,
    /// time): with no `recording` either, heads and bodies are then not
    /// hashed (`RecordingSettings.takesDigests`). True by default, so a
    /// caller's log gets full records.
    public var exchangeLogReadsDigests = true
    /// True when something reads the records' message digests: a recording
    /// file, or an exchange log that reads them (`exchangeLogReadsDigests`).
    /// False, heads and bodies are not hashed (`RecordingSettings.takesDigests`).
    public var takesDigests: Bool { recording != nil || exchangeLogReadsDigests }
    /// The version written into the recording header (`intact --version`).
    public var toolVersion: String = "unknown"
    /// How many event loops serve connections.
    public var loopCount: Int = 1
    /// How each loop waits for its sockets (`EventLoop.Waiting`).
    public var loopWaiting: EventLoop.Waiting = .default
    /// How long a TLS handshake or an upstream connect may take.
    public var connectTimeout: Duration = .seconds(10)
    /// HTTP/1.1 upstream connections per target at most (HTTP/2 uses one).
    public var maxUpstreamConnectionsPerTarget: Int = 8
    /// The head, idle and body timeouts of client connections.
    public var clientTimeouts = ClientTimeouts()
    /// Client connections from one address at most; more are refused (closed at once) and logged.
    public var maxClientConnections: Int = 512
    /// Where the proxy reports what concerns no exchange (a refused client
    /// connection); `intact proxy` writes it to standard error. Must not block.
    public var diagnosticLog: (@Sendable (String) -> Void)?

    public init(authority: CertificateAuthority) {
        self.authority = authority
    }

    /// The origin the recording stands for (the header's `origin`): a
    /// reverse proxy's upstream; nil in forward mode, which carries any.
    public var recordedOrigin: String? {
        guard case .reverse(let upstream) = mode else { return nil }
        return upstream.description
    }

    /// The options that shape what was recorded, for the recording header.
    public var recordedOptions: [String: String] {
        var options = ["listen": "\(listenHost):\(listenPort)", "mode": mode.description,
                       "caSHA256": authority.sha256Fingerprint]
        if listenPlain { options["listenPlain"] = "true" }
        switch upstreamVerification {
        case .systemStore: options["upstreamVerification"] = "system"
        case .caFile(let path): options["upstreamVerification"] = "ca-file:\(path)"
        case .systemStoreAndCAFile(let path): options["upstreamVerification"] = "system+ca-file:\(path)"
        case .insecure: options["upstreamVerification"] = "insecure"
        }
        if let upstreamProxy {
            options["upstreamProxy"] = upstreamProxy.address.description
            if !upstreamProxy.exemptions.isEmpty { options["noUpstreamProxy"] = upstreamProxy.exemptions.joined(separator: ",") }
        }
        if !allowedClients.isEmpty { options["allow"] = allowedClients.ranges.map(\.description).joined(separator: ",") }
        if !passthroughHosts.isEmpty { options["passthrough"] = passthroughHosts.joined(separator: ",") }
        if !interceptHosts.isEmpty { options["intercept"] = interceptHosts.joined(separator: ",") }
        if let recording { options["recordBodies"] = String(recording.bodyStoreLimit) }
        if let identity = upstreamClientIdentity { options["upstreamClientCertificate"] = identity.subject }
        for addon in addons {
            for (key, value) in addon.recordedOptions {
                options[key] = options[key].map { $0 + "," + value } ?? value
            }
        }
        return options
    }
}
