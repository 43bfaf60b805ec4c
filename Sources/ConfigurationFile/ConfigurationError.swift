/// Why a configuration file (fault rules, a verification policy,
/// `scenario.json`) was refused, and exactly where: the file, line and
/// column, what the value belongs to (a rule), and the JSON path of the
/// offending value (`rules[1].match.leg`).
public struct ConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// The file could not be read (the system's reason).
        case unreadable(String)
        /// The file is not JSON.
        case syntax(String)
        /// A field this object does not have; `allowed` lists the ones it has.
        case unknownField(String, allowed: [String])
        case missingField(String)
        case wrongType(expected: String, found: String)
        /// A value outside its range; `allowed` says which range.
        case outOfRange(String, allowed: String)
        /// A name that is not one of `allowed` (a leg, a step, an action).
        case unknownValue(String, allowed: [String])
        case invalidRegex(pattern: String, reason: String)
        /// A value that is not acceptable, for the reason given ("\"a b\" is not a field name").
        case invalid(String)
        /// Values that do not fit together (a status match on the request leg).
        case inconsistent(String)
    }

    public var kind: Kind
    /// Where the offending value starts; nil when the file could not be read.
    public var position: SourcePosition?
    /// What the value belongs to, for messages (`rule 2 ("strip")`); nil for none.
    public var context: String?
    /// The JSON path of the value, empty for the document itself.
    public var path: String
    /// The file name, for messages; set by whoever read the file (see `inFile`).
    public var file: String?

    public init(kind: Kind, position: SourcePosition?, context: String? = nil, path: String, file: String? = nil) {
        self.kind = kind
        self.position = position
        self.context = context
        self.path = path
        self.file = file
    }

    /// Runs `read`, naming `file` in any error it throws.
    public static func inFile<T>(_ file: String?, _ read: () throws(ConfigurationError) -> T) throws(ConfigurationError) -> T {
        do {
            return try read()
        } catch {
            var located = error
            located.file = file
            throw located
        }
    }

    /// `rules.json:7:15: rule 2 ("strip") at rules[1].match: unknown field "lge" (allowed: leg, step, …)`
    public var description: String {
        var place = file ?? "input"
        if let position { place += ":\(position.line):\(position.column)" }
        var about = context.map { " " + $0 } ?? ""
        if !path.isEmpty { about += " at \(path)" }
        return place + (about.isEmpty ? "" : ":" + about) + ": " + message
    }

    /// The problem itself, without the place.
    public var message: String {
        switch kind {
        case .unreadable(let reason): return "cannot read: \(reason)"
        case .syntax(let text): return "not valid JSON: \(text)"
        case .unknownField(let field, let allowed): return "unknown field \"\(field)\" (allowed: \(allowed.joined(separator: ", ")))"
        case .missingField(let field): return "missing field \"\(field)\""
        case .wrongType(let expected, let found): return "expected \(expected), found \(found)"
        case .outOfRange(let value, let allowed): return "\(value) is out of range (\(allowed))"
        case .unknownValue(let value, let allowed): return "unknown value \"\(value)\" (one of: \(allowed.joined(separator: ", ")))"
        case .invalidRegex(let pattern, let reason): return "regex \"\(pattern)\" does not compile: \(reason)"
        case .invalid(let text), .inconsistent(let text): return text
        }
    }
}
