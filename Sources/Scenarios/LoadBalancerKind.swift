import Foundation

/// The load balancers a scenario can configure, and how the runner drives
/// each: in the foreground as a single process it owns by PID, with every
/// run-time file (pid, logs, temporary files) in the run directory.
public enum LoadBalancerKind: String, Hashable, Sendable, Codable, CaseIterable {
    case nginx
    case haproxy

    /// The program's name, and the name of its Debian package.
    public var programName: String { rawValue }

    /// The conventional configuration file name, used when the manifest names none.
    public var defaultConfigFileName: String {
        switch self {
        case .nginx: return "nginx.conf"
        case .haproxy: return "haproxy.cfg"
        }
    }

    /// How to read the product's name in messages.
    public var displayName: String {
        switch self {
        case .nginx: return "nginx"
        case .haproxy: return "HAProxy"
        }
    }

    /// The arguments that check `config` without serving (`nginx -t`, `haproxy -c`).
    public func checkArguments(config: String, runDirectory: String) -> [String] {
        switch self {
        case .nginx: return ["-t"] + nginxArguments(config: config, runDirectory: runDirectory)
        case .haproxy: return ["-c", "-f", config]
        }
    }

    /// The arguments that serve `config` in the foreground: nginx with
    /// `daemon off;`, one worker, and its prefix, error log and pid file in
    /// the run directory; HAProxy with `-db` (no daemon, no master-worker).
    ///
    /// nginx keeps its master process: in single-process mode
    /// (`master_process off`) nginx 1.22 dies of SIGSEGV at start when it
    /// inherits a listening socket through `NGINX`, as the runner hands it
    /// one. The runner stops the master with SIGTERM (it stops the worker);
    /// a SIGKILL goes to the process group, the worker included.
    public func runArguments(config: String, runDirectory: String) -> [String] {
        switch self {
        case .nginx: return nginxArguments(config: config, runDirectory: runDirectory)
        case .haproxy: return ["-db", "-f", config]
        }
    }

    private func nginxArguments(config: String, runDirectory: String) -> [String] {
        let prefix = runDirectory.hasSuffix("/") ? runDirectory : runDirectory + "/"
        return ["-p", prefix, "-c", config, "-e", prefix + "nginx-error.log",
                "-g", "daemon off; master_process on; worker_processes 1; pid \(prefix)nginx.pid;"]
    }

    /// What hands the load balancer the listening socket the runner reserved
    /// at `descriptor`: nginx reads inherited sockets from its `NGINX`
    /// variable (`"3;"`, the mechanism of its binary upgrade) and serves one
    /// where its configuration's `listen` names the same address and port;
    /// HAProxy needs nothing here, its configuration binds `fd@3` (`{{LISTEN}}`).
    public func inheritanceEnvironment(descriptor: Int32) -> [String: String] {
        switch self {
        case .nginx: return ["NGINX": "\(descriptor);"]
        case .haproxy: return [:]
        }
    }

    /// The value of `{{LISTEN}}`: where the configuration listens. HAProxy
    /// given the runner's socket binds `fd@N`; nginx must name the address
    /// and port of the socket it inherits, so it gets `ADDRESS:PORT` either way.
    public func listenPlaceholder(host: String, port: Int, inheritedDescriptor: Int32?) -> String {
        switch (self, inheritedDescriptor) {
        case (.haproxy, let descriptor?): return "fd@\(descriptor)"
        default: return "\(host):\(port)"
        }
    }

    /// The program's absolute path: the first match in `PATH`, then in the
    /// system directories Debian installs servers into (`/usr/sbin` is not
    /// on every user's `PATH`).
    public func locate(environment: [String: String] = ProcessInfo.processInfo.environment) throws(ScenarioError) -> String {
        let searchPath = (environment["PATH"] ?? "").split(separator: ":").map(String.init)
            + ["/usr/sbin", "/usr/local/sbin", "/sbin"]
        for directory in searchPath where !directory.isEmpty {
            let candidate = directory + "/" + programName
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw .toolMissing(name: programName, hint: "install it: apt-get install \(programName), or run make deps")
    }
}
