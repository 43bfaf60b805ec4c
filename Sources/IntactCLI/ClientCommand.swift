import AuthFlow
import Browser
import Foundation
import SignIn
import Synchronization
import TLS

/// `intact client URL`: the mobile app and its browser running the sign-in
/// flow against a server, directly or through a forward proxy, printing
/// each step and, on failure, the diagnosis.
enum ClientCommand {
    /// The PKCS#12 password when `--client-cert-password` is not given (the one `intact ca issue-client` uses).
    static let defaultClientCertificatePassword = "intact"

    /// The options of `intact client`, in `--help` order.
    struct Options: OptionGroup {
        let proxy = Option.optional("proxy", .forwardProxy, help: "forward proxy, http://HOST:PORT (default: $HTTPS_PROXY)")
        let resolve = Option.repeatable(
            "resolve", .string("HOST:PORT:ADDRESS"),
            help: "connect to ADDRESS for HOST:PORT, as curl --resolve does ([+]HOST:PORT:ADDRESS[,ADDRESS]..., HOST * for any "
                + "name, -HOST:PORT to take one back): TLS and Host keep the name; Chromium gets it as a host-resolver rule. "
                + "Of several addresses the first is used")
        let ca = Option.optional("ca", .string("FILE"),
                                 help: "trust the CA certificates in this PEM file (default: the system store)")
        let clientCertificate = Option.optional("client-cert", .string("FILE"),
                                                help: "client certificate and key, PKCS#12 (.p12)")
        let clientCertificatePassword = Option.value("client-cert-password", .string("PASSWORD"),
                                                     help: "password of --client-cert",
                                                     default: defaultClientCertificatePassword)
        let user = Option.value("user", .string("NAME"), help: "user name to sign in with",
                                default: MockUser.demo.username)
        let password = Option.value("password", .string("PASSWORD"), help: "password to sign in with",
                                    default: MockUser.demo.password)
        let http1 = Option.flag("http1", help: "offer only HTTP/1.1")
        let http2 = Option.flag("http2", help: "offer only HTTP/2")
        let scheme = Option.value("scheme", .string("SCHEME"), help: "callback scheme in the login URL",
                                  default: "com.appian.tempo")
        let followUpMethod = Option.value(
            "follow-up-method", .string("METHOD"),
            help: "method of the request after sign-in (unsafe methods send X-APPIAN-CSRF-TOKEN)", default: "GET")
        let timeout = Option.value("timeout", .duration(), help: "most time one exchange may take", default: 10,
                                   shownDefault: "10s")
        let expectEcho = Option.flag("expect-echo", help: "the server is 'intact server', which echoes Intact-Trace: a "
                                     + "response without the echo came from an intermediary")
        let noTrace = Option.flag("no-trace", help: "do not send the Intact-Trace field")
        let requestField = Option.repeatable(
            "request-field", .requestField,
            help: "'NAME: VALUE' sends this field on every request, replacing a default; 'NAME:' sends none "
                + "(defaults: Accept-Encoding: gzip, a User-Agent)")
        let json = Option.flag("json", help: "print the steps and the diagnosis as JSON")
        let tokenPost = SignInOptions.TokenPostGroup()
        let browser = BrowserOptions.Group()
        let split = BrowserOptions.SplitGroup()
        let recording = SignInOptions.RecordingGroup(defaultTap: "client")
    }

    static let options = Options()

    static let command = Command(
        name: "client",
        summary: "Run the mobile sign-in flow against a server, as the app and its browser, and diagnose it.",
        discussion: """
            URL is a protected resource under the server's context path, e.g.
            https://127.0.0.1:8443/suite/rest/whatever. The app requests it (expecting 401 with
            contextUrl and tokenUrl), opens the login URL in its browser (a separate cookie jar),
            signs in, takes the callback, posts the token to tokenUrl, checks the bootstrap's
            session cookies and repeats the request with them. Each step shows what was sent,
            what came back, the time and the verdict; a failure names the failure mode and
            quotes the sentence of the document it breaks.

            Exit status 0 only when the sign-in completed and the follow-up request succeeded.

            Requests carry Intact-Trace (unless --no-trace) so recordings of the client, the
            proxies and the server pair up in 'intact verify'. With --proxy, or the HTTPS_PROXY
            variable (NO_PROXY honoured), connections go through a forward proxy with CONNECT.
            A client certificate from --client-cert is presented whenever a server or gateway
            asks for one.

            With --browser chromium, steps 6-8 run in headless Chromium (Debian package
            chromium; certutil from libnss3-tools for the CA trust): Intact starts it with a fresh
            profile in a temporary directory (removed afterwards), trusting --ca, on the
            browser's path, opens the login URL, fills the form the page shows, submits it and
            catches the redirect to the callback scheme; the app steps stay in Intact. The
            browser's view goes to NAME.browser.json beside --record. What only a browser shows
            is diagnosed: a cookie it refused, a Content-Security-Policy that blocked the
            callback, HSTS turning an intermediary's http URL into https, a net error, a crash or
            a hang (--browser-timeout). A stop signal (Ctrl-C, kill) ends the browser and removes
            its profile before Intact ends.

            --resolve HOST:PORT:ADDRESS dials ADDRESS for that name, as curl does, and gives
            Chromium the same mapping (Chromium keeps HSTS only for names, never for IP addresses).

            --app-proxy and --browser-proxy put the app and the browser on different paths
            (a per-app VPN: the app on it, the browser not); --browser-client-cert gives the
            browser its own client certificate (or none). For Chromium the certificate and its
            key go into the run's temporary profile only (its NSS database, and a preference that
            presents it unasked to the login URL's origin); nothing machine-wide changes. A failure
            on the browser's path names the split and the document's sentence (VPN; client
            certificates).

            \(SignInOptions.syntheticNote)
            """,
        arguments: [CommandArgument("URL", help: "protected resource to request (https)")],
        options: options,
        run: { arguments, context in
            try signIn(arguments, context, environment: ProcessInfo.processInfo.environment)
        })

    /// Runs the flow and prints it; returns 0 only when it succeeded.
    /// Blocks the calling thread until the run ends: never call on a loop queue.
    static func signIn(_ arguments: ParsedArguments, _ context: CommandContext,
                       environment: [String: String]) throws -> Int32 {
        let configuration = try runnerConfiguration(arguments, environment: environment)
        var options = ["url": configuration.flow.resourceURL.serialized]
        if let proxy = configuration.proxy { options["proxy"] = proxy.description }
        if let trace = configuration.flow.traceRunID { options["trace-run"] = trace }
        // The digest key lives beside the CA: the directory of --ca when given.
        let keyDirectory = arguments[self.options.ca].map { ($0 as NSString).deletingLastPathComponent }
            .map { $0.isEmpty ? "." : $0 } ?? CertificateAuthority.defaultDirectory(environment: environment)
        let recorder = try SignInOptions.recorder(arguments, self.options.recording, role: .client, mode: "client",
                                                  options: options, keyDirectory: keyDirectory) { note in
            context.standardError.line("intact client: " + note)
        }
        let runner: ClientRunner
        do {
            runner = try ClientRunner(configuration: configuration, recorder: recorder)
        } catch {
            _ = recorder?.close()
            throw CommandFailure("cannot set up TLS: \(error)")
        }
        let json = arguments[self.options.json]
        let output = context.standardOutput
        if !json {
            var line = "intact client: \(configuration.flow.resourceURL)"
            if let proxy = configuration.proxy { line += " through proxy \(proxy)" }
            if case .chromium(let settings) = configuration.browser { line += ", the browser in Chromium (\(settings.executable))" }
            if configuration.browserPath != .sameAsApp { line += ", the browser \(configuration.browserPath)" }
            if let trace = configuration.flow.traceRunID { line += " (trace run \(trace))" }
            output.line(line)
            output.line()
        }
        let printed = StepCounter()
        let outcome = runner.runAndWait { step in
            guard !json else { return }
            output.write(FlowReport.step(step, number: printed.next()) + "\n")
        }
        if json {
            output.write(FlowReport.json(outcome))
        } else {
            output.write(FlowReport.conclusion(outcome))
        }
        if let recorder {
            if let problem = recorder.close() {
                context.standardError.line("intact: recording: \(problem)")
                return ExitStatus.failure
            }
            if !json {
                output.line("Recorded \(outcome.steps.count) exchanges to \(recorder.path).")
                let view = ClientRunner.browserViewPath(forRecording: recorder.path)
                if case .chromium = configuration.browser, FileManager.default.fileExists(atPath: view) {
                    output.line("The browser's own view (every request, as DevTools reported it): \(view).")
                }
            }
        }
        return outcome.succeeded ? ExitStatus.success : ExitStatus.failure
    }

    /// The runner configuration the options and the environment describe.
    /// Reads the CA and PKCS#12 files.
    static func runnerConfiguration(_ arguments: ParsedArguments,
                                    environment: [String: String]) throws -> ClientRunner.Configuration {
        let path = arguments.path
        guard let text = arguments.argument("URL"), let url = AbsoluteURL(text), url.origin.scheme == "https" else {
            throw UsageError("URL must be an https URL such as https://127.0.0.1:8443/suite/rest/whatever, "
                             + "got '\(arguments.argument("URL") ?? "")'", path: path)
        }
        guard !(arguments[options.http1] && arguments[options.http2]) else {
            throw UsageError("give --http1 or --http2, not both (neither offers both)", path: path)
        }
        let timeout = arguments[options.timeout]
        let proxy = try arguments[options.split.appProxy].map { $0.forwardProxy }
            ?? self.proxy(arguments, environment: environment, target: url)
        var identity: TLSIdentity?
        if let file = arguments[options.clientCertificate] {
            do {
                identity = try PKCS12.importIdentity(file: file, password: arguments[options.clientCertificatePassword])
            } catch {
                throw CommandFailure("cannot use client certificate \(file): \(error)")
            }
        }
        var flow = SignInFlow.Configuration(
            resourceURL: url, callbackScheme: arguments[options.scheme],
            username: arguments[options.user], password: arguments[options.password],
            tokenPost: try SignInOptions.tokenPostFormat(arguments, options.tokenPost),
            followUpMethod: arguments[options.followUpMethod].uppercased(),
            expectsTraceEcho: arguments[options.expectEcho] && !arguments[options.noTrace])
        if arguments[options.noTrace] { flow.traceRunID = nil }
        flow.requestFields = RequestFieldSetting.apply(arguments[options.requestField], to: flow.requestFields)
        let protocols: ClientRunner.Protocols = arguments[options.http1] ? .http1Only
            : arguments[options.http2] ? .http2Only : .http2OrHTTP1
        var configuration = ClientRunner.Configuration(flow: flow, proxy: proxy,
                                                       trust: arguments[options.ca].map { .caFile($0) } ?? .systemStore,
                                                       clientIdentity: identity, protocols: protocols,
                                                       exchangeTimeout: .milliseconds(Int64(timeout * 1000)))
        do {
            configuration.resolve = try ResolveTable(parsing: arguments[options.resolve])
        } catch {
            throw UsageError("\(error)", path: path)
        }
        configuration.browser = try BrowserOptions.choice(arguments, options.browser, environment: environment)
        if let path = arguments[options.split.browserProxy] {
            configuration.browserPath = path.forwardProxy.map { .proxy($0) } ?? .direct
        }
        if let file = arguments[options.split.browserClientCertificate] {
            let password = arguments[options.clientCertificatePassword]
            if file == "none" {
                configuration.browserIdentity = .none
            } else {
                configuration.browserIdentity = .identity(try BrowserOptions.browserIdentity(file: file, password: password))
            }
        } else if case .simulated = configuration.browser {
            configuration.browserIdentity = .sameAsApp
        }
        return configuration
    }

    /// `--proxy`, else `HTTPS_PROXY`/`https_proxy` unless `NO_PROXY`/`no_proxy` exempts the target's host.
    static func proxy(_ arguments: ParsedArguments, environment: [String: String],
                      target: AbsoluteURL) throws -> ForwardProxy? {
        if let proxy = arguments[options.proxy] { return proxy }
        guard let text = environment["HTTPS_PROXY"] ?? environment["https_proxy"], !text.isEmpty else { return nil }
        let exemptions = environment["NO_PROXY"] ?? environment["no_proxy"] ?? ""
        if ForwardProxy.isExempt(host: target.origin.host, noProxy: exemptions) { return nil }
        guard let proxy = ForwardProxy(text) else {
            throw CommandFailure("HTTPS_PROXY is not http://HOST:PORT: '\(text)'")
        }
        return proxy
    }
}

extension ValueParser where T == RequestFieldSetting {
    /// `NAME: VALUE` or `NAME:` (`RequestFieldSetting`).
    static let requestField = ValueParser(valueName: "FIELD", expected: RequestFieldSetting.expected) {
        RequestFieldSetting(parsing: $0)
    }
}

extension ValueParser where T == ForwardProxy {
    /// `http://HOST:PORT`.
    static var forwardProxy: ValueParser<ForwardProxy> {
        ValueParser(valueName: "URL", expected: "http://HOST:PORT") { ForwardProxy($0) }
    }
}

/// Numbers the steps as they are printed, from whichever thread the runner reports on.
final class StepCounter: Sendable {
    private let count = Mutex(0)

    func next() -> Int {
        count.withLock { value in
            value += 1
            return value
        }
    }
}
