import Dispatch
import Evidence
import Glibc
import Proxy
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

    static let command = Command(
        name: "proxy",
        summary: "Run the intercepting proxy (forward or reverse) and record every exchange.",
        discussion: """
            Forward mode: point clients at it as an HTTP proxy and make them trust the CA
            (intact ca show says where it is; curl -x http://127.0.0.1:8080 --cacert CA.pem https://HOST/).
            A device set to use the proxy gets the CA and install steps at http://intact.proxy/.
            Reverse mode: clients connect to it as if it were the upstream.
            Each finished exchange is logged on standard error; with --record it is also
            written to a JSON Lines recording (see the README for the format).
            SIGINT/SIGTERM stop accepting, drain in-flight exchanges, flush and exit 0.
            """ + "\n\n" + FaultOptions.discussion,
        options: [
            .value("listen", valueName: "HOST:PORT",
                   help: "where to listen: an IP, [IPv6] or a host name (every address bound); port 0 picks one",
                   defaultValue: "127.0.0.1:8080"),
            .value("allow", valueName: "CIDR", help: "only clients in this range may connect (repeatable; e.g. 192.0.2.0/24)",
                   isRepeatable: true),
            CADirectoryOption.option,
            .value("mode", valueName: "MODE", help: "forward, or reverse:https://HOST:PORT", defaultValue: "forward"),
            .value("passthrough", valueName: "HOST", help: "tunnel this host without interception (repeatable; *.domain allowed)",
                   isRepeatable: true),
            .value("upstream-ca", valueName: "FILE", help: "PEM file of the CAs upstream certificates must lead to (default: system store)"),
            .flag("insecure-upstream", help: "do not verify upstream certificates (recorded, and warned about)"),
            .value("upstream-client-cert", valueName: "FILE.p12", help: "client certificate for upstreams that ask for one"),
            .value("upstream-client-cert-password", valueName: "PASSWORD", help: "password of the PKCS#12 file",
                   defaultValue: CACommand.defaultPassword),
            .value("upstream-proxy", valueName: "URL",
                   help: "tunnel every upstream connection through this proxy with CONNECT: http://[USER:PASSWORD@]HOST:PORT "
                       + "(default: $HTTPS_PROXY, minus $NO_PROXY)"),
            .value("no-upstream-proxy", valueName: "HOST",
                   help: "reach this host directly (repeatable; .domain suffixes, IP literals, * for all)", isRepeatable: true),
            .value("keylog", valueName: "FILE", help: "write both legs' TLS secrets for Wireshark (default: $SSLKEYLOGFILE)"),
            .value("record", valueName: "FILE.jsonl", help: "write every exchange to this recording (never overwritten)"),
            .value("tap", valueName: "NAME", help: "the tap name in the recording", defaultValue: "proxy"),
            .optionalValue("record-bodies", valueName: "LIMIT",
                           help: "store bodies in the recording, up to LIMIT bytes each (K/M/G suffixes; default 1M)"),
            .flag("record-secrets", help: "record cookies, Authorization and other secrets in clear"),
            .value("context-path", valueName: "PATH", help: "the sign-in flow's context path, for step labels",
                   defaultValue: "suite"),
            .flag("quiet", short: "q", help: "no log line per exchange"),
            .value("log-format", valueName: "FORMAT", help: "text or json", defaultValue: "text"),
            .value("drain-timeout", valueName: "SECONDS", help: "how long to let in-flight exchanges finish on stop",
                   defaultValue: "5"),
        ] + FaultOptions.options,
        run: run)

    private static func run(_ arguments: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        let configuration = try makeConfiguration(arguments, context)
        guard let drainSeconds = try arguments.integer("drain-timeout", in: 0...3600) else {
            preconditionFailure("--drain-timeout has a default")
        }
        let server = ProxyServer(configuration: configuration)
        let stopRequested = DispatchSemaphore(value: 0)
        let signals = SignalWatch(signals: [SIGINT, SIGTERM]) { stopRequested.signal() }
        _ = try server.start()
        let addresses = server.listeningAddresses
        var banner = "intact proxy: listening on \(addresses.map(\.description).joined(separator: " and ")) "
            + "(\(configuration.mode) mode), CA \(configuration.authority.certificatePath)"
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
        let directory = try CADirectoryOption.directory(arguments, context)
        guard let listen = arguments.value("listen"),
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
        if case .forward = mode { configuration.localSite = try CAPage(authority: authority) }
        configuration.listenHost = host
        configuration.listenPort = port
        configuration.allowedClients = try allowList(arguments)
        let log = context.standardError
        configuration.refusedClientLog = { address in
            log.line("intact proxy: refused a connection from \(address.ip): not in --allow")
        }
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
        if let (proxy, note) = try upstreamProxy(arguments, environment: context.environment) {
            configuration.upstreamProxy = proxy
            context.standardError.line(note)
        }
        if let keyLog = arguments.value("keylog") { configuration.keyLog = .file(keyLog) }
        if let path = arguments.value("record") {
            configuration.recording = ProxyConfiguration.Recording(
                path: path, bodyStoreLimit: try bodyLimit(arguments), recordSecrets: arguments.flag("record-secrets"))
        } else if arguments.isGiven("record-bodies") || arguments.flag("record-secrets") {
            throw UsageError("--record-bodies and --record-secrets need --record FILE.jsonl", path: arguments.path)
        }
        if let faults {
            configuration.addons.append(try faults.addon(contextPath: contextPath))
            context.standardError.line("intact proxy: injecting faults: \(faults.summary)")
        }
        if !arguments.flag("quiet") {
            let log = context.standardError
            configuration.exchangeLog = { record in log.line(ExchangeLogLine(record).rendered(format)) }
        }
        return configuration
    }

    /// `HOST:PORT` or `[IPv6]:PORT`; the host an IP literal or a name (resolved when the proxy starts).
    static func listenAddress(_ text: String, path: CommandPath) throws -> (host: String, port: Int) {
        guard let endpoint = HostPort(text) else {
            throw UsageError("option --listen expects HOST:PORT (for example 127.0.0.1:8080, localhost:8080 or [::1]:0), "
                             + "got '\(text)'", path: path)
        }
        return (endpoint.host, Int(endpoint.port))
    }

    /// Every `--allow CIDR`; a malformed one is a usage error.
    static func allowList(_ arguments: ParsedArguments) throws -> ClientAllowList {
        ClientAllowList(try arguments.values("allow").map { text in
            guard let range = AddressRange(text) else {
                throw UsageError("option --allow expects an address or CIDR block such as 192.0.2.0/24 or ::1/128 "
                                 + "(no host bits past the prefix), got '\(text)'", path: arguments.path)
            }
            return range
        })
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

    /// `--upstream-proxy` with `--no-upstream-proxy` exemptions, else
    /// `HTTPS_PROXY`/`https_proxy` with `NO_PROXY`/`no_proxy`; and the line that says so at start.
    static func upstreamProxy(_ arguments: ParsedArguments, environment: [String: String]) throws
        -> (UpstreamProxy, String)?
    {
        let exemptions = arguments.values("no-upstream-proxy")
        if let text = arguments.value("upstream-proxy") {
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
