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
        options: [
            .value("listen", valueName: "ADDR:PORT", help: "address to listen on (an IP; port 0 picks one)",
                   defaultValue: "127.0.0.1:8080"),
            .value("ca-dir", valueName: "DIR", help: "the CA that mints the certificates shown to clients (created on first use)",
                   defaultValue: CertificateAuthority.defaultDirectory),
            .value("mode", valueName: "MODE", help: "forward, or reverse:https://HOST:PORT", defaultValue: "forward"),
            .value("passthrough", valueName: "HOST", help: "tunnel this host without interception (repeatable; *.domain allowed)",
                   isRepeatable: true),
            .value("upstream-ca", valueName: "FILE", help: "PEM file of the CAs upstream certificates must lead to (default: system store)"),
            .flag("insecure-upstream", help: "do not verify upstream certificates (recorded, and warned about)"),
            .value("upstream-client-cert", valueName: "FILE.p12", help: "client certificate for upstreams that ask for one"),
            .value("upstream-client-cert-password", valueName: "PASSWORD", help: "password of the PKCS#12 file",
                   defaultValue: CACommand.defaultPassword),
            .value("keylog", valueName: "FILE", help: "write both legs' TLS secrets for Wireshark (default: $SSLKEYLOGFILE)"),
            .value("record", valueName: "FILE.jsonl", help: "write every exchange to this recording (never overwritten)"),
            .value("tap", valueName: "NAME", help: "the tap name in the recording", defaultValue: "proxy"),
            .optionalValue("record-bodies", valueName: "LIMIT",
                           help: "store bodies in the recording, up to LIMIT bytes each (K/M/G suffixes; default 1M)"),
            .flag("record-secrets", help: "record cookies, Authorization, tokens and passwords in clear (default: keyed digests)"),
            .value("context-path", valueName: "PATH", help: "the sign-in flow's context path, for step labels",
                   defaultValue: "suite"),
            .flag("quiet", short: "q", help: "no log line per exchange"),
            .value("log-format", valueName: "FORMAT", help: "text or json", defaultValue: "text"),
            .value("drain-timeout", valueName: "SECONDS", help: "how long to let in-flight exchanges finish on stop",
                   defaultValue: "5"),
        ] + RecordingOptions.options + FaultOptions.options,
        run: run)

    private static func run(_ arguments: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        let configuration = try makeConfiguration(arguments, context)
        guard let drainSeconds = try arguments.integer("drain-timeout", in: 0...3600) else {
            preconditionFailure("--drain-timeout has a default")
        }
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
        guard let listen = arguments.value("listen"), let directory = arguments.value("ca-dir"),
              let modeText = arguments.value("mode"), let tap = arguments.value("tap"),
              let contextPath = arguments.value("context-path"), let formatText = arguments.value("log-format") else {
            preconditionFailure("these options have defaults")
        }
        let faults = try FaultOptions.parse(arguments)
        let (host, port) = try listenAddress(listen, path: arguments.path)
        let mode: ProxyMode
        do {
            mode = try ProxyMode(parsing: modeText)
        } catch {
            throw UsageError("option --mode: \(error)", path: arguments.path)
        }
        guard let format = ExchangeLogFormat(rawValue: formatText) else {
            throw UsageError("option --log-format expects text or json, got '\(formatText)'", path: arguments.path)
        }
        let (authority, created) = try CertificateAuthority.loadOrCreate(in: directory)
        if created {
            context.standardError.line("intact proxy: created a development CA in \(directory); "
                                       + "clients must trust \(authority.certificatePath)")
        }
        var configuration = ProxyConfiguration(authority: authority)
        configuration.listenHost = host
        configuration.listenPort = port
        configuration.mode = mode
        configuration.passthroughHosts = arguments.values("passthrough")
        configuration.tap = tap
        configuration.toolVersion = IntactVersion.string
        configuration.contextPath = contextPath

        let insecure = arguments.flag("insecure-upstream")
        if let caFile = arguments.value("upstream-ca") {
            guard !insecure else {
                throw UsageError("--upstream-ca and --insecure-upstream contradict each other", path: arguments.path)
            }
            configuration.upstreamVerification = .caFile(caFile)
        } else if insecure {
            configuration.upstreamVerification = .insecure
            context.standardError.line("intact proxy: WARNING: upstream certificates are NOT verified (--insecure-upstream); "
                                       + "any server can impersonate any upstream")
        }
        if let file = arguments.value("upstream-client-cert") {
            configuration.upstreamClientIdentity = try PKCS12.importIdentity(
                file: file, password: arguments.value("upstream-client-cert-password") ?? CACommand.defaultPassword)
        }
        if let keyLog = arguments.value("keylog") { configuration.keyLog = .file(keyLog) }
        if let path = arguments.value("record") {
            let redaction = try RecordingOptions.redaction(arguments, keyDirectory: directory) { note in
                context.standardError.line("intact proxy: " + note)
            }
            configuration.recording = ProxyConfiguration.Recording(
                path: path, bodyStoreLimit: try bodyLimit(arguments), redaction: redaction)
        } else if let option = ["record-bodies", "record-secrets", "digest-key", "secret-name"].first(where: arguments.isGiven) {
            throw UsageError("--\(option) needs --record FILE.jsonl", path: arguments.path)
        }
        if let faults {
            configuration.addons.append(try faults.addon(contextPath: contextPath))
            context.standardError.line("intact proxy: injecting faults: \(faults.summary)")
        }
        if !arguments.flag("quiet") {
            let log = context.standardError
            configuration.exchangeLog = { record in log.line(ExchangeLogLine(record).rendered(format)) }
        }
        if !LoopGuard.isLoopbackLiteral(host) {
            context.standardError.line("intact proxy: WARNING: listening on \(host), not loopback: anyone who can reach "
                                       + "this address can use the proxy")
        }
        return configuration
    }

    /// `IP:PORT` or `[IPv6]:PORT`, the IP a literal.
    static func listenAddress(_ text: String, path: CommandPath) throws -> (host: String, port: Int) {
        let usage = UsageError("option --listen expects IP:PORT (for example 127.0.0.1:8080 or [::1]:0), got '\(text)'",
                               path: path)
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
              (0...65535).contains(port) else { throw usage }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard IPLiteral.isValid(host) else { throw usage }
        return (host, port)
    }

    /// `--record-bodies` alone (1 MiB), or `--record-bodies=N[K|M|G]`; absent: 0.
    static func bodyLimit(_ arguments: ParsedArguments) throws -> Int {
        guard arguments.isGiven("record-bodies") else { return 0 }
        guard let text = arguments.value("record-bodies"), !text.isEmpty else { return defaultBodyLimit }
        let multipliers: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        var digits = text.uppercased()
        var multiplier = 1
        if let last = digits.last, let factor = multipliers[last] {
            multiplier = factor
            digits.removeLast()
        }
        guard let number = Int(digits), number > 0, number <= Int.max / multiplier else {
            throw UsageError("option --record-bodies expects a size such as 65536, 64K or 1M, got '\(text)'",
                             path: arguments.path)
        }
        return number * multiplier
    }
}

/// Whether text is an IPv4 or IPv6 address literal (`inet_pton` decides).
enum IPLiteral {
    static func isValid(_ text: String) -> Bool {
        var storage = in6_addr()
        return inet_pton(AF_INET, text, &storage) == 1 || inet_pton(AF_INET6, text, &storage) == 1
    }
}
