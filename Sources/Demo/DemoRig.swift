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
/// Life cycle, each step once and in order, from a thread that is not an
/// event loop (every step blocks on disk I/O or on the servers):
/// `start()`, `runClient(onStep:)` (optional, may be skipped with `--keep`
/// style manual driving), `finish()`.
public final class DemoRig: @unchecked Sendable {
    // @unchecked Sendable: the mutable state below is touched only by the
    // thread that drives the life cycle (start → runClient → finish), which
    // the documented call order makes one thread at a time.

    public let configuration: DemoConfiguration
    /// The files this run writes, all under `configuration.directory`.
    public let files: DemoFiles

    private var authority: CertificateAuthority?
    private var certificateDirectory: String?
    private var server: MockServerHost?
    private var serverRecorder: TapRecorder?
    private var proxy: ProxyServer?
    private var endpoints: DemoEndpoints?
    /// The client certificate the client presents, when the configuration asks for one.
    private var clientIdentity: TLSIdentity?

    public init(configuration: DemoConfiguration) {
        self.configuration = configuration
        files = DemoFiles(directory: configuration.directory)
    }

    /// Creates the output directory and the CA, starts the mock server and
    /// the proxy in front of it, and returns where they listen.
    ///
    /// The proxy's port is chosen first (the mock server must name the
    /// proxy's origin in its `contextUrl` and `tokenUrl`, as a real server
    /// behind a load balancer names its public URL). Throws `DemoError`.
    public func start() throws -> DemoEndpoints {
        try DemoFiles.makeDirectory(configuration.directory)
        let certificates = try DemoFiles.makeTemporaryDirectory(prefix: "intact-demo-ca")
        certificateDirectory = certificates
        let authority: CertificateAuthority
        do {
            authority = try CertificateAuthority.create(in: certificates + "/ca")
        } catch {
            throw DemoError.certificateAuthority("\(error)")
        }
        self.authority = authority
        if configuration.presentsClientCertificate {
            clientIdentity = try DemoRig.importedClientIdentity(from: authority)
        }

        let proxyPort = try DemoRig.reserveLoopbackPort()
        let publicOrigin = Origin(scheme: "https", host: "127.0.0.1", port: proxyPort)

        // The mock server, on an ephemeral port, believing it is reached at the proxy's origin.
        let serverSettings = MockServerConfiguration(externalOrigin: publicOrigin, contextPath: configuration.contextPath)
        let recorder = try recorder(files.serverRecording, tap: "server", role: .server, mode: "server")
        serverRecorder = recorder
        let host = MockServerHost(
            configuration: MockServerHost.Configuration(server: serverSettings,
                                                        listenAddress: .loopbackIPv4(port: 0),
                                                        certificate: .authority(authority)),
            recorder: recorder)
        let serverStarted: MockServerHost.Started
        do {
            serverStarted = try host.start()
        } catch {
            throw DemoError.serverStart("\(error)")
        }
        server = host

        // The proxy, verifying the mock server's certificate against the demo CA.
        var proxySettings = ProxyConfiguration(authority: authority)
        proxySettings.listenHost = "127.0.0.1"
        proxySettings.listenPort = proxyPort
        guard let upstream = UpstreamTarget(scheme: .https, host: "127.0.0.1",
                                            port: Int(serverStarted.listenAddress.port)) else {
            throw DemoError.proxyStart("the mock server's address \(serverStarted.listenAddress) is not a valid upstream")
        }
        proxySettings.mode = .reverse(upstream)
        proxySettings.upstreamVerification = .caFile(authority.certificatePath)
        proxySettings.tap = "proxy"
        proxySettings.recording = ProxyConfiguration.Recording(path: files.proxyRecording)
        proxySettings.addons = ProxyConfiguration.signInAddons(contextPath: configuration.contextPath,
                                                               configuration.proxyAddons)
        proxySettings.toolVersion = configuration.toolVersion
        let proxy = ProxyServer(configuration: proxySettings)
        let proxyAddress: SocketAddress
        do {
            proxyAddress = try proxy.start()
        } catch {
            throw DemoError.proxyStart("\(error)")
        }
        self.proxy = proxy

        let endpoints = DemoEndpoints(
            server: serverStarted.listenAddress, proxy: proxyAddress,
            publicOrigin: publicOrigin.serialized,
            resourceURL: publicOrigin.serialized + "/" + configuration.contextPath + "/rest/tempo/feed",
            caCertificatePath: authority.certificatePath)
        self.endpoints = endpoints
        return endpoints
    }

    /// Runs the client simulator through the proxy and returns the flow's
    /// outcome; `onStep` sees each step as it completes (on a loop queue).
    /// Call after `start()`.
    public func runClient(onStep: @escaping @Sendable (StepResult) -> Void = { _ in }) throws -> FlowOutcome {
        guard let endpoints, let resource = AbsoluteURL(endpoints.resourceURL) else {
            preconditionFailure("DemoRig.runClient before start")
        }
        var flow = SignInFlow.Configuration(resourceURL: resource)
        // The mock server echoes Intact-Trace: a response without the echo came from something else.
        flow.expectsTraceEcho = true
        let recorder = try recorder(files.clientRecording, tap: "client", role: .client, mode: "client")
        let runner: ClientRunner
        do {
            runner = try ClientRunner(
                configuration: ClientRunner.Configuration(flow: flow, trust: .caFile(endpoints.caCertificatePath),
                                                          clientIdentity: clientIdentity,
                                                          protocols: configuration.protocols,
                                                          exchangeTimeout: configuration.exchangeTimeout),
                recorder: recorder)
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
    /// of the proxy's recording and the HTML and JSON reports.
    public func finish() throws -> VerificationReport {
        stopServers()
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

    /// Stops whatever runs and removes the temporary CA; safe to call more
    /// than once and after a failed `start()`.
    public func stopServers() {
        if let proxy {
            _ = proxy.stopAndWait(drainTimeout: .seconds(5))
            self.proxy = nil
        }
        if let server {
            server.stop()
            self.server = nil
        }
        if let serverRecorder {
            _ = serverRecorder.close()
            self.serverRecorder = nil
        }
        if let certificateDirectory {
            try? FileManager.default.removeItem(atPath: certificateDirectory)
            self.certificateDirectory = nil
        }
    }

    deinit {
        stopServers()
    }

    private func recorder(_ path: String, tap: String, role: ExchangeRecord.Leg.Role, mode: String) throws -> TapRecorder {
        do {
            return try TapRecorder(path: path, settings: TapRecorder.Settings(tap: tap, role: role),
                                   toolVersion: configuration.toolVersion, mode: mode)
        } catch {
            throw DemoError.recording(path, "\(error)")
        }
    }

    /// A client certificate from the demo CA, imported from its PKCS#12 form
    /// as a user imports one into the app. Blocks on key generation.
    static func importedClientIdentity(from authority: CertificateAuthority) throws -> TLSIdentity {
        let password = "intact-demo"
        do {
            let issued = try authority.issueClient(commonName: "intact demo client", password: password)
            return try PKCS12.importIdentity(issued.pkcs12, password: password)
        } catch {
            throw DemoError.certificateAuthority("cannot issue the client certificate: \(error)")
        }
    }

    /// A free loopback port: bound to port 0 and released at once. Another
    /// process could take it in between; on this machine's loopback that is
    /// a race the caller reports (the proxy's start then fails naming the
    /// address in use) rather than one it hides.
    static func reserveLoopbackPort() throws -> Int {
        let loop = EventLoop(label: "intact.demo.port")
        let listener: Listener
        do {
            listener = try Listener(bindingTo: .loopbackIPv4(port: 0), on: loop) { connection in connection.abort() }
        } catch {
            throw DemoError.proxyStart("cannot find a free loopback port: \(error)")
        }
        let port = Int(listener.localAddress.port)
        let closed = DispatchSemaphore(value: 0)
        listener.close { closed.signal() }
        closed.wait()
        return port
    }
}

/// Where the demo's servers listen and what the client is pointed at.
public struct DemoEndpoints: Sendable {
    /// The mock server's own address (behind the proxy).
    public var server: SocketAddress
    /// The proxy's address: what the client, and a user with curl, talk to.
    public var proxy: SocketAddress
    /// `https://127.0.0.1:PORT`, the origin the mock server names in its 401.
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
    /// The policy the verification applies (strict: the document's rule).
    public var policy: VerificationPolicy
    public var contextPath: String
    /// Written into every recording's header.
    public var toolVersion: String

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
        }
    }
}
