import Dispatch
import Evidence
import Glibc
import Proxy
import TLS

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
        let listen = Option.value("listen", .socketAddress(), help: "address to listen on (an IP; port 0 picks one)",
                                  default: .loopbackIPv4(port: 8080))
        let caDirectory = Option.value("ca-dir", .string("DIR"),
                                       help: "the CA that mints the certificates shown to clients (created on first use)",
                                       default: CertificateAuthority.defaultDirectory)
        let mode = Option.value("mode", .proxyMode, help: "forward, or reverse:https://HOST:PORT", default: .forward,
                                shownDefault: "forward")
        let passthrough = Option.repeatable("passthrough", .string("HOST"),
                                            help: "tunnel this host without interception (repeatable; *.domain allowed)")
        let upstreamCA = Option.optional("upstream-ca", .string("FILE"),
                                         help: "PEM file of the CAs upstream certificates must lead to (default: system store)")
        let insecureUpstream = Option.flag("insecure-upstream",
                                           help: "do not verify upstream certificates (recorded, and warned about)")
        let upstreamClientCertificate = Option.optional("upstream-client-cert", .string("FILE.p12"),
                                                        help: "client certificate for upstreams that ask for one")
        let upstreamClientCertificatePassword = Option.value("upstream-client-cert-password", .string("PASSWORD"),
                                                             help: "password of the PKCS#12 file",
                                                             default: CACommand.defaultPassword)
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
        let faults = FaultOptions.Group()
    }

    static let options = Options()

    static let command = Command(
        name: "proxy",
        summary: "Run the intercepting proxy (forward or reverse) and record every exchange.",
        discussion: """
            Forward mode: point clients at it as an HTTP proxy and make them trust the CA
            (curl -x http://127.0.0.1:8080 --cacert certs/ca-cert.pem https://HOST/).
            Reverse mode: clients connect to it as if it were the upstream.
            Each finished exchange is logged on standard error; with --record it is also
            written to a JSON Lines recording (see the README for the format).
            SIGINT/SIGTERM stop accepting, drain in-flight exchanges, flush and exit 0.
            """ + "\n\n" + FaultOptions.discussion,
        options: options,
        run: run)

    private static func run(_ arguments: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        let configuration = try makeConfiguration(arguments, context)
        let drainSeconds = arguments[options.drainTimeout]
        let server = ProxyServer(configuration: configuration)
        let stopRequested = DispatchSemaphore(value: 0)
        let signals = SignalWatch(signals: [SIGINT, SIGTERM]) { stopRequested.signal() }
        let address = try server.start()
        var banner = "intact proxy: listening on \(address) (\(configuration.mode) mode), CA \(configuration.authority.certificatePath)"
        if let recording = configuration.recording { banner += ", recording \(recording.path)" }
        context.standardError.line(banner)
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
        let directory = arguments[options.caDirectory]
        let listen = arguments[options.listen]
        let contextPath = arguments[options.contextPath]
        let (authority, created) = try CertificateAuthority.loadOrCreate(in: directory)
        if created {
            context.standardError.line("intact proxy: created a development CA in \(directory); "
                                       + "clients must trust \(authority.certificatePath)")
        }
        var configuration = ProxyConfiguration(authority: authority)
        configuration.listenHost = listen.ip
        configuration.listenPort = Int(listen.port)
        configuration.mode = arguments[options.mode]
        configuration.passthroughHosts = arguments[options.passthrough]
        configuration.tap = arguments[options.tap]
        configuration.toolVersion = IntactVersion.string
        configuration.contextPath = contextPath

        let insecure = arguments[options.insecureUpstream]
        if let caFile = arguments[options.upstreamCA] {
            guard !insecure else {
                throw UsageError("--upstream-ca and --insecure-upstream contradict each other", path: arguments.path)
            }
            configuration.upstreamVerification = .caFile(caFile)
        } else if insecure {
            configuration.upstreamVerification = .insecure
            context.standardError.line("intact proxy: WARNING: upstream certificates are NOT verified (--insecure-upstream); "
                                       + "any server can impersonate any upstream")
        }
        if let file = arguments[options.upstreamClientCertificate] {
            configuration.upstreamClientIdentity = try PKCS12.importIdentity(
                file: file, password: arguments[options.upstreamClientCertificatePassword])
        }
        if let keyLog = arguments[options.keyLog] { configuration.keyLog = .file(keyLog) }
        if let path = arguments[options.record] {
            let redaction = try options.secrets.redaction(arguments, recordSecrets: arguments[options.recordSecrets],
                                                          keyDirectory: arguments[options.caDirectory]) { note in
                context.standardError.line("intact proxy: " + note)
            }
            configuration.recording = ProxyConfiguration.Recording(
                path: path, bodyStoreLimit: arguments[options.recordBodies] ?? 0, redaction: redaction)
        } else if arguments.isGiven(options.recordBodies) || arguments[options.recordSecrets] {
            throw UsageError("--record-bodies and --record-secrets need --record FILE.jsonl", path: arguments.path)
        } else if let option = options.secrets.firstGiven(arguments) {
            throw UsageError("--\(option) needs --record FILE.jsonl", path: arguments.path)
        }
        if let faults {
            configuration.addons.append(try faults.addon(contextPath: contextPath))
            context.standardError.line("intact proxy: injecting faults: \(faults.summary)")
        }
        if !arguments[options.quiet] {
            let format = arguments[options.logFormat]
            let log = context.standardError
            configuration.exchangeLog = { record in log.line(ExchangeLogLine(record).rendered(format)) }
        }
        if !LoopGuard.isLoopbackLiteral(listen.ip) {
            context.standardError.line("intact proxy: WARNING: listening on \(listen.ip), not loopback: anyone who can reach "
                                       + "this address can use the proxy")
        }
        return configuration
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
