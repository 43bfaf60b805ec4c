import TLS

/// Everything a scenario run does, as data: the files it writes in the run
/// directory, the configuration check, the four long-running processes in
/// start order, the client, and the verification. Building a plan does no
/// I/O, so it can be printed for a user to repeat by hand
/// (`intact scenario prepare`) and tested without starting anything.
///
/// Topology, all on 127.0.0.1:
///
///     client → tap A (reverse proxy) → load balancer → tap B (reverse proxy) → mock server
///
/// The server's external URL is tap A's origin, which is what the client
/// sees, so `contextUrl` and `tokenUrl` match the client's requests. The
/// load balancer presents a certificate for 127.0.0.1 issued by the run's CA
/// and verifies tap B's certificate (minted by the same CA) against it.
public struct ScenarioPlan: Hashable, Sendable {
    /// The host the client uses, and the load balancer's and taps' addresses.
    public static let loopbackHost = "127.0.0.1"
    /// The name the load balancer checks tap B's certificate against.
    public static let upstreamName = "127.0.0.1"
    /// The protected resource the client requests first.
    public static let resourcePath = "/suite/rest/protected"
    /// Tap names, in path order: they name the recordings and the report's hops.
    public static let tapNames = ["client", "tap-a", "tap-b", "server"]
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
        /// One recording per tap, by tap name.
        public var recordings: [String: String]
        /// What the client printed with `--json`.
        public var clientOutput: String
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
    /// `nginx -t …` or `haproxy -c …` on the rendered configuration.
    public var configCheck: ProcessCommand
    /// Server, tap B, load balancer, tap A: each keeps running and listens on its port.
    public var services: [ProcessCommand]
    public var client: ProcessCommand
    /// The `intact verify` command equivalent to the verification the runner does.
    public var verify: ProcessCommand

    /// `https://127.0.0.1:PORT`: what the client sees, tap A's origin.
    public var publicOrigin: String { "https://\(Self.loopbackHost):\(ports.tapA)" }

    /// The URL the client requests first.
    public var clientURL: String { publicOrigin + Self.resourcePath }

    /// The port `role` listens on, for the long-running roles.
    public func port(of role: ProcessCommand.Role) -> Int? {
        ports.listeners.first { $0.role == role }?.port
    }

    /// Lays out a run of `scenario` on `ports` in `runDirectory` (absolute),
    /// running `intact` from `intactExecutable` and the load balancer from
    /// `loadBalancerExecutable`, each service listening as `listening` says.
    public init(scenario: Scenario, ports: ScenarioPorts, runDirectory: String, intactExecutable: String,
                loadBalancerExecutable: String, listening: Listening = .bindOwnPorts) {
        let run = runDirectory.hasSuffix("/") ? String(runDirectory.dropLast()) : runDirectory
        let caDirectory = run + "/ca"
        let files = Files(
            caDirectory: caDirectory, caCertificate: caDirectory + "/ca-cert.pem",
            loadBalancerCertificate: run + "/lb-cert.pem",
            loadBalancerKey: caDirectory + "/" + CertificateAuthority.leafKeyFileName,
            loadBalancerBundle: run + "/lb-bundle.pem", clientCertificate: run + "/tap-a-client.p12",
            renderedConfig: run + "/" + scenario.loadBalancer.defaultConfigFileName,
            recordings: Dictionary(uniqueKeysWithValues: Self.tapNames.map { ($0, run + "/\($0).jsonl") }),
            clientOutput: run + "/client.json", reportText: run + "/report.txt", reportHTML: run + "/report.html",
            reportJSON: run + "/report.json")
        self.scenario = scenario
        self.ports = ports
        self.listening = listening
        self.runDirectory = run
        self.files = files

        let host = Self.loopbackHost
        let origin = "https://\(host):\(ports.tapA)"
        let kind = scenario.loadBalancer
        let inherited = listening == .inheritReserved ? ProcessCommand.listenerDescriptor : nil
        placeholderValues = [
            "LISTEN": kind.listenPlaceholder(host: host, port: ports.loadBalancer, inheritedDescriptor: inherited),
            "LISTEN_ADDRESS": host, "LISTEN_PORT": String(ports.loadBalancer),
            "UPSTREAM_ADDRESS": host, "UPSTREAM_PORT": String(ports.tapB), "UPSTREAM_NAME": Self.upstreamName,
            "PUBLIC_HOST": host, "PUBLIC_PORT": String(ports.tapA), "PUBLIC_ORIGIN": origin,
            "CERT": files.loadBalancerCertificate, "KEY": files.loadBalancerKey, "CERT_BUNDLE": files.loadBalancerBundle,
            "CA": files.caCertificate, "RUNDIR": run, "SCENARIO_DIR": scenario.directory,
        ]

        // The load balancer's environment and its check's: HAProxy's check
        // reads `fd@3` too, and nginx's finds its port held by the runner.
        let balancerEnvironment = inherited.map(kind.inheritanceEnvironment(descriptor:)) ?? [:]
        configCheck = ProcessCommand(role: .configCheck, executable: loadBalancerExecutable,
                                     arguments: kind.checkArguments(config: files.renderedConfig, runDirectory: run),
                                     environment: balancerEnvironment, inheritsListener: inherited != nil)
        let recordingOptions = { (tap: String) in ["--record", files.recordings[tap] ?? "", "--tap", tap] }
        let listenOptions = { (port: Int) in
            inherited.map { ["--listen-fd", "\($0)"] } ?? ["--listen", "\(host):\(port)"]
        }
        let server = ProcessCommand(role: .server, executable: intactExecutable, arguments: [
            "server"] + listenOptions(ports.server) + ["--external-url", origin, "--ca-dir", caDirectory,
        ] + (scenario.serverGzips ? ["--gzip"] : []) + recordingOptions("server"), inheritsListener: inherited != nil)
        let tapB = ProcessCommand(role: .tapB, executable: intactExecutable, arguments: [
            "proxy"] + listenOptions(ports.tapB) + ["--mode", "reverse:https://\(host):\(ports.server)",
            "--ca-dir", caDirectory, "--upstream-ca", files.caCertificate,
        ] + scenario.tapB.proxyArguments + recordingOptions("tap-b"), inheritsListener: inherited != nil)
        let loadBalancer = ProcessCommand(role: .loadBalancer, executable: loadBalancerExecutable,
                                          arguments: kind.runArguments(config: files.renderedConfig, runDirectory: run),
                                          environment: balancerEnvironment, inheritsListener: inherited != nil)
        let tapA = ProcessCommand(role: .tapA, executable: intactExecutable, arguments: [
            "proxy"] + listenOptions(ports.tapA) + [
            "--mode", "reverse:\(scenario.tapA.plainHTTP ? "http" : "https")://\(host):\(ports.loadBalancer)",
            "--ca-dir", caDirectory, "--upstream-ca", files.caCertificate,
        ] + (scenario.tapAPresentsClientCertificate ? ["--upstream-client-cert", files.clientCertificate] : [])
            + scenario.tapA.proxyArguments + recordingOptions("tap-a"), inheritsListener: inherited != nil)
        services = [server, tapB, loadBalancer, tapA]
        client = ProcessCommand(role: .client, executable: intactExecutable, arguments: [
            "client", origin + Self.resourcePath, "--ca", files.caCertificate, "--json",
        ] + scenario.clientRequestFields.flatMap { ["--request-field", $0.description] } + scenario.clientBrowserArguments
            + recordingOptions("client"))
        verify = ProcessCommand(role: .verify, executable: intactExecutable, arguments:
            ["verify"] + Self.tapNames.compactMap { files.recordings[$0] }
            + ["--path", Self.tapNames.joined(separator: ","), "--html", files.reportHTML]
            + (scenario.policyFile.map { ["--policy", $0] } ?? []))
    }
}
