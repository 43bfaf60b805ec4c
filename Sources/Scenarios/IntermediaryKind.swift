import Foundation

/// One product a scenario can put between the taps, as data: which Debian
/// packages provide it, how to prepare its run-time files, check a
/// configuration and run it in the foreground, where it listens, and the
/// placeholders its configuration template may use. The runner knows no
/// product by name; everything product-specific is here
/// (`IntermediaryKind.builtIn` holds the shipped kinds, `command` builds one
/// from a scenario's own commands).
///
/// Every command is a `CommandTemplate` whose `{{PLACEHOLDERS}}` the plan
/// fills (`{{CONFIG}}`, `{{WORKDIR}}`, `{{LISTEN_PORT}}`…), so a plan can be
/// printed and repeated by hand exactly as the runner runs it. Every
/// run-time file a kind writes lives in the run directory: `{{WORKDIR}}` is
/// `RUNDIR/<kind name>`, created before anything runs.
public struct IntermediaryKind: Hashable, Sendable {
    /// Where the product sits on the path.
    public enum Topology: String, Hashable, Sendable {
        /// `client → tap A (reverse) → product → tap B (reverse) → server`: a load balancer or reverse proxy.
        case reverse
        /// `client → tap A (forward, --upstream-proxy the product) → product → tap B (reverse) → server`:
        /// a forward proxy that tunnels (CONNECT) or inspects TLS.
        case forward
    }

    /// How a process of the product comes by its listening socket.
    public enum Listening: Hashable, Sendable {
        /// It inherits the socket the runner reserved at descriptor 3, told
        /// so by these environment variables (nginx: `NGINX=3;`) or by its
        /// configuration (HAProxy: `bind fd@3`, the value of `{{LISTEN}}`).
        case inheritsSocket(environment: [String: String])
        /// It inherits the socket when its template binds `{{LISTEN}}`
        /// (`fd@3` under the runner: HAProxy), and binds the port itself
        /// when the template names `{{LISTEN_ADDRESS}}:{{LISTEN_PORT}}`, as
        /// templates written before `{{LISTEN}}` did.
        case inheritsSocketWhereTemplateSaysListen
        /// It binds the port itself: the runner releases its reservation
        /// just before the start and waits until the port listens (a
        /// product that never listens is an error naming it and its log).
        case bindsItsPort
    }

    /// One process of the product, started in order; each listens on one port.
    public struct Process: Hashable, Sendable {
        /// How messages name it (`hitch`, `Varnish`).
        public var name: String
        public var command: CommandTemplate
        /// True for the process tap A connects to (`{{LISTEN_PORT}}`); false
        /// for one behind it on `{{INNER_PORT}}` (Varnish behind hitch).
        public var listensOnPublicPort: Bool
        public var listening: Listening

        public init(name: String, command: CommandTemplate, listensOnPublicPort: Bool = true,
                    listening: Listening = .bindsItsPort) {
            self.name = name
            self.command = command
            self.listensOnPublicPort = listensOnPublicPort
            self.listening = listening
        }
    }

    /// A file the kind writes before its setup commands, from a template.
    public struct GeneratedFile: Hashable, Sendable {
        /// Its path, a template (`{{WORKDIR}}/runroot.yaml`).
        public var path: String
        public var text: String
        /// Written only when the scenario's own files did not provide it.
        public var unlessProvided: Bool

        public init(path: String, text: String, unlessProvided: Bool = false) {
            self.path = path
            self.text = text
            self.unlessProvided = unlessProvided
        }
    }

    /// `nginx`, `apache`: what `scenario.json` names.
    public var name: String
    /// `Apache httpd`: how messages name the product.
    public var displayName: String
    /// The Debian packages that provide its programs, named when one is missing.
    public var packages: [String]
    /// The configuration template's file name when the manifest names none.
    public var defaultConfigFileName: String
    public var topology: Topology
    /// False when it speaks plain HTTP to its backend: tap B then takes
    /// plain HTTP (`intact proxy --listen-plain`) on `{{UPSTREAM_PORT}}`.
    public var upstreamTLS: Bool
    /// Where the rendered configuration (and the scenario's other files) go, a template.
    public var configDirectory: String
    /// Directories created before anything runs, templates (`{{WORKDIR}}/log`).
    public var directories: [String]
    /// The user that must own `{{WORKDIR}}` because the product drops to it
    /// (Squid's `cache_effective_user proxy`); the run directory is then
    /// made traversable (0711) and the run's CA certificate is copied into
    /// `{{WORKDIR}}` for it to read (`{{CA}}` names the copy).
    public var workUser: String?
    public var generatedFiles: [GeneratedFile]
    /// A directory of the package's shipped configuration: each file in it
    /// the scenario does not provide is copied into `configDirectory`
    /// (Traffic Server's many files, of which a scenario changes three).
    public var copiesDefaultsFrom: String?
    /// Run in order after the files are written, before the check (Squid's certificate database).
    public var setup: [CommandTemplate]
    /// Checks the rendered configuration without serving; nil when the product has no such mode.
    public var check: CommandTemplate?
    /// The processes, in start order; the last listens on `{{LISTEN_PORT}}`.
    public var processes: [Process]
    /// Placeholders only this kind's templates may use, beyond `ConfigTemplate.commonPlaceholders`.
    public var extraPlaceholders: [String]
    /// Log files the product writes besides its standard error, templates:
    /// their last lines go into its error messages.
    public var logFiles: [String]
    /// True for a forward proxy that inspects TLS: the run makes it its own
    /// CA (`{{BUMP_CA_CERT}}`, `{{BUMP_CA_KEY}}`), which tap A trusts.
    public var bumpsTLS: Bool
    /// A directory (template) where a TLS-inspecting product keeps the
    /// certificates it minted (Squid's certgen database): a certificate tap
    /// A got that is among them proves the product re-originated TLS.
    public var mintedCertificates: String?

    public init(name: String, displayName: String, packages: [String], defaultConfigFileName: String,
                topology: Topology = .reverse, upstreamTLS: Bool = true, configDirectory: String = "{{RUNDIR}}",
                directories: [String] = [], workUser: String? = nil, generatedFiles: [GeneratedFile] = [],
                copiesDefaultsFrom: String? = nil, setup: [CommandTemplate] = [], check: CommandTemplate?, processes: [Process],
                extraPlaceholders: [String] = [], logFiles: [String] = [], bumpsTLS: Bool = false, mintedCertificates: String? = nil) {
        self.name = name
        self.displayName = displayName
        self.packages = packages
        self.defaultConfigFileName = defaultConfigFileName
        self.topology = topology
        self.upstreamTLS = upstreamTLS
        self.configDirectory = configDirectory
        self.directories = directories
        self.workUser = workUser
        self.generatedFiles = generatedFiles
        self.copiesDefaultsFrom = copiesDefaultsFrom
        self.setup = setup
        self.check = check
        self.processes = processes
        self.extraPlaceholders = extraPlaceholders
        self.logFiles = logFiles
        self.bumpsTLS = bumpsTLS
        self.mintedCertificates = mintedCertificates
    }

    /// Every program the kind runs (setup, check, processes), in order, without duplicates.
    public var programs: [String] {
        var seen: [String] = []
        for program in (setup + [check].compactMap { $0 } + processes.map(\.command)).map(\.program)
            where !seen.contains(program) {
            seen.append(program)
        }
        return seen
    }

    /// True when a process listens on `{{INNER_PORT}}` behind the public one.
    public var usesInnerPort: Bool { processes.contains { !$0.listensOnPublicPort } }

    /// The placeholders this kind's templates may use.
    public var placeholders: [String] {
        ConfigTemplate.commonPlaceholders.map(\.name) + extraPlaceholders
    }

    /// Each program's absolute path: the first match in `PATH`, then in the
    /// system directories Debian installs servers into (`/usr/sbin` is not
    /// on every user's `PATH`; Squid's helpers live in `/usr/lib/squid`).
    /// A missing program is `.toolMissing`, naming the package to install.
    public func locatePrograms(environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(ScenarioError) -> [String: String] {
        var found: [String: String] = [:]
        for program in programs { found[program] = try locate(program, environment: environment) }
        return found
    }

    private func locate(_ program: String, environment: [String: String]) throws(ScenarioError) -> String {
        if program.hasPrefix("/") {
            if FileManager.default.isExecutableFile(atPath: program) { return program }
        } else {
            let searchPath = (environment["PATH"] ?? "").split(separator: ":").map(String.init)
                + ["/usr/sbin", "/usr/local/sbin", "/sbin", "/usr/bin", "/bin"]
            for directory in searchPath where !directory.isEmpty {
                let candidate = directory + "/" + program
                if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            }
        }
        let install = packages.isEmpty ? "install the product that provides it"
            : "install the Debian package\(packages.count == 1 ? "" : "s") \(packages.joined(separator: " ")): "
                + "apt-get install \(packages.joined(separator: " ")), or make test-deps"
        throw .toolMissing(name: program, hint: "\(displayName) needs it; \(install)")
    }
}

/// A command line with `{{PLACEHOLDERS}}` in its words and environment values.
public struct CommandTemplate: Hashable, Sendable {
    /// A program name looked up in `PATH` (and the system directories), or an absolute path.
    public var program: String
    public var arguments: [String]
    public var environment: [String: String]

    public init(_ program: String, _ arguments: [String], environment: [String: String] = [:]) {
        self.program = program
        self.arguments = arguments
        self.environment = environment
    }

    /// The command for `role`, every placeholder filled from `values`.
    /// Throws `.configTemplate` naming `origin` for an unknown placeholder.
    func rendered(role: ProcessCommand.Role, name: String? = nil, executables: [String: String],
                  values: [String: String], origin: String, inheritsListener: Bool = false,
                  extraEnvironment: [String: String] = [:]) throws(ScenarioError) -> ProcessCommand {
        func fill(_ word: String) throws(ScenarioError) -> String {
            try ConfigTemplate(file: origin, text: word).render(values)
        }
        var arguments: [String] = []
        for word in self.arguments { arguments.append(try fill(word)) }
        var environment = extraEnvironment
        for (key, value) in self.environment { environment[key] = try fill(value) }
        return ProcessCommand(role: role, executable: executables[program] ?? program, arguments: arguments,
                              environment: environment, inheritsListener: inheritsListener, name: name)
    }
}
