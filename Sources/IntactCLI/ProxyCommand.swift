import Dispatch
import Evidence
import Glibc
import Proxy
import ProxyAddons
import TLS
import Wire

/// `intact proxy`: run the intercepting proxy until SIGINT or SIGTERM.
///
/// `run` blocks the calling (main) thread: it starts the server, then waits
/// for a signal, drains in-flight exchanges for up to `--drain-timeout`,
/// flushes the recording and returns 0.
enum ProxyCommand {
    /// Bytes stored per body when `--record-bodies` is given without a limit.
    static let defaultBodyLimit = 1 << 20

    /// The options of `intact proxy`, in `--help` order.
    struct Options: OptionGroup {
        let listen = Option.value("listen", .hostPort,
                                  help: "where to listen: an IP, [IPv6] or a host name (every address bound); port 0 picks one",
                                  default: HostPort(host: "127.0.0.1", port: 8080)!)
        let listenFD = InheritedListener.option()
        let allow = Option.repeatable("allow", .addressRange,
                                      help: "only clients in this range may connect (e.g. 127.0.0.0/8 or ::1)")
        let caDirectory = CADirectoryOptions()
        let mode = Option.value("mode", .proxyMode, help: "forward, or reverse:https://HOST:PORT", default: .forward,
                                shownDefault: "forward")
        let listenPlain = Option.flag(
            "listen-plain",
            help: "reverse mode: take plain HTTP/1.x from clients instead of TLS (for Varnish and other "
                + "intermediaries that speak http:// to their backends)")
        let passthrough = Option.repeatable("passthrough", .string("HOST"),
                                            help: "tunnel this host without interception (*.domain allowed)")
        let intercept = Option.repeatable(
            "intercept", .string("HOST"),
            help: "intercept only this host; tunnel (and record as tunnels) every other (*.domain allowed)")
        let upstreamCA = Option.optional("upstream-ca", .string("FILE"),
                                         help: "PEM file of the CAs upstream certificates must lead to (default: system store)")
        let upstreamCAAdds = Option.flag(
            "upstream-ca-adds",
            help: "with --upstream-ca: trust the system store too, the file's CAs besides (a TLS-inspecting proxy's CA)")
        let insecureUpstream = Option.flag("insecure-upstream",
                                           help: "do not verify upstream certificates (recorded, and warned about)")
        let upstreamClientCertificate = Option.optional("upstream-client-cert", .string("FILE.p12"),
                                                        help: "client certificate for upstreams that ask for one")
        let upstreamClientCertificatePassword = Option.value("upstream-client-cert-password", .string("PASSWORD"),
                                                             help: "password of the PKCS#12 file",
                                                             default: CACommand.defaultPassword)
        let upstreamProxy = Option.optional(
            "upstream-proxy", .string("URL"),
            help: "tunnel every upstream connection through this proxy with CONNECT: http://[USER:PASSWORD@]HOST:PORT "
                + "(default: $HTTPS_PROXY, minus $NO_PROXY)")
        let noUpstreamProxy = Option.repeatable(
            "no-upstream-proxy", .string("HOST"),
            help: "reach this host directly (.domain suffixes, IP literals, * for all)")
        let keyLog = Option.optional("keylog", .string("FILE"),
                                     help: "write both legs' TLS secrets for Wireshark (default: $SSLKEYLOGFILE)")
        let record = Option.optional("record", .string("FILE.jsonl"),
                                     help: "write every exchange to this recording (never overwritten)")
        let tap = Option.value("tap", .string("NAME"), help: "the tap name in the recording", default: "proxy")
        let recordBodies = Option.optionalValue(
            "record-bodies", .byteSize("LIMIT"), whenAlone: ProxyCommand.defaultBodyLimit,
            help: "store bodies in the recording, up to LIMIT bytes each (K/M/G suffixes; default 1M)")
        let recordSecrets = Option.flag("record-secrets",
                                        help: "record cookies, Authorization, tokens and passwords in clear (default: keyed digests)")
        let secrets = RecordingOptions()
        let contextPath = Option.value("context-path", .string("PATH"),
                                       help: "the sign-in flow's context path, for step labels", default: "suite")
        let quiet = Option.flag("quiet", short: "q", help: "no log line per exchange")
        let logFormat = Option.value("log-format", .choice([ExchangeLogFormat.text, .json], "FORMAT"),
                                     help: "text or json", default: .text)
        let drainTimeout = Option.value("drain-timeout", .integer(in: 0...3600, "SECONDS"),
                                        help: "how long to let in-flight exchanges finish on stop", default: 5)
        let loops = Option.value("loops", .integer(in: 1...256, "N"),
                                 help: "event loops (threads) serving connections; a client connection and its upstreams share one",
                                 default: EventLoopGroup.defaultLoopCount)
        let loopWait = Option.value("loop-wait", .choice(EventLoop.Waiting.allCases, "HOW"),
                                    help: "how each loop waits for its sockets: dispatch (one Dispatch source on its epoll) "
                                        + "or thread (a thread of its own blocking in epoll_wait; Docs/performance.md#one-epoll-per-loop)",
                                    default: EventLoop.Waiting.default, shownDefault: EventLoop.Waiting.default.rawValue)
        let headTimeout = Option.value("head-timeout", .integer(in: 1...86_400, "SECONDS"),
                                       help: "a request head must complete this long after its first byte (else 408)",
                                       default: 30)
        let idleTimeout = Option.value("idle-timeout", .integer(in: 1...86_400, "SECONDS"),
                                       help: "close a client connection with no request this long (HTTP/2: GOAWAY)",
                                       default: 120)
        let bodyTimeout = Option.value("body-timeout", .integer(in: 1...86_400, "SECONDS"),
                                       help: "cut a connection (HTTP/2: reset the stream) whose body makes no progress this long",
                                       default: 60)
        let maxClientConnections = Option.value("max-client-connections", .integer(in: 1...1_000_000, "N"),
                                                help: "connections one client address may hold; more are refused and logged",
                                                default: 512)
        let faults = FaultOptions.Group()
    }

    static let options = Options()

    static let command = Command(
        name: "proxy",
        summary: "Run the intercepting proxy (forward or reverse) and record every exchange.",
        discussion: """
            Forward mode: point clients at it as an HTTP proxy and make them trust the CA
            (intact ca show says where it is; curl -x http://127.0.0.1:8080 --cacert CA.pem https://HOST/).
            A device set to use the proxy gets the CA and install steps at http://intact.proxy/.
            Reverse mode: clients connect to it as if it were the upstream.
            Each finished exchange is logged on standard error; with --record it is also
            written to a JSON Lines recording (format: Docs/recording-format.md).
            SIGINT/SIGTERM stop accepting, drain in-flight exchanges, flush and exit 0.
            """ + "\n\n" + FaultOptions.discussion,
        options: options,
        run: run)

    private static func run(_ arguments: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        let inherited = try InheritedListener.socket(arguments, descriptor: options.listenFD, address: options.listen)
        let configuration = try makeConfiguration(arguments, context)
        // Process-wide, so here and not in `makeConfiguration` (which tests call to build values).
        MallocArenas.limit(to: configuration.loopCount, environment: context.environment)
        let drainSeconds = arguments[options.drainTimeout]
        let server = ProxyServer(configuration: configuration)
        let stopRequested = DispatchSemaphore(value: 0)
        _ = try inherited.map(server.start(on:)) ?? server.start()
        // Watched only once the server runs (before the banner a supervisor waits for): a start
        // that throws must not leave SIGINT and SIGTERM ignored, in-process (tests) or inherited by children.
        let signals = SignalWatch(signals: [SIGINT, SIGTERM]) { stopRequested.signal() }
        let addresses = server.listeningAddresses
        var banner = "intact proxy: listening on \(addresses.map(\.description).joined(separator: " and ")) "
            + "(\(configuration.mode) mode\(configuration.listenPlain ? ", plain HTTP listener" : "")), CA \(configuration.authority.certificatePath)"
        if let recording = configuration.recording { banner += ", recording \(recording.path)" }
        context.standardError.line(banner)
        if let warning = exposureWarning(addresses, allowed: configuration.allowedClients) {
            context.standardError.line(warning)
        }
        stopRequested.wait()
        signals.cancel()
        context.standardError.line("intact proxy: stopping; draining in-flight exchanges (up to \(drainSeconds) s)")
        let outcome = server.stopAndWait(drainTimeout: .seconds(drainSeconds))
        if outcome.abandonedExchanges > 0 {
            context.standardError.line("intact proxy: \(outcome.abandonedExchanges) exchange(s) were still running and were cut")
        }
        if let problem = outcome.recordingError {
            throw CommandFailure("\(problem)")
        }
        return ExitStatus.success
    }

    /// The server's configuration from the options; warnings go to standard error.
    static func makeConfiguration(_ arguments: ParsedArguments, _ context: CommandContext) throws -> ProxyConfiguration {
        let faults = try FaultOptions.parse(arguments, options.faults)
        let directory = options.caDirectory.directory(arguments, context)
        let listen = arguments[options.listen]
        let contextPath = arguments[options.contextPath]
        let (authority, created) = try CertificateAuthority.loadOrCreate(in: directory)
        if created {
            context.standardError.line("intact proxy: created a development CA in \(directory); "
                                       + "clients must trust \(authority.certificatePath)")
        }
        var configuration = ProxyConfiguration(authority: authority)
        configuration.listenHost = listen.host
        configuration.listenPort = Int(listen.port)
        configuration.allowedClients = ClientAllowList(arguments[options.allow])
        let log = context.standardError
        configuration.refusedClientLog = { address in
            log.line("intact proxy: refused a connection from \(address.ip): not in --allow")
        }
        configuration.mode = arguments[options.mode]
        if arguments[options.listenPlain] {
            guard case .reverse = configuration.mode else {
                throw UsageError("--listen-plain needs --mode reverse:URL (forward mode listens in plain HTTP already)",
                                 path: arguments.path)
            }
            configuration.listenPlain = true
        }
        if case .forward = configuration.mode { configuration.localSite = try CAPage(authority: authority) }
        configuration.passthroughHosts = arguments[options.passthrough]
        configuration.interceptHosts = arguments[options.intercept]
        if !configuration.interceptHosts.isEmpty, configuration.mode.isReverse {
            throw UsageError("--intercept is for forward mode (a reverse proxy intercepts its one upstream)",
                             path: arguments.path)
        }
        configuration.tap = arguments[options.tap]
        configuration.toolVersion = IntactVersion.string
        configuration.loopCount = arguments[options.loops]
        configuration.loopWaiting = arguments[options.loopWait]
        configuration.clientTimeouts = ClientTimeouts(head: .seconds(arguments[options.headTimeout]),
                                                      idle: .seconds(arguments[options.idleTimeout]),
                                                      body: .seconds(arguments[options.bodyTimeout]))
        configuration.maxClientConnections = arguments[options.maxClientConnections]
        configuration.diagnosticLog = { line in log.line("intact proxy: \(line)") }

        let insecure = arguments[options.insecureUpstream]
        if let caFile = arguments[options.upstreamCA] {
            guard !insecure else {
                throw UsageError("--upstream-ca and --insecure-upstream contradict each other", path: arguments.path)
            }
            configuration.upstreamVerification = arguments[options.upstreamCAAdds] ? .systemStoreAndCAFile(caFile) : .caFile(caFile)
        } else if arguments[options.upstreamCAAdds] {
            throw UsageError("--upstream-ca-adds needs --upstream-ca FILE", path: arguments.path)
        } else if insecure {
            configuration.upstreamVerification = .insecure
            context.standardError.line("intact proxy: WARNING: upstream certificates are NOT verified (--insecure-upstream); "
                                       + "any server can impersonate any upstream")
        }
        if let file = arguments[options.upstreamClientCertificate] {
            configuration.upstreamClientIdentity = try PKCS12.importIdentity(
                file: file, password: arguments[options.upstreamClientCertificatePassword])
        }
        if let (proxy, note) = try upstreamProxy(arguments, environment: context.environment) {
            configuration.upstreamProxy = proxy
            context.standardError.line(note)
        }
        if let keyLog = arguments[options.keyLog] { configuration.keyLog = .file(keyLog) }
        if let path = arguments[options.record] {
            let redaction = try options.secrets.redaction(arguments, recordSecrets: arguments[options.recordSecrets],
                                                          keyDirectory: options.caDirectory.directory(arguments, context)) { note in
                context.standardError.line("intact proxy: " + note)
            }
            configuration.recording = ProxyConfiguration.Recording(
                path: path, bodyStoreLimit: arguments[options.recordBodies] ?? 0, redaction: redaction)
        } else if arguments.isGiven(options.recordBodies) || arguments[options.recordSecrets] {
            throw UsageError("--record-bodies and --record-secrets need --record FILE.jsonl", path: arguments.path)
        } else if let option = options.secrets.firstGiven(arguments) {
            throw UsageError("--\(option) needs --record FILE.jsonl", path: arguments.path)
        }
        configuration.addons = ProxyConfiguration.signInAddons(
            contextPath: contextPath, try faults.map { [try $0.addon(contextPath: contextPath)] } ?? [])
        if let faults {
            context.standardError.line("intact proxy: injecting faults: \(faults.summary)")
        }
        configuration.exchangeLogReadsDigests = false  // `ExchangeLogLine` reads the body's length, no digest
        if !arguments[options.quiet] {
            let format = arguments[options.logFormat]
            let log = context.standardError
            configuration.exchangeLog = { record in log.line(ExchangeLogLine(record).rendered(format)) }
        }
        return configuration
    }

    /// `--upstream-proxy` with `--no-upstream-proxy` exemptions, else
    /// `HTTPS_PROXY`/`https_proxy` with `NO_PROXY`/`no_proxy`; and the line that says so at start.
    static func upstreamProxy(_ arguments: ParsedArguments, environment: [String: String]) throws
        -> (UpstreamProxy, String)?
    {
        let exemptions = arguments[options.noUpstreamProxy]
        if let text = arguments[options.upstreamProxy] {
            guard let proxy = UpstreamProxy(url: text, exemptions: exemptions) else {
                throw UsageError("option --upstream-proxy expects http://[USER:PASSWORD@]HOST:PORT, got '\(text)'",
                                 path: arguments.path)
            }
            let except = exemptions.isEmpty ? "" : " except to \(exemptions.joined(separator: ", "))"
            return (proxy, "intact proxy: upstream connections go through \(proxy)\(except) (--upstream-proxy)")
        }
        guard let text = environment["HTTPS_PROXY"] ?? environment["https_proxy"], !text.isEmpty else {
            if !exemptions.isEmpty {
                throw UsageError("--no-upstream-proxy needs --upstream-proxy (or HTTPS_PROXY)", path: arguments.path)
            }
            return nil
        }
        let noProxy = (environment["NO_PROXY"] ?? environment["no_proxy"] ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        let all = noProxy + exemptions
        guard let proxy = UpstreamProxy(url: text, exemptions: all) else {
            throw CommandFailure("HTTPS_PROXY is not http://[USER:PASSWORD@]HOST:PORT: '\(text)'; "
                                 + "fix it, or give --upstream-proxy")
        }
        let except = all.isEmpty ? "" : " except to \(all.joined(separator: ", "))"
        return (proxy, "intact proxy: upstream connections go through \(proxy)\(except) (from HTTPS_PROXY"
                    + (noProxy.isEmpty ? "" : " and NO_PROXY") + "; --upstream-proxy overrides)")
    }

    /// The warning for a listener others can reach: any bound address that is not loopback.
    static func exposureWarning(_ addresses: [SocketAddress], allowed: ClientAllowList) -> String? {
        let exposed = addresses.filter { !$0.isLoopback }
        guard !exposed.isEmpty else { return nil }
        let names = exposed.map(\.description).joined(separator: ", ")
        if allowed.isEmpty {
            return "intact proxy: WARNING: listening on \(names), not loopback: anyone who can reach this address "
                + "can use the proxy and read what it records; limit clients with --allow CIDR"
        }
        return "intact proxy: WARNING: listening on \(names), not loopback; only clients in "
            + "\(allowed.ranges.map(\.description).joined(separator: ", ")) may connect (--allow)"
    }
}

extension ValueParser where T == HostPort {
    /// `HOST:PORT` or `[IPv6]:PORT`; the host an IP literal or a name (resolved when the proxy starts).
    static var hostPort: ValueParser<HostPort> {
        ValueParser(valueName: "HOST:PORT",
                    expected: "HOST:PORT (for example 127.0.0.1:8080, localhost:8080 or [::1]:0)") { HostPort($0) }
    }
}

extension ValueParser where T == AddressRange {
    /// An address or CIDR block, no host bits set past the prefix.
    static var addressRange: ValueParser<AddressRange> {
        ValueParser(valueName: "CIDR",
                    expected: "an address or CIDR block such as 127.0.0.0/8 or ::1/128 (no host bits past the prefix)") {
            AddressRange($0)
        }
    }
}

extension ValueParser where T == ProxyMode {
    /// `forward` or `reverse:https://HOST:PORT`.
    static var proxyMode: ValueParser<ProxyMode> {
        ValueParser(valueName: "MODE") { (text: String) throws(Rejection) -> ProxyMode in
            do {
                return try ProxyMode(parsing: text)
            } catch {
                throw Rejection(expected: "forward or reverse:https://HOST:PORT (\(error))")
            }
        }
    }
}
