import AuthFlow
import Foundation
import SignIn
import TLS
import Wire

/// `intact server`: the mock Appian server of the sign-in flow over TLS,
/// HTTP/1.1 and HTTP/2, recording every exchange from the server's side.
enum ServerCommand {
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
            unless --cert and --key are given. With --require-client-cert the TLS handshake fails
            without a client certificate issued by that CA (see 'intact ca issue-client').

            \(SignInOptions.syntheticNote) The bootstrap response (synthetic) is JSON with
            username, displayName, email, locale, timeZone and serverVersion.

            Runs until interrupted (Ctrl-C or SIGTERM).
            """,
        options: [
            .value("listen", valueName: "ADDR", help: "address and port to listen on (IP literal)",
                   defaultValue: "127.0.0.1:8443"),
            .value("external-url", valueName: "URL",
                   help: "the URL the server believes it is reached at (default: https://<listen address>)"),
            .value("context", valueName: "PATH", help: "context path of the endpoints", defaultValue: "suite"),
            .value("users", valueName: "FILE",
                   help: "users JSON file {\"users\": [{\"username\", \"password\", ...}]} (default: demo / intact-demo)"),
            .value("token-ttl", valueName: "DURATION", help: "lifetime of a sign-in token", defaultValue: "120s"),
            .value("session-idle", valueName: "DURATION", help: "idle timeout of a session", defaultValue: "65m"),
            .value("schemes", valueName: "LIST", help: "callback schemes the login URL may ask for, comma-separated",
                   defaultValue: MockServerConfiguration.defaultCallbackSchemes.joined(separator: ",")),
            .value("require-client-cert", valueName: "CA",
                   help: "require a TLS client certificate issued by the CA in this PEM file"),
            .value("ca-dir", valueName: "DIR", help: "development CA that mints the server certificate",
                   defaultValue: CertificateAuthority.defaultDirectory),
            .value("cert", valueName: "FILE", help: "server certificate (PEM, with its chain) instead of minting one"),
            .value("key", valueName: "FILE", help: "private key (PEM) of --cert"),
            .value("max-body", valueName: "BYTES", help: "request bodies above this get 413",
                   defaultValue: "65536"),
            .flag("no-trace-echo", help: "do not repeat the request's Intact-Trace field in responses (synthetic)"),
        ] + SignInOptions.tokenPostOptions + SignInOptions.recordingOptions(defaultTap: "server"),
        run: { arguments, context in
            try serve(arguments, context) { _ in StopSignal.wait() }
        })

    /// Starts the server, tells the user where it is, calls `waitForStop`
    /// with what started (it returns when it is time to stop), then stops and
    /// closes the recording. Blocks: runs on the main thread of `intact`, or a test's.
    static func serve(_ arguments: ParsedArguments, _ context: CommandContext,
                      waitForStop: (MockServerHost.Started) -> Void) throws -> Int32 {
        let configuration = try hostConfiguration(arguments)
        let recorder = try SignInOptions.recorder(arguments, role: .server, mode: "server",
                                                  options: recordedOptions(arguments),
                                                  keyDirectory: arguments.value("ca-dir") ?? CertificateAuthority.defaultDirectory) { note in
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
    static func hostConfiguration(_ arguments: ParsedArguments) throws -> MockServerHost.Configuration {
        let path = arguments.path
        guard let listenText = arguments.value("listen"), let listen = SocketAddress(listenText) else {
            throw UsageError("option --listen expects an IP address and port such as 127.0.0.1:8443 or [::1]:8443, "
                             + "got '\(arguments.value("listen") ?? "")'", path: path)
        }
        var contextPath = arguments.value("context") ?? "suite"
        var externalOrigin: Origin?
        if let text = arguments.value("external-url") {
            guard let url = AbsoluteURL(text), ["https", "http"].contains(url.origin.scheme), url.query == nil else {
                throw UsageError("option --external-url expects an https URL such as https://mysite.test:8443, got '\(text)'",
                                 path: path)
            }
            if url.path != "/" {
                guard !arguments.isGiven("context") else {
                    throw UsageError("give the context path either in --external-url or with --context, not both", path: path)
                }
                contextPath = url.path
            }
            externalOrigin = url.origin
        }
        let users: [MockUser]
        if let file = arguments.value("users") {
            do {
                users = try MockUser.loadUsersFile(atPath: file)
            } catch {
                throw CommandFailure("\(error)")
            }
        } else {
            users = [.demo]
        }
        let schemes = (arguments.value("schemes") ?? "").split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
        guard !schemes.isEmpty, schemes.allSatisfy({ AbsoluteURL("\($0)://host") != nil }) else {
            throw UsageError("option --schemes expects URL schemes separated by commas, got '\(arguments.value("schemes") ?? "")'",
                             path: path)
        }
        guard let tokenLifetime = try SignInOptions.seconds(arguments, "token-ttl"),
              let idle = try SignInOptions.seconds(arguments, "session-idle"),
              let maxBody = try arguments.integer("max-body", in: 0...(1 << 30)) else {
            preconditionFailure("--token-ttl, --session-idle and --max-body have defaults")
        }
        let certificate: ServerCertificateSource
        switch (arguments.value("cert"), arguments.value("key")) {
        case let (certificateFile?, keyFile?):
            guard !arguments.isGiven("ca-dir") else {
                throw UsageError("give either --cert and --key or --ca-dir, not both", path: path)
            }
            certificate = .files(certificate: certificateFile, key: keyFile)
        case (nil, nil):
            certificate = .developmentCA(directory: arguments.value("ca-dir") ?? CertificateAuthority.defaultDirectory)
        default:
            throw UsageError("--cert and --key go together", path: path)
        }
        let clientCA = arguments.value("require-client-cert")
        let server = MockServerConfiguration(
            externalOrigin: externalOrigin ?? Origin(scheme: "https", host: listen.ip, port: Int(listen.port)),
            contextPath: contextPath, allowedCallbackSchemes: schemes, users: users, tokenLifetime: tokenLifetime,
            sessionIdleTimeout: idle, tokenPost: try SignInOptions.tokenPostFormat(arguments),
            requiresClientCertificate: clientCA != nil, maxRequestBodyBytes: maxBody,
            echoesTraceField: !arguments.flag("no-trace-echo"))
        return MockServerHost.Configuration(server: server, listenAddress: listen,
                                            externalOriginFollowsListener: externalOrigin == nil,
                                            certificate: certificate,
                                            clientCertificateRoots: clientCA.map { .caFile($0) })
    }

    /// The options worth writing into the recording's header.
    private static func recordedOptions(_ arguments: ParsedArguments) -> [String: String] {
        var options: [String: String] = [:]
        for name in ["listen", "external-url", "context", "users", "token-ttl", "session-idle", "schemes",
                     "require-client-cert", "max-body", "token-field", "verifier-field", "token-encoding"]
        where arguments.isGiven(name) {
            options[name] = arguments.value(name)
        }
        return options
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
