import ConfigurationFile

/// Why a scenario could not be run to the end: every case names the file,
/// process or address involved and says what to do, so `intact scenario run`
/// can print it as one line. Errors about the scenario itself (its manifest,
/// its configuration, a port) are raised before any process starts.
public enum ScenarioError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `directory` holds no `scenario.json`.
    case manifestMissing(directory: String)
    /// `scenario.json` (or the policy it names) cannot be read or is not
    /// valid: the error names the file, line, column and field.
    case manifest(ConfigurationError)
    /// The load balancer configuration the manifest names does not exist.
    case configMissing(file: String)
    /// The configuration template uses a placeholder the runner does not fill,
    /// or an unterminated one.
    case configTemplate(file: String, line: Int, reason: String)
    /// The load balancer's own check (`nginx -t`, `haproxy -c`) rejected the rendered configuration.
    case configRejected(tool: String, file: String, output: String)
    /// A program the scenario needs is not installed.
    case toolMissing(name: String, hint: String)
    /// A port the scenario was told to use is taken.
    case portInUse(port: Int, role: String)
    /// Free loopback ports could not be found (`reason` is the system's).
    case portsUnavailable(reason: String)
    /// The run directory could not be prepared.
    case runDirectory(path: String, reason: String)
    /// Certificates for the run could not be created.
    case certificates(reason: String)
    /// `posix_spawn` failed.
    case spawnFailed(executable: String, reason: String)
    /// A process that should keep running exited on its own.
    case exitedBeforeReady(role: String, address: String, termination: ProcessTermination, logTail: String)
    /// A process kept running but closed the listening socket it was handed.
    case droppedListener(role: String, address: String, logTail: String)
    /// An `intact` service did not say it was listening in time.
    case notServing(role: String, seconds: Int, logTail: String)
    /// A process that should finish did not finish in time, and was killed.
    case timedOut(role: String, seconds: Int, logTail: String)
    /// A process finished but its output could not be read as expected.
    case unreadableOutput(role: String, file: String, reason: String)

    public var description: String {
        switch self {
        case let .manifestMissing(directory):
            return "\(directory) is not a scenario: it has no scenario.json"
        case let .manifest(error):
            return error.description
        case let .configMissing(file):
            return "the load balancer configuration \(file) does not exist"
        case let .configTemplate(file, line, reason):
            return "\(file):\(line): \(reason)"
        case let .configRejected(tool, file, output):
            return "\(tool) rejected the configuration rendered from \(file):\n" + Self.indented(output)
        case let .toolMissing(name, hint):
            return "\(name) is not installed (\(hint))"
        case let .portInUse(port, role):
            return "port 127.0.0.1:\(port) (for \(role)) is already in use; choose another --base-port "
                + "or stop what listens there"
        case let .portsUnavailable(reason):
            return "could not reserve free loopback ports: \(reason)"
        case let .runDirectory(path, reason):
            return "cannot prepare the run directory \(path): \(reason)"
        case let .certificates(reason):
            return "cannot create the run's certificates: \(reason)"
        case let .spawnFailed(executable, reason):
            return "cannot start \(executable): \(reason)"
        case let .exitedBeforeReady(role, address, termination, logTail):
            return "\(role) \(termination) while it should serve \(address)"
                + Self.logSuffix(logTail)
        case let .droppedListener(role, address, logTail):
            return "\(role) closed the listening socket it was handed for \(address) "
                + "(does its configuration listen on exactly that address?)" + Self.logSuffix(logTail)
        case let .notServing(role, seconds, logTail):
            return "\(role) did not start serving within \(seconds) s" + Self.logSuffix(logTail)
        case let .timedOut(role, seconds, logTail):
            return "\(role) did not finish within \(seconds) s and was killed" + Self.logSuffix(logTail)
        case let .unreadableOutput(role, file, reason):
            return "cannot read what \(role) wrote to \(file): \(reason)"
        }
    }

    private static func logSuffix(_ tail: String) -> String {
        tail.isEmpty ? " (its log is empty)" : "; the end of its log:\n" + indented(tail)
    }

    private static func indented(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { "    " + $0 }.joined(separator: "\n")
    }
}
