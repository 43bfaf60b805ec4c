import AuthFlow
import Demo
import Evidence
import Foundation
import SignIn
import Wire

/// `intact demo`: the whole mobile sign-in flow on this machine in one
/// command — the mock server, the proxy in front of it as the stand-in for a
/// load balancer, and the client simulator through it — then the proof: the
/// three recordings verified against each other, step by step and hop by hop.
///
/// Exit status: 0 only when the sign-in completed, the follow-up request
/// succeeded and every exchange crossed the proxy identical or equivalent;
/// 1 otherwise; 2 for usage errors.
enum DemoCommand {
    /// The options of `intact demo`, in `--help` order.
    struct Options: OptionGroup {
        let http1 = Option.flag("http1", help: "the client offers HTTP/1.1 only")
        let http2 = Option.flag("http2", help: "the client offers HTTP/2 only")
        let out = Option.optional("out", .string("DIR"), help: "where the recordings and reports go (created; must be empty)")
        let keep = Option.flag("keep", help: "afterwards keep a mock server and proxy running for curl, until Ctrl-C")
        let clientCertificate = Option.flag("client-cert",
                                            help: "the client presents a client certificate from the demo CA when asked")
        let browser = BrowserOptions.Group()
        let split = Option.optional("split", .choice(DemoSplit.allCases, "NAME"),
                                    help: "put the app and the browser on different paths: per-app-vpn-browser-off or client-cert-app-only")
        let browserClientCertificate = Option.flag("browser-client-cert",
                                                   help: "with --split client-cert-app-only: the browser holds the certificate too "
                                                       + "(Chromium: in its temporary profile, presented unasked to the proxy's origin)")
        let publicHost = Option.optional("public-host", .string("NAME"),
                                         help: "serve under NAME instead of 127.0.0.1 (the proxy's certificate names it; the "
                                             + "client and Chromium map it to the proxy's loopback address, as --resolve does); "
                                             + "Chromium keeps HSTS only for a name, e.g. intact-hsts.test")
        let faults = FaultOptions.Group()
    }

    static let options = Options()

    static let command = Command(
        name: "demo",
        summary: "Run the whole sign-in flow through the proxy on this machine, then verify it.",
        discussion: """
            Starts, on loopback ports it picks, a development CA in a temporary directory,
            the mock server ('intact server'), the proxy in reverse mode in front of it (the
            stand-in for your load balancer) and the client simulator ('intact client')
            through the proxy. The client prints each step of the flow as the app and its
            browser see it; then the client's, the proxy's and the server's recordings are
            verified against each other ('intact verify'): every exchange must cross the
            proxy identical or equivalent.

            Files (in --out, default ./intact-demo-DATE-TIME, or -2, -3... when a run
            started in the same second took that name): client.jsonl, proxy.jsonl,
            server.jsonl (the recordings), proxy.har (HAR 1.2), report.html (the
            verification as a sequence diagram), report.json.

            With --browser chromium, steps 6-8 run in headless Chromium (Debian package
            chromium, and libnss3-tools for certutil): a fresh profile trusting the demo CA,
            straight to the proxy; it fills and submits the sign-in form and Intact catches the
            redirect to the callback. Its view is in client.browser.json.

            With --split, the app and the browser take different paths, the trap of each of the
            document's restrictions: per-app-vpn-browser-off (the app on the VPN, the browser
            not: its path reaches nothing; fixed by putting the browser on the VPN, i.e. no
            split) and client-cert-app-only (the proxy asks for a client certificate; the app
            holds one, the browser none; --browser-client-cert gives the browser one and the
            flow passes; Chromium gets it in its temporary profile only, presented unasked to the
            proxy's origin). The diagnosis names the split and the document's sentence.

            With --public-host NAME the demo is served under NAME instead of 127.0.0.1 (mapped to
            the proxy's loopback address for the client and Chromium): Chromium keeps HSTS only
            for names, so the HSTS rule of Examples/faults/browser.json shows browser-hsts with
            --browser chromium --public-host intact-hsts.test.

            With --keep, after the run a fresh mock server and proxy keep running (recording
            to OUT/keep/) and the command prints curl commands that walk through the flow by
            hand; Ctrl-C stops them.

            With --fault or --faults the proxy injects faults, as a misconfigured load balancer
            would: the run shows the failure as the client sees it (its diagnosis names the
            failure mode and quotes the document's sentence) and as the verifier reports it
            (the hop inside the proxy, with the injected fault), lists the faults applied from
            the proxy's recording, and says whether the outcome is what they cause. For
            client-cert-required, --client-cert makes the client present a certificate the
            demo CA issued (imported as PKCS#12): the flow then succeeds.

            Exit status: 0 when the sign-in succeeded and the policy holds, 1 otherwise
            (so 1 whenever a fault breaks the flow, as expected).
            """ + "\n\n" + FaultOptions.discussion,
        options: options,
        run: run)

    private static func run(_ arguments: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        guard !(arguments[options.http1] && arguments[options.http2]) else {
            throw UsageError("give --http1 or --http2, not both (neither offers both)", path: arguments.path)
        }
        let protocols: ClientRunner.Protocols = arguments[options.http1] ? .http1Only
            : arguments[options.http2] ? .http2Only : .http2OrHTTP1
        let faults = try FaultOptions.parse(arguments, options.faults)
        // The output directory is claimed below, once every option is known good.
        var configuration = DemoConfiguration(directory: "", protocols: protocols,
                                              presentsClientCertificate: arguments[options.clientCertificate],
                                              toolVersion: IntactVersion.string)
        configuration.browser = try BrowserOptions.choice(arguments, options.browser,
                                                          environment: context.environment)
        let split = arguments[options.split]
        try split?.apply(to: &configuration, browserHasCertificate: arguments[options.browserClientCertificate])
        if split == nil && arguments[options.browserClientCertificate] {
            throw UsageError("--browser-client-cert goes with --split client-cert-app-only", path: arguments.path)
        }
        if let name = arguments[options.publicHost] {
            guard ResolveTable.isHostName(name), SocketAddress(numericHost: name, port: 0) == nil else {
                throw UsageError("--public-host expects a host name such as intact-hsts.test (not an IP address), got '\(name)'",
                                 path: arguments.path)
            }
            guard !arguments[options.keep] else {
                throw UsageError("--public-host does not go with --keep (the curl walk-through uses 127.0.0.1)", path: arguments.path)
            }
            configuration.publicHost = name.lowercased()
        }
        if let faults { configuration.proxyAddons = [try faults.addon(contextPath: configuration.contextPath)] }
        // Only now: a run refused for its options leaves no empty directory behind.
        do {
            configuration.directory = try arguments[options.out] ?? DemoFiles.claimNewDirectory(defaultDirectory())
        } catch {
            throw CommandFailure("\(error)")
        }
        let out = context.standardOutput
        let rig = DemoRig(configuration: configuration)
        defer { rig.stopServers() }
        let endpoints: DemoEndpoints
        do {
            endpoints = try rig.start()
        } catch {
            throw CommandFailure("\(error)")
        }
        describe(endpoints, protocols: protocols, browser: configuration.browser, to: out)
        if let faults {
            out.line("The proxy injects faults: \(faults.summary)")
            out.line()
        }
        if let split {
            out.line("Split paths (\(split.rawValue)): \(split.summary)")
            out.line()
        }

        out.line("The client (what the app and its browser see):")
        let counter = StepCounter()
        let outcome: FlowOutcome
        do {
            outcome = try rig.runClient { step in
                out.write(indent(FlowReport.step(step, number: counter.next())) + "\n")
            }
        } catch {
            throw CommandFailure("\(error)")
        }
        out.write(indent(FlowReport.conclusion(outcome)))
        out.line()

        let report: VerificationReport
        do {
            report = try rig.finish()
        } catch {
            throw CommandFailure("\(error)")
        }
        out.line("The proof (client → proxy → server, from the three recordings):")
        out.write(indent(TextReport.render(report)))
        out.line()
        describeFiles(rig.files, to: out)
        if let faults {
            try describeFaults(faults, outcome: outcome, proxyRecording: rig.files.proxyRecording, to: out)
        }

        let passed = outcome.succeeded && report.policyHolds
        out.line(passed
                 ? "PASS: signed in through the proxy, and every exchange crossed it unmodified."
                 : "FAIL: " + failureSummary(outcome: outcome, report: report))

        if arguments[options.keep] {
            try keepRunning(base: configuration, context: context)
        }
        return passed ? ExitStatus.success : ExitStatus.failure
    }

    /// Starts a fresh rig recording to OUT/keep, prints the curl walk-through, waits for Ctrl-C.
    private static func keepRunning(base: DemoConfiguration, context: CommandContext) throws {
        var configuration = base
        configuration.directory = base.directory + "/keep"
        let rig = DemoRig(configuration: configuration)
        defer { rig.stopServers() }
        let endpoints: DemoEndpoints
        do {
            endpoints = try rig.start()
        } catch {
            throw CommandFailure("\(error)")
        }
        let out = context.standardOutput
        out.line()
        out.line("Kept running for you (Ctrl-C stops them): mock server \(endpoints.server), proxy \(endpoints.proxy).")
        out.write(CurlWalkthrough.text(endpoints: endpoints, contextPath: configuration.contextPath))
        out.line("Afterwards, verify what you sent: intact verify \(rig.files.proxyRecording) \(rig.files.serverRecording)")
        StopSignal.wait()
        rig.stopServers()
        out.line("Stopped; your exchanges are in \(configuration.directory).")
    }

    private static func describe(_ endpoints: DemoEndpoints, protocols: ClientRunner.Protocols,
                                 browser: ClientRunner.BrowserChoice, to out: OutputWriter) {
        let offer: String
        switch protocols {
        case .http1Only: offer = "HTTP/1.1"
        case .http2Only: offer = "HTTP/2"
        case .http2OrHTTP1: offer = "HTTP/2 or HTTP/1.1"
        }
        out.line("Intact demo: the mobile sign-in flow through a proxy, on this machine")
        out.line("  mock server  https://\(endpoints.server)  (tap server; names \(endpoints.publicOrigin) as its URL)")
        out.line("  proxy        https://\(endpoints.proxy) → mock server  (tap proxy, the stand-in for a load balancer)")
        out.line("  client       \(endpoints.resourceURL)  (tap client, offering \(offer))")
        if case .chromium(let settings) = browser {
            out.line("  browser      headless Chromium (\(settings.executable)) for steps 6-8, trusting the demo CA")
        }
        out.line()
    }

    private static func describeFiles(_ files: DemoFiles, to out: OutputWriter) {
        out.line("Files in \(files.directory)/:")
        out.line("  client.jsonl, proxy.jsonl, server.jsonl  the three recordings (verify them again: intact verify \(files.directory)/*.jsonl)")
        out.line("  proxy.har                                 the proxy's recording as HAR 1.2")
        out.line("  report.html                               the verification as a sequence diagram")
        out.line("  report.json                               the verification as JSON (Docs/verify-json.md)")
        out.line()
    }

    private static func failureSummary(outcome: FlowOutcome, report: VerificationReport) -> String {
        var reasons: [String] = []
        if !outcome.succeeded {
            reasons.append("the sign-in " + (outcome.diagnosis.map { "failed (\($0.mode.rawValue))" } ?? "did not complete"))
        }
        if !report.policyHolds { reasons.append("the verification found exchanges that did not cross unmodified") }
        return reasons.joined(separator: "; ") + "."
    }

    /// `./intact-demo-YYYYMMDD-HHMMSS` (UTC); `claimNewDirectory` adds `-2`, `-3`… when it exists.
    private static func defaultDirectory() -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        return "intact-demo-" + formatter.string(from: Date())
    }

    private static func indent(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.isEmpty ? "" : "  " + $0 }
            .joined(separator: "\n")
    }
}
