import Foundation

/// One program the runner starts, as data: what it is for, what to run and
/// with which arguments. A plan is a list of these, so it can be printed for
/// a user to run by hand exactly as the runner runs it.
public struct ProcessCommand: Hashable, Sendable, CustomStringConvertible {
    /// The part the process plays in a scenario.
    public enum Role: String, Hashable, Sendable, CaseIterable {
        case server, tapB = "tap-b", loadBalancer = "load-balancer", tapA = "tap-a", client
        /// A process of the intermediary behind the one tap A reaches (Varnish behind hitch).
        case innerIntermediary = "inner-intermediary"
        /// A command that prepares the intermediary's files (Squid's certificate database).
        case setup
        case configCheck = "config-check", verify

        /// How messages name the role.
        public var displayName: String {
            switch self {
            case .server: return "the mock server"
            case .tapB: return "tap B"
            case .loadBalancer: return "the load balancer"
            case .innerIntermediary: return "the intermediary's inner process"
            case .setup: return "the intermediary's setup"
            case .tapA: return "tap A"
            case .client: return "the client"
            case .configCheck: return "the configuration check"
            case .verify: return "intact verify"
            }
        }
    }

    /// The descriptor at which a child finds the listening socket the runner
    /// reserved for it (`--listen-fd 3`, HAProxy's `bind fd@3`, `NGINX="3;"`).
    public static let listenerDescriptor: Int32 = 3

    public var role: Role
    /// An absolute path.
    public var executable: String
    public var arguments: [String]
    /// Variables set for the child on top of the runner's environment (nginx's `NGINX`).
    public var environment: [String: String]
    /// True when the child expects the runner's reserved listening socket at
    /// `listenerDescriptor` instead of binding its port itself.
    public var inheritsListener: Bool
    /// How messages name the process when its role does not say enough (`Apache httpd`, `hitch`).
    public var name: String?

    public init(role: Role, executable: String, arguments: [String], environment: [String: String] = [:],
                inheritsListener: Bool = false, name: String? = nil) {
        self.role = role
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.inheritsListener = inheritsListener
        self.name = name
    }

    /// `Apache httpd`, `tap B`: its name, else its role's.
    public var displayName: String { name ?? role.displayName }

    /// The command as a POSIX shell line, each word quoted when it needs it,
    /// after its environment assignments.
    public var description: String {
        let assignments = environment.sorted { $0.key < $1.key }.map { "\($0.key)=" + Self.shellQuoted($0.value) }
        return (assignments + ([executable] + arguments).map(Self.shellQuoted)).joined(separator: " ")
    }

    /// `word` unchanged when the shell reads it as one literal word, else in single quotes.
    static func shellQuoted(_ word: String) -> String {
        let safe = word.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                || "-_./:=,@+%".unicodeScalars.contains(scalar))
        }
        if safe && !word.isEmpty { return word }
        return "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
