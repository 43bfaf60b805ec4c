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

    /// The arguments that serve `config` in the foreground as one process:
    /// nginx with `daemon off; master_process off;` and its prefix, error log
    /// and pid file in the run directory; HAProxy with `-db` (no daemon, no
    /// master-worker).
    public func runArguments(config: String, runDirectory: String) -> [String] {
        switch self {
        case .nginx: return nginxArguments(config: config, runDirectory: runDirectory)
        case .haproxy: return ["-db", "-f", config]
        }
    }

    private func nginxArguments(config: String, runDirectory: String) -> [String] {
        let prefix = runDirectory.hasSuffix("/") ? runDirectory : runDirectory + "/"
        return ["-p", prefix, "-c", config, "-e", prefix + "nginx-error.log",
                "-g", "daemon off; master_process off; pid \(prefix)nginx.pid;"]
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
