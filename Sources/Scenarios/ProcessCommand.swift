import Foundation

/// One program the runner starts, as data: what it is for, what to run and
/// with which arguments. A plan is a list of these, so it can be printed for
/// a user to run by hand exactly as the runner runs it.
public struct ProcessCommand: Hashable, Sendable, CustomStringConvertible {
    /// The part the process plays in a scenario.
    public enum Role: String, Hashable, Sendable, CaseIterable {
        case server, tapB = "tap-b", loadBalancer = "load-balancer", tapA = "tap-a", client
        case configCheck = "config-check", verify

        /// How messages name the role.
        public var displayName: String {
            switch self {
            case .server: return "the mock server"
            case .tapB: return "tap B"
            case .loadBalancer: return "the load balancer"
            case .tapA: return "tap A"
            case .client: return "the client"
            case .configCheck: return "the configuration check"
            case .verify: return "intact verify"
            }
        }
    }

    public var role: Role
    /// An absolute path.
    public var executable: String
    public var arguments: [String]

    public init(role: Role, executable: String, arguments: [String]) {
        self.role = role
        self.executable = executable
        self.arguments = arguments
    }

    /// The command as a POSIX shell line, each word quoted when it needs it.
    public var description: String {
        ([executable] + arguments).map(Self.shellQuoted).joined(separator: " ")
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
