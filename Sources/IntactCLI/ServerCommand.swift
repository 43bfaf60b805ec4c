import AuthFlow
import Foundation
import SignIn
import TLS
import Wire

/// `intact server`: the mock Appian server of the sign-in flow over TLS,
/// HTTP/1.1 and HTTP/2, recording every exchange from the server's side.
enum ServerCommand {
    /// The options of `intact server`, in `--help` order.
    struct Options: OptionGroup {
        let listen = Option.value("listen", .socketAddress("ADDR"), help: "address and port to listen on (IP literal)",
                                  default: .loopbackIPv4(port: 8443))
        let listenFD = InheritedListener.option()
        let externalURL = Option.optional("external-url", .externalURL,
                                          help: "the URL the server believes it is reached at (default: https://<listen address>)")
        let context = Option.value("context", .string("PATH"), help: "context path of the endpoints", default: "suite")
        let users = Option.optional(
            "users", .string("FILE"),
            help: "users JSON file {\"users\": [{\"username\", \"password\", ...}]} (default: demo / intact-demo)")
        let tokenLifetime = Option.value("token-ttl", .duration(), help: "lifetime of a sign-in token", default: 120,
                                         shownDefault: "120s")
        let sessionIdle = Option.value("session-idle", .duration(), help: "idle timeout of a session", default: 65 * 60,
                                       shownDefault: "65m")
        let schemes = Option.value(
            "schemes", .list("LIST", expected: "URL schemes separated by commas", isValid: { AbsoluteURL("\($0)://host") != nil }),
            help: "callback schemes the login URL may ask for, comma-separated",
            default: MockServerConfiguration.defaultCallbackSchemes,
            shownDefault: MockServerConfiguration.defaultCallbackSchemes.joined(separator: ","))
        let requireClientCertificate = Option.optional("require-client-cert", .string("CA"),
                                                       help: "require a TLS client certificate issued by the CA in this PEM file")
        let caDirectory = CADirectoryOptions()
        let certificate = Option.optional("cert", .string("FILE"),
                                          help: "server certificate (PEM, with its chain) instead of minting one")
        let key = Option.optional("key", .string("FILE"), help: "private key (PEM) of --cert")
        let maxBody = Option.value("max-body", .integer(in: 0...(1 << 30), "BYTES"), help: "request bodies above this get 413",
                                   default: 65536)
        let noTraceEcho = Option.flag("no-trace-echo",
                                      help: "do not repeat the request's Intact-Trace field in responses (synthetic)")
        let gzip = Option.flag("gzip", help: "gzip-encode responses for requests that accept gzip, and say so in "
                               + "Intact-Content-Encoding (synthetic)")
        let tokenPost = SignInOptions.TokenPostGroup()
        let recording = SignInOptions.RecordingGroup(defaultTap: "server")
    }

    static let options = Options()

    static let command = Command(
        name: "server",
        summary: "Run the mock Appian server of the mobile sign-in flow (TLS, HTTP/1.1 and HTTP/2).",
        discussion: """
            Endpoints under the context path (default /suite): {ctx}/rest/... (protected: 401 with
            {"contextUrl", "tokenUrl"} without a session), {ctx}?codeChallenge=C&scheme=S (login
            form), POST {ctx}/auth (credentials), POST {ctx}/mobileAuthTokenConsumer (token
            exchange, bootstrap and session cookies), {ctx}/cors/ping. contextUrl and tokenUrl come
            from --external-url, never from the request's Host. Bad input gets the status and reason
            the flow defines, with the reason in the Intact-Reason field (synthetic).

            Its certificate is minted by the development CA in --ca-dir (created on first use),
            unless --cert and --key are given: for the name a client asks for (SNI), else one
            naming both the --external-url host and the listen address, so a tap or load
            balancer that reaches the server by its address verifies it too. With --require-client-cert the TLS handshake fails
            without a client certificate issued by that CA (see 'intact ca issue-client').

            \(SignInOptions.syntheticNote) The bootstrap response (synthetic) is JSON with
            username, displayName, email, locale, timeZone and serverVersion.

            Runs until interrupted (Ctrl-C or SIGTERM).
            """,
        options: options,
        run: { arguments, context in
            try serve(arguments, context) { _ in StopSignal.wait() }
        })

    /// Starts the server, tells the user where it is, calls `waitForStop`
    /// with what started (it returns when it is time to stop), then stops and
    /// closes the recording. Blocks: runs on the main thread of `intact`, or a test's.
    static func serve(_ arguments: ParsedArguments, _ context: CommandContext,
                      waitForStop: (MockServerHost.Started) -> Void) throws -> Int32 {
        let configuration = try hostConfiguration(arguments, context)
        let recorder = try SignInOptions.recorder(arguments, options.recording, role: .server, mode: "server",
                                                  options: recordedOptions(arguments),
                                                  keyDirectory: options.caDirectory.directory(arguments, context),
                                                  origin: recordedOrigin(configuration)) { note in
            context.standardError.line("intact server: " + note)
        }
        let host = MockServerHost(configuration: configuration, recorder: recorder)
        let started: MockServerHost.Started
        do {
            started = try host.start()
        } catch {
            _ = recorder?.close()
            throw CommandFailure("cannot start the mock server: \(error)")
        }
        describe(started, configuration: configuration, recorder: recorder, to: context.standardOutput)
        if !started.listenAddress.isLoopback {
            context.standardError.line("intact: warning: listening on \(started.listenAddress), reachable beyond this machine")
        }
        waitForStop(started)
        host.stop()
        let served = host.exchangeCount
        context.standardOutput.line("Stopped after \(served) exchange\(served == 1 ? "" : "s").")
        if let problem = recorder?.close() {
            throw CommandFailure("recording: \(problem)")
        }
        return ExitStatus.success
    }

    /// The host configuration the options describe. Reads the users file.
    static func hostConfiguration(_ arguments: ParsedArguments,
                                  _ context: CommandContext = .standard) throws -> MockServerHost.Configuration {
        let path = arguments.path
        let inherited = try InheritedListener.socket(arguments, descriptor: options.listenFD, address: options.listen)
        let listen = inherited?.localAddress ?? arguments[options.listen]
        var contextPath = arguments[options.context]
        var externalOrigin: Origin?
        if let url = arguments[options.externalURL] {
            if url.path != "/" {
                guard !arguments.isGiven(options.context) else {
                    throw UsageError("give the context path either in --external-url or with --context, not both", path: path)
                }
                contextPath = url.path
            }
            externalOrigin = url.origin
        }
        let users: [MockUser]
        if let file = arguments[options.users] {
            do {
                users = try MockUser.loadUsersFile(atPath: file)
            } catch {
                throw CommandFailure("\(error)")
            }
        } else {
            users = [.demo]
        }
        let certificate: ServerCertificateSource
        switch (arguments[options.certificate], arguments[options.key]) {
        case let (certificateFile?, keyFile?):
            guard arguments[options.caDirectory.caDirectory] == nil else {
                throw UsageError("give either --cert and --key or --ca-dir, not both", path: path)
            }
            certificate = .files(certificate: certificateFile, key: keyFile)
        case (nil, nil):
            certificate = .developmentCA(directory: options.caDirectory.directory(arguments, context))
        default:
            throw UsageError("--cert and --key go together", path: path)
        }
        let clientCA = arguments[options.requireClientCertificate]
        let server = MockServerConfiguration(
            externalOrigin: externalOrigin ?? Origin(scheme: "https", host: listen.ip, port: Int(listen.port)),
            contextPath: contextPath, allowedCallbackSchemes: arguments[options.schemes], users: users,
            tokenLifetime: arguments[options.tokenLifetime], sessionIdleTimeout: arguments[options.sessionIdle],
            tokenPost: try SignInOptions.tokenPostFormat(arguments, options.tokenPost),
            requiresClientCertificate: clientCA != nil, maxRequestBodyBytes: arguments[options.maxBody],
            echoesTraceField: !arguments[options.noTraceEcho], gzipsResponses: arguments[options.gzip])
        var configuration = MockServerHost.Configuration(server: server, listenAddress: listen,
                                                         externalOriginFollowsListener: externalOrigin == nil,
                                                         certificate: certificate,
                                                         clientCertificateRoots: clientCA.map { .caFile($0) })
        configuration.listeningSocket = inherited
        return configuration
    }

    /// The options worth writing into the recording's header.
    /// The origin the server's recording stands for: its external URL's, or
    /// `https://` and the listen address when it follows the listener (nil
    /// for port 0, known only once bound).
    static func recordedOrigin(_ configuration: MockServerHost.Configuration) -> String? {
        guard configuration.externalOriginFollowsListener else { return configuration.server.externalOrigin.description }
        let address = configuration.listeningSocket?.localAddress ?? configuration.listenAddress
        return address.port == 0 ? nil : "https://\(address)"
    }

    private static func recordedOptions(_ arguments: ParsedArguments) -> [String: String] {
        let recorded: [any OptionDeclaring] = [
            options.listen, options.listenFD, options.externalURL, options.context, options.users,
            options.tokenLifetime, options.sessionIdle, options.schemes, options.requireClientCertificate, options.maxBody,
            options.tokenPost.tokenField, options.tokenPost.verifierField, options.tokenPost.encoding,
        ]
        var given: [String: String] = [:]
        for option in recorded {
            if let text = arguments.givenText(option) { given[option.declaration.long] = text }
        }
        return given
    }

    private static func describe(_ started: MockServerHost.Started, configuration: MockServerHost.Configuration,
                                 recorder: TapRecorder?, to output: OutputWriter) {
        let server = started.server
        output.line("intact server: listening on \(started.listenAddress) (TLS; HTTP/2 and HTTP/1.1 by ALPN)")
        output.line("  external URL:     \(server.externalOrigin)")
        output.line("  contextUrl:       \(server.contextURL)")
        output.line("  tokenUrl:         \(server.tokenURL)")
        if let ca = started.caCertificatePath {
            output.line("  certificate:      minted by the development CA\(started.createdCA ? " (created now)" : ""); trust \(ca)")
        } else {
            output.line("  certificate:      from --cert")
        }
        if case .caFile(let file)? = configuration.clientCertificateRoots {
            output.line("  client cert:      required, issued by the CA in \(file)")
        }
        let users = server.users.map { $0 == .demo ? "\($0.username) (password \($0.password))" : $0.username }
        output.line("  users:            \(users.joined(separator: ", "))")
        output.line("  callback schemes: \(server.allowedCallbackSchemes.joined(separator: ", "))")
        let format = server.tokenPost
        output.line("  token POST:       \(format.mediaType) with \(format.tokenField), \(format.verifierField) (synthetic)")
        output.line("  token lifetime:   \(Int(server.tokenLifetime)) s; session idle timeout \(Int(server.sessionIdleTimeout)) s")
        if let recorder {
            output.line("  recording:        \(recorder.path) (tap \(recorder.settings.tap))")
        }
        var example = "intact client \(server.externalOrigin)\(server.contextRoot)/rest/whatever --expect-echo"
        if let ca = started.caCertificatePath { example += " --ca \(ca)" }
        output.line("Try: \(example)")
        output.line("Stop with Ctrl-C.")
    }
}

extension ValueParser where T == AbsoluteURL {
    /// An http(s) URL without a query: the origin, and maybe the context path.
    static var externalURL: ValueParser<AbsoluteURL> {
        ValueParser(valueName: "URL", expected: "an https URL such as https://mysite.test:8443") { text in
            guard let url = AbsoluteURL(text), ["https", "http"].contains(url.origin.scheme), url.query == nil else {
                return nil
            }
            return url
        }
    }
}
