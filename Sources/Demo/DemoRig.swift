import AuthFlow
import Evidence
import Foundation
import Proxy
import ProxyAddons
import SignIn
import TLS
import Wire

/// The whole mobile sign-in flow on one machine, in one process: a
/// development CA in a temporary directory, the mock server, the proxy in
/// reverse mode in front of it (the stand-in for a load balancer, with any
/// fault add-ons), and the client simulator through the proxy. Each of the
/// three records what it saw; `finish()` stops the servers, verifies the
/// three recordings against each other and writes the HAR and the reports.
///
/// `intact demo` drives one; the fault-preset tests drive one per preset.
///
/// Life cycle, a small state machine driven from one thread that is not an
/// event loop (every step blocks on disk I/O or on the servers):
/// `idle --start()--> running --runClient()*--> running --finish()--> finished`;
/// `stopServers()` takes `running` to `stopped` (and `finish()` goes on from
/// there). A step out of order throws `DemoError.outOfOrder`, never traps.
public final class DemoRig: @unchecked Sendable {
    // @unchecked Sendable: `phase` is touched only by the thread that drives
    // the life cycle (and by deinit, when no other reference is left).

    public let configuration: DemoConfiguration
    /// The files this run writes, all under `configuration.directory`.
    public let files: DemoFiles

    /// What runs while the rig is started; each piece is stopped once, by `stop()`.
    private struct Running {
        let certificateDirectory: String
        let authority: CertificateAuthority
        let server: MockServerHost
        let serverRecorder: TapRecorder
        let proxy: ProxyServer
        let endpoints: DemoEndpoints
        /// The client certificate the app presents, when the configuration asks for one.
        let clientIdentity: TLSIdentity?
        /// The certificate issued for the client (the app's or the browser's).
        let issued: TLSIdentity?

        /// Stops the proxy (draining in-flight exchanges), the mock server and
        /// its recording, and removes the temporary CA.
        func stop() {
            _ = proxy.stopAndWait(drainTimeout: .seconds(5))
            server.stop()
            _ = serverRecorder.close()
            try? FileManager.default.removeItem(atPath: certificateDirectory)
        }
    }

    private enum Phase {
        case idle
        case running(Running)
        /// The servers stopped (by `stopServers()` or `finish()`); the recordings are complete.
        case stopped
        case finished
    }

    private var phase = Phase.idle

    public init(configuration: DemoConfiguration) {
        self.configuration = configuration
        files = DemoFiles(directory: configuration.directory)
    }

    /// Creates the output directory and the CA, starts the mock server and
    /// the proxy in front of it, and returns where they listen.
    ///
    /// The proxy's port is bound first and kept (the mock server must name
    /// the proxy's origin in its `contextUrl` and `tokenUrl`, as a real
    /// server behind a load balancer names its public URL); the proxy then
    /// serves on that very socket. Throws `DemoError`; on failure, whatever
    /// started is stopped again.
    public func start() throws -> DemoEndpoints {
        guard case .idle = phase else { throw DemoError.outOfOrder("start() runs once, on a new rig") }
        var undo: [() -> Void] = []
        do {
            let running = try startPieces(undo: &undo)
            phase = .running(running)
            return running.endpoints
        } catch {
            for step in undo.reversed() { step() }
            throw error
        }
    }

    /// The steps of `start()`; `undo` collects how to take back each one that succeeded.
    private func startPieces(undo: inout [() -> Void]) throws -> Running {
        try DemoFiles.makeDirectory(configuration.directory)
        let certificates = try DemoFiles.makeTemporaryDirectory(prefix: "intact-demo-ca")
        undo.append { try? FileManager.default.removeItem(atPath: certificates) }
        let authority: CertificateAuthority
        do {
            authority = try CertificateAuthority.create(in: certificates + "/ca")
        } catch {
            throw DemoError.certificateAuthority("\(error)")
        }
        let issued = configuration.presentsClientCertificate || configuration.browserPresentsClientCertificate == true
            ? try DemoRig.importedClientIdentity(from: authority) : nil
        let clientIdentity = configuration.presentsClientCertificate ? issued : nil

        let proxySocket: ListeningSocket
        do {
            proxySocket = try ListeningSocket(bindingTo: .loopbackIPv4(port: 0))
        } catch {
            throw DemoError.proxyStart("cannot bind a loopback port: \(error)")
        }
        undo.append { proxySocket.close() }
        let publicOrigin = Origin(scheme: "https", host: configuration.publicHost ?? "127.0.0.1", port: Int(proxySocket.localAddress.port))

        // The mock server, on an ephemeral port, believing it is reached at the proxy's origin.
        let serverSettings = MockServerConfiguration(externalOrigin: publicOrigin, contextPath: configuration.contextPath)
        let serverRecorder = try recorder(files.serverRecording, tap: "server", role: .server, mode: "server")
        undo.append { _ = serverRecorder.close() }
        let serverHostSettings = MockServerHost.Configuration(server: serverSettings, listenAddress: .loopbackIPv4(port: 0),
                                                              certificate: .authority(authority))
        // The proxy dials the server by its loopback address (no SNI), whatever name the proxy is
        // reached at: the certificate names both (`certificateNames`).
        let server = MockServerHost(configuration: serverHostSettings, recorder: serverRecorder)
        let serverStarted: MockServerHost.Started
        do {
            serverStarted = try server.start()
        } catch {
            throw DemoError.serverStart("\(error)")
        }
        undo.append { server.stop() }

        // The proxy, verifying the mock server's certificate against the demo CA.
        var proxySettings = ProxyConfiguration(authority: authority)
        guard let upstream = UpstreamTarget(scheme: .https, host: "127.0.0.1",
                                            port: Int(serverStarted.listenAddress.port)) else {
            throw DemoError.proxyStart("the mock server's address \(serverStarted.listenAddress) is not a valid upstream")
        }
        proxySettings.mode = .reverse(upstream)
        proxySettings.upstreamVerification = .caFile(authority.certificatePath)
        proxySettings.tap = "proxy"
        proxySettings.recording = ProxyConfiguration.Recording(path: files.proxyRecording,
                                                               bodyStoreLimit: configuration.bodyStoreLimit,
                                                               redaction: configuration.redaction)
        proxySettings.addons = ProxyConfiguration.signInAddons(contextPath: configuration.contextPath,
                                                               configuration.proxyAddons)
        proxySettings.toolVersion = configuration.toolVersion
        let proxy = ProxyServer(configuration: proxySettings)
        let proxyAddress: SocketAddress
        do {
            proxyAddress = try proxy.start(on: proxySocket)
        } catch {
            throw DemoError.proxyStart("\(error)")
        }

        let endpoints = DemoEndpoints(
            server: serverStarted.listenAddress, proxy: proxyAddress,
            publicOrigin: publicOrigin.serialized,
            resourceURL: publicOrigin.serialized + "/" + configuration.contextPath + "/rest/tempo/feed",
            caCertificatePath: authority.certificatePath)
        return Running(certificateDirectory: certificates, authority: authority, server: server,
                       serverRecorder: serverRecorder, proxy: proxy, endpoints: endpoints, clientIdentity: clientIdentity,
                       issued: issued)
    }

    /// Runs the client simulator through the proxy and returns the flow's
    /// outcome; `onStep` sees each step as it completes (on a loop queue).
    /// Only while running (after `start()`, before `finish()`).
    public func runClient(onStep: @escaping @Sendable (StepResult) -> Void = { _ in }) throws -> FlowOutcome {
        guard case .running(let running) = phase, let resource = AbsoluteURL(running.endpoints.resourceURL) else {
            throw DemoError.outOfOrder("runClient() needs the servers running: call it after start(), before finish()")
        }
        var flow = SignInFlow.Configuration(resourceURL: resource)
        // The mock server echoes Intact-Trace: a response without the echo came from something else.
        flow.expectsTraceEcho = true
        let recorder = try recorder(files.clientRecording, tap: "client", role: .client, mode: "client")
        var client = ClientRunner.Configuration(flow: flow, trust: .caFile(running.endpoints.caCertificatePath),
                                                clientIdentity: running.clientIdentity, protocols: configuration.protocols,
                                                exchangeTimeout: configuration.exchangeTimeout, browser: configuration.browser)
        client.browserPath = configuration.browserPath
        if let name = configuration.publicHost, let port = resource.origin.port {
            do {
                try client.resolve.add("\(name):\(port):\(running.endpoints.proxy.ip)")
            } catch {
                throw DemoError.client("\(error)")
            }
        }
        switch configuration.browserPresentsClientCertificate {
        case nil:
            break
        case false?:
            client.browserIdentity = .none
        case true?:
            if let issued = running.issued { client.browserIdentity = .identity(issued) }
        }
        let runner: ClientRunner
        do {
            runner = try ClientRunner(configuration: client, recorder: recorder)
        } catch {
            _ = recorder.close()
            throw DemoError.client("\(error)")
        }
        let outcome = runner.runAndWait(onStep: onStep)
        if let problem = recorder.close() {
            throw DemoError.recording(files.clientRecording, "\(problem)")
        }
        return outcome
    }

    /// Stops the proxy (draining in-flight exchanges) and the mock server,
    /// closes their recordings, removes the temporary CA, then verifies the
    /// client's, the proxy's and the server's recordings and writes the HAR
    /// of the proxy's recording and the HTML and JSON reports. Once, after `start()`.
    public func finish() throws -> VerificationReport {
        switch phase {
        case .running, .stopped: stopServers()
        case .idle, .finished: throw DemoError.outOfOrder("finish() runs once, after start()")
        }
        phase = .finished
        let recordings: [Recording]
        do {
            recordings = try [files.clientRecording, files.proxyRecording, files.serverRecording]
                .filter { FileManager.default.fileExists(atPath: $0) }
                .map(RecordingReader.read(path:))
        } catch {
            throw DemoError.verification("\(error)")
        }
        let report: VerificationReport
        do {
            report = try Verifier(Verifier.Configuration(policy: configuration.policy)).verify(recordings)
        } catch {
            throw DemoError.verification("\(error)")
        }
        do {
            try Data(HTMLReport.render(report).utf8).write(to: URL(fileURLWithPath: files.htmlReport))
            try Data(report.jsonBytes()).write(to: URL(fileURLWithPath: files.jsonReport))
            if let proxyRecording = recordings.first(where: { $0.header.tap == "proxy" }) {
                let har = try HARExporter.export([proxyRecording], creatorVersion: configuration.toolVersion)
                try Data(har).write(to: URL(fileURLWithPath: files.har))
            }
        } catch {
            throw DemoError.reports(configuration.directory, "\(error)")
        }
        return report
    }

    /// Stops whatever runs and removes the temporary CA; safe in every phase
    /// and more than once (a failed `start()` already stopped what it started).
    public func stopServers() {
        guard case .running(let running) = phase else { return }
        phase = .stopped
        running.stop()
    }

    deinit {
        stopServers()
    }

    private func recorder(_ path: String, tap: String, role: ExchangeRecord.Leg.Role, mode: String) throws -> TapRecorder {
        do {
            let settings = TapRecorder.Settings(tap: tap, role: role, redaction: configuration.redaction,
                                                bodyStoreLimit: configuration.bodyStoreLimit)
            return try TapRecorder(path: path, settings: settings, toolVersion: configuration.toolVersion, mode: mode)
        } catch {
            throw DemoError.recording(path, "\(error)")
        }
    }

    /// The password of the client certificate's PKCS#12 file.
    static let clientCertificatePassword = "intact-demo"

    /// A client certificate from the demo CA, imported from its PKCS#12 form
    /// as a user imports one into the app. Blocks on key generation.
    static func importedClientIdentity(from authority: CertificateAuthority) throws -> TLSIdentity {
        let password = clientCertificatePassword
        do {
            let issued = try authority.issueClient(commonName: "intact demo client", password: password)
            return try PKCS12.importIdentity(issued.pkcs12, password: password)
        } catch {
            throw DemoError.certificateAuthority("cannot issue the client certificate: \(error)")
        }
    }
}

/// Where the demo's servers listen and what the client is pointed at.
public struct DemoEndpoints: Sendable {
    /// The mock server's own address (behind the proxy).
    public var server: SocketAddress
    /// The proxy's address: what the client, and a user with curl, talk to.
    public var proxy: SocketAddress
    /// `https://127.0.0.1:PORT` (or the `publicHost`), the origin the mock server names in its 401.
    public var publicOrigin: String
    /// The protected resource the client asks for first.
    public var resourceURL: String
    /// The development CA certificate to trust (`curl --cacert`).
    public var caCertificatePath: String
}

/// What a demo run is made of.
public struct DemoConfiguration: Sendable {
    /// Where the recordings, the HAR and the reports go (created; must be empty if it exists).
    public var directory: String
    /// Which HTTP versions the client offers.
    public var protocols: ClientRunner.Protocols
    /// Add-ons the proxy runs every exchange through (the fault engine: `FaultsAddon`).
    public var proxyAddons: [any ProxyAddon]
    /// The client imports a client certificate the demo CA issued (as
    /// PKCS#12) and presents it whenever a server or gateway asks for one.
    public var presentsClientCertificate: Bool
    /// The most one exchange of the client may take; a stalled exchange ends there.
    public var exchangeTimeout: Duration
    /// Who plays the browser of steps 6–8 (Chromium trusts the demo CA, straight to the proxy).
    public var browser: ClientRunner.BrowserChoice = .simulated
    /// The browser's own path when it is not the app's (per-app VPN).
    public var browserPath: ClientRunner.BrowserPath = .sameAsApp
    /// Whether the simulated browser holds the client certificate too; nil:
    /// it shares the app's. Chromium never holds one (`ChromiumProfile`).
    public var browserPresentsClientCertificate: Bool?
    /// The name the proxy is reached at instead of `127.0.0.1` (its
    /// certificate names it, the mock server's URLs use it); the client and
    /// Chromium map it to the proxy's loopback address, as `--resolve` does.
    /// Chromium keeps HSTS only for such a name, never for an IP address.
    public var publicHost: String?
    /// The policy the verification applies (strict: the document's rule).
    public var policy: VerificationPolicy
    public var contextPath: String
    /// Written into every recording's header.
    public var toolVersion: String
    /// What the three recordings keep in clear and the key they digest
    /// under, shared by the three taps (by default a key of this process).
    public var redaction = RedactionPolicy()
    /// Body bytes each recording stores per message; 0 stores none.
    public var bodyStoreLimit = 0

    public init(directory: String, protocols: ClientRunner.Protocols = .http2OrHTTP1,
                proxyAddons: [any ProxyAddon] = [], presentsClientCertificate: Bool = false,
                exchangeTimeout: Duration = .seconds(10), policy: VerificationPolicy = .strict,
                contextPath: String = "suite", toolVersion: String) {
        self.directory = directory
        self.protocols = protocols
        self.proxyAddons = proxyAddons
        self.presentsClientCertificate = presentsClientCertificate
        self.exchangeTimeout = exchangeTimeout
        self.policy = policy
        self.contextPath = contextPath
        self.toolVersion = toolVersion
    }
}

/// Why a demo run could not go on, naming the part that failed.
public enum DemoError: Error, CustomStringConvertible {
    case directory(String, String)
    case certificateAuthority(String)
    case serverStart(String)
    case proxyStart(String)
    case client(String)
    case recording(String, String)
    case verification(String)
    case reports(String, String)
    /// A life-cycle step called out of order (`runClient()` before `start()`…).
    case outOfOrder(String)

    public var description: String {
        switch self {
        case .directory(let path, let reason): return "cannot use \(path) for the demo's files: \(reason)"
        case .certificateAuthority(let reason): return "cannot create the demo's certificate authority: \(reason)"
        case .serverStart(let reason): return "cannot start the mock server: \(reason)"
        case .proxyStart(let reason): return "cannot start the proxy: \(reason)"
        case .client(let reason): return "cannot set up the client: \(reason)"
        case .recording(let path, let reason): return "recording \(path): \(reason)"
        case .verification(let reason): return "cannot verify the recordings: \(reason)"
        case .reports(let directory, let reason): return "cannot write the reports to \(directory): \(reason)"
        case .outOfOrder(let rule): return "demo rig used out of order: \(rule)"
        }
    }
}
