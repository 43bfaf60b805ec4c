import Foundation
import TLS

/// Everything a scenario run does, as data: the files it writes in the run
/// directory, the configuration check, the four long-running processes in
/// start order, the client, and the verification. Building a plan does no
/// I/O, so it can be printed for a user to repeat by hand
/// (`intact scenario prepare`) and tested without starting anything.
///
/// Topologies, all on 127.0.0.1 (`IntermediaryKind.Topology`):
///
///     reverse: client → tap A (reverse proxy) → intermediary → tap B (reverse proxy) → mock server
///     forward: client → tap A (forward proxy, --upstream-proxy the intermediary) → intermediary → tap B → mock server
///
/// Reverse: the server's external URL is tap A's origin, which is what the
/// client sees, so `contextUrl` and `tokenUrl` match the client's requests;
/// the intermediary presents a certificate for 127.0.0.1 issued by the run's
/// CA and verifies tap B's certificate (minted by the same CA) against it.
/// Forward: the client asks tap A, as its proxy, for tap B's origin (the
/// server's external URL); tap A tunnels through the intermediary with
/// CONNECT and trusts the run's CA and, for a TLS-inspecting intermediary,
/// the intermediary's own CA (`Files.tapATrust`).
public struct ScenarioPlan: Hashable, Sendable {
    /// The host the client uses, and the load balancer's and taps' addresses.
    public static let loopbackHost = "127.0.0.1"
    /// The name the load balancer checks tap B's certificate against.
    public static let upstreamName = "127.0.0.1"
    /// The protected resource the client requests first.
    public static let resourcePath = "/suite/rest/protected"
    /// Tap names, in path order: they name the recordings and the report's hops.
    public static let tapNames = ["client", "tap-a", "tap-b", "server"]
    /// The tap names of a scenario's runs of the client after the first (`client.runs`): `client-2`, …
    static func laterClientTaps(_ scenario: Scenario) -> [String] {
        scenario.clientRuns < 2 ? [] : (2...scenario.clientRuns).map { "client-\($0)" }
    }
    /// The PKCS#12 password of the client certificate tap A presents.
    public static let clientCertificatePassword = "intact"

    /// Where the run keeps its files; every path is inside `runDirectory`.
    public struct Files: Hashable, Sendable {
        public var caDirectory: String
        public var caCertificate: String
        public var loadBalancerCertificate: String
        /// The CA directory's shared leaf key, which every certificate it mints certifies.
        public var loadBalancerKey: String
        /// Certificate then key, one PEM file (HAProxy's `crt`).
        public var loadBalancerBundle: String
        /// PKCS#12 tap A presents when the scenario asks for a client certificate.
        public var clientCertificate: String
        /// The configuration with its placeholders filled.
        public var renderedConfig: String
        /// The scenario's other templates (`Scenario.files`), rendered: template path → rendered path.
        public var renderedFiles: [String: String]
        /// The intermediary's own directory (`{{WORKDIR}}`).
        public var workDirectory: String
        /// The CA a TLS-inspecting intermediary signs with (`{{BUMP_CA_CERT}}` is its `ca-cert.pem`); nil otherwise.
        public var bumpCADirectory: String?
        /// What tap A trusts upstream: the run's CA, plus the bumping intermediary's CA.
        public var tapATrust: String
        /// One recording per tap, by tap name.
        public var recordings: [String: String]
        /// What the client printed with `--json`.
        public var clientOutput: String
        /// What each later run of the client printed (`client-2.json`, …), in run order.
        public var laterClientOutputs: [String] = []
        public var reportText: String
        public var reportHTML: String
        public var reportJSON: String

        /// Standard output and error of a process of `role`, merged.
        public func log(_ role: ProcessCommand.Role, in runDirectory: String) -> String {
            runDirectory + "/" + role.rawValue + ".log"
        }
    }

    /// How the services come by their listening sockets.
    public enum Listening: Hashable, Sendable {
        /// Each binds its own port: the commands as a user runs them by hand.
        case bindOwnPorts
        /// Each inherits the socket the runner reserved for it at
        /// `ProcessCommand.listenerDescriptor`, so no port is ever released
        /// and bound again (`ReservedListeners`).
        case inheritReserved
    }

    public var scenario: Scenario
    public var ports: ScenarioPorts
    public var listening: Listening
    public var runDirectory: String
    public var files: Files
    /// The values of the configuration template's placeholders.
    public var placeholderValues: [String: String]
    /// `nginx -t …` or `haproxy -c …` on the rendered configuration; nil for a product without a check.
    public var configCheck: ProcessCommand?
    /// Commands that prepare the intermediary's files before the check (Squid's certificate database).
    public var setup: [ProcessCommand]
    /// Server, tap B, the intermediary's processes, tap A: each keeps running and listens on its port.
    public var services: [ProcessCommand]
    public var client: ProcessCommand
    /// The client run again after `client`, each as another app recording
    /// as its own tap (`client-2`, …): two apps behind one cache. Empty for one run.
    public var laterClients: [ProcessCommand] = []
    /// The recordings' taps in path order: every client (each a start of the
    /// path; verify merges them), then tap A, tap B, the server.
    public var pathTaps: [String] = ScenarioPlan.tapNames
    /// The `intact verify` command equivalent to the verification the runner does.
    public var verify: ProcessCommand

    /// `https://127.0.0.1:PORT`: the origin the client asks for: tap A's
    /// (reverse), or tap B's, reached through tap A as the client's proxy (forward).
    public var publicOrigin: String {
        "https://\(scenario.clientHost):\(scenario.intermediary.topology == .forward ? ports.tapB : ports.tapA)"
    }

    /// The URL the client requests first.
    public var clientURL: String { publicOrigin + Self.resourcePath }

    /// The port `role` listens on, for the long-running roles.
    public func port(of role: ProcessCommand.Role) -> Int? {
        ports.listeners.first { $0.role == role }?.port
    }

    /// Lays out a run of `scenario` on `ports` in `runDirectory` (absolute),
    /// running `intact` from `intactExecutable` and every program of the
    /// intermediary from `executable` (a test's stand-in), each service
    /// listening as `listening` says.
    public init(scenario: Scenario, ports: ScenarioPorts, runDirectory: String, intactExecutable: String,
                loadBalancerExecutable executable: String, listening: Listening = .bindOwnPorts) {
        let programs = Dictionary(uniqueKeysWithValues: scenario.intermediary.programs.map { ($0, executable) })
        // Every template was checked when the scenario loaded: rendering the commands cannot fail.
        try! self.init(scenario: scenario, ports: ports, runDirectory: runDirectory, intactExecutable: intactExecutable,
                       executables: programs, listening: listening)
    }

    /// Lays out a run of `scenario` on `ports` in `runDirectory` (absolute),
    /// running `intact` from `intactExecutable` and each program of the
    /// intermediary from `executables` (program name → absolute path), each
    /// service listening as `listening` says. Throws `.configTemplate` for
    /// a command with an unknown placeholder (a `command` scenario's).
    public init(scenario: Scenario, ports: ScenarioPorts, runDirectory: String, intactExecutable: String,
                executables: [String: String], listening: Listening = .bindOwnPorts) throws(ScenarioError) {
        let run = runDirectory.hasSuffix("/") ? String(runDirectory.dropLast()) : runDirectory
        let kind = scenario.intermediary
        let caDirectory = run + "/ca"
        let work = run + "/" + kind.name
        let directoryValues = ["RUNDIR": run, "WORKDIR": work]
        let configDirectory = (try? ConfigTemplate(file: "", text: kind.configDirectory).render(directoryValues)) ?? run
        let rendered = { (template: String) in configDirectory + "/" + (template as NSString).lastPathComponent }
        let bumpCA = kind.bumpsTLS ? work + "/bump-ca" : nil
        let files = Files(
            caDirectory: caDirectory, caCertificate: caDirectory + "/ca-cert.pem",
            loadBalancerCertificate: run + "/lb-cert.pem",
            loadBalancerKey: caDirectory + "/" + CertificateAuthority.leafKeyFileName,
            loadBalancerBundle: run + "/lb-bundle.pem", clientCertificate: run + "/tap-a-client.p12",
            renderedConfig: rendered(scenario.configFile),
            renderedFiles: Dictionary(uniqueKeysWithValues: scenario.files.map { ($0, rendered($0)) }),
            workDirectory: work, bumpCADirectory: bumpCA,
            tapATrust: bumpCA == nil ? caDirectory + "/ca-cert.pem" : run + "/tap-a-trust.pem",
            recordings: Dictionary(uniqueKeysWithValues: (Self.tapNames + Self.laterClientTaps(scenario)).map {
                ($0, run + "/\($0).jsonl")
            }),
            clientOutput: run + "/client.json", laterClientOutputs: Self.laterClientTaps(scenario).map { run + "/\($0).json" },
            reportText: run + "/report.txt", reportHTML: run + "/report.html",
            reportJSON: run + "/report.json")
        self.scenario = scenario
        self.ports = ports
        self.listening = listening
        self.runDirectory = run
        self.files = files

        let host = Self.loopbackHost
        let forward = kind.topology == .forward
        let origin = "https://\(scenario.clientHost):\(forward ? ports.tapB : ports.tapA)"
        let inherited = listening == .inheritReserved ? ProcessCommand.listenerDescriptor : nil
        let publicProcess = kind.processes.last
        let publicInherits = inherited != nil && publicProcess.map { Self.inherits($0.listening, scenario: scenario) } == true
        var values: [String: String] = [
            "LISTEN": publicInherits && publicProcess?.listening == .inheritsSocketWhereTemplateSaysListen
                ? "fd@\(ProcessCommand.listenerDescriptor)" : "\(host):\(ports.loadBalancer)",
            "LISTEN_ADDRESS": host, "LISTEN_PORT": String(ports.loadBalancer),
            "UPSTREAM_ADDRESS": host, "UPSTREAM_PORT": String(ports.tapB), "UPSTREAM_NAME": Self.upstreamName,
            "PUBLIC_HOST": scenario.clientHost, "PUBLIC_PORT": String(forward ? ports.tapB : ports.tapA), "PUBLIC_ORIGIN": origin,
            "CERT": files.loadBalancerCertificate, "KEY": files.loadBalancerKey, "CERT_BUNDLE": files.loadBalancerBundle,
            "CA": kind.workUser == nil ? files.caCertificate : work + "/ca-cert.pem",
            "RUNDIR": run, "SCENARIO_DIR": scenario.directory,
            "WORKDIR": work, "CONFIG": files.renderedConfig,
        ]
        if kind.usesInnerPort { values["INNER_PORT"] = String(ports.inner) }
        if let bumpCA {
            values["BUMP_CA_CERT"] = bumpCA + "/ca-cert.pem"
            values["BUMP_CA_KEY"] = bumpCA + "/ca-key.pem"
        }
        placeholderValues = values

        let commandsOrigin = "the \(kind.displayName) commands of \(scenario.directory)/\(Scenario.manifestFileName)"
        // The check runs where the public process runs: HAProxy's reads `fd@3` too, and nginx's finds its port held.
        let publicEnvironment = publicInherits ? publicProcess.map(Self.environment) ?? [:] : [:]
        configCheck = try kind.check?.rendered(role: .configCheck, name: kind.displayName, executables: executables,
                                               values: values, origin: commandsOrigin, inheritsListener: publicInherits,
                                               extraEnvironment: publicEnvironment)
        var setup: [ProcessCommand] = []
        for command in kind.setup {
            setup.append(try command.rendered(role: .setup, name: kind.displayName, executables: executables,
                                              values: values, origin: commandsOrigin))
        }
        self.setup = setup
        var intermediary: [ProcessCommand] = []
        for process in kind.processes {
            let inherits = inherited != nil && Self.inherits(process.listening, scenario: scenario)
            intermediary.append(try process.command.rendered(
                role: process.listensOnPublicPort ? .loadBalancer : .innerIntermediary, name: process.name,
                executables: executables, values: values, origin: commandsOrigin, inheritsListener: inherits,
                extraEnvironment: inherits ? Self.environment(process) : [:]))
        }

        let recordingOptions = { (tap: String) in ["--record", files.recordings[tap] ?? "", "--tap", tap] }
        let listenOptions = { (port: Int) in
            inherited.map { ["--listen-fd", "\($0)"] } ?? ["--listen", "\(host):\(port)"]
        }
        let server = ProcessCommand(role: .server, executable: intactExecutable, arguments: [
            "server"] + listenOptions(ports.server) + ["--external-url", origin, "--ca-dir", caDirectory,
        ] + (scenario.serverGzips ? ["--gzip"] : []) + recordingOptions("server"), inheritsListener: inherited != nil)
        let tapB = ProcessCommand(role: .tapB, executable: intactExecutable, arguments: [
            "proxy"] + listenOptions(ports.tapB) + (kind.upstreamTLS ? [] : ["--listen-plain"])
            + ["--mode", "reverse:https://\(host):\(ports.server)", "--ca-dir", caDirectory, "--upstream-ca", files.caCertificate,
        ] + scenario.tapB.proxyArguments + recordingOptions("tap-b"), inheritsListener: inherited != nil)
        let tapAMode = forward ? ["--mode", "forward", "--upstream-proxy", "http://\(host):\(ports.loadBalancer)"]
            : ["--mode", "reverse:\(scenario.tapA.plainHTTP ? "http" : "https")://\(host):\(ports.loadBalancer)"]
        let tapA = ProcessCommand(role: .tapA, executable: intactExecutable, arguments: [
            "proxy"] + listenOptions(ports.tapA) + tapAMode + ["--ca-dir", caDirectory, "--upstream-ca", files.tapATrust,
        ] + (scenario.tapAPresentsClientCertificate ? ["--upstream-client-cert", files.clientCertificate] : [])
            + scenario.tapA.proxyArguments + recordingOptions("tap-a"), inheritsListener: inherited != nil)
        services = [server, tapB] + intermediary + [tapA]
        let clientCommand = { (tap: String) in
            ProcessCommand(role: .client, executable: intactExecutable, arguments: [
                "client", origin + Self.resourcePath, "--ca", files.caCertificate, "--json",
            ] + (forward ? ["--proxy", "http://\(host):\(ports.tapA)"] : [])
                + scenario.clientRequestFields.flatMap { ["--request-field", $0.description] } + scenario.clientBrowserArguments
                + recordingOptions(tap))
        }
        client = clientCommand("client")
        let laterTaps = Self.laterClientTaps(scenario)
        laterClients = laterTaps.map(clientCommand)
        let pathTaps = ["client"] + laterTaps + Self.tapNames.dropFirst()
        self.pathTaps = pathTaps
        verify = ProcessCommand(role: .verify, executable: intactExecutable, arguments:
            ["verify"] + pathTaps.compactMap { files.recordings[$0] }
            + ["--path", pathTaps.joined(separator: ","), "--html", files.reportHTML]
            + (scenario.policyFile.map { ["--policy", $0] } ?? []) + ["--intermediary", kind.name])
    }

    /// Whether a process listening as `listening` takes the runner's socket for `scenario`.
    static func inherits(_ listening: IntermediaryKind.Listening, scenario: Scenario) -> Bool {
        switch listening {
        case .inheritsSocket: return true
        case .inheritsSocketWhereTemplateSaysListen: return scenario.configBindsListen
        case .bindsItsPort: return false
        }
    }

    private static func environment(_ process: IntermediaryKind.Process) -> [String: String] {
        if case let .inheritsSocket(environment) = process.listening { return environment }
        return [:]
    }
}
