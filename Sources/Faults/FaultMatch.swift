import HTTP
import AuthFlow

/// Where a rule applies. Every criterion that is set must hold; an unset
/// criterion matches anything. `probability` and `times` are decided by the
/// engine after the other criteria hold (see `FaultEngine`).
public struct FaultMatch: Sendable, Hashable {
    /// The message the rule acts on; nil only for connection (TLS) rules.
    public var leg: FaultLeg?
    /// The exchange's auth-flow step is one of these.
    public var steps: Set<AuthStep>?
    /// The request method is one of these (compared in upper case).
    public var methods: Set<String>?
    /// The request path matches.
    public var path: PathPattern?
    /// Fields the rule's leg's head must carry (names, any case).
    public var present: [String]
    /// Fields the rule's leg's head must not carry.
    public var absent: [String]
    /// The response status is one of these (response leg only).
    public var statuses: Set<Int>?
    /// The chance, 0…1, that the rule fires when everything else matches.
    public var probability: Double
    /// The rule fires at most this many times in the engine's life.
    public var times: Int?

    public init(leg: FaultLeg?, steps: Set<AuthStep>? = nil, methods: Set<String>? = nil,
                path: PathPattern? = nil, present: [String] = [], absent: [String] = [],
                statuses: Set<Int>? = nil, probability: Double = 1, times: Int? = nil) {
        self.leg = leg
        self.steps = steps
        self.methods = methods.map { Set($0.map { $0.uppercased() }) }
        self.path = path
        self.present = present
        self.absent = absent
        self.statuses = statuses
        self.probability = probability
        self.times = times
    }

    /// The rule-file names of the criteria that look at messages and are set.
    var messageCriteria: [String] {
        var names: [String] = []
        if steps != nil { names.append("step") }
        if methods != nil { names.append("method") }
        if let path { names.append(path.fieldName) }
        if !present.isEmpty { names.append("present") }
        if !absent.isEmpty { names.append("absent") }
        if statuses != nil { names.append("status") }
        return names
    }

    /// The structural criteria (everything but probability and times).
    /// `fields` are the head fields of the rule's leg; `status` is nil on the request leg.
    func holds(step: AuthStep, request: HTTPRequestHead, fields: HTTPFields, status: Int?) -> Bool {
        if let steps, !steps.contains(step) { return false }
        if let methods, !methods.contains(request.method.rawValue.uppercased()) { return false }
        if let path, !path.matches(request) { return false }
        if present.contains(where: { !fields.contains($0) }) { return false }
        if absent.contains(where: { fields.contains($0) }) { return false }
        if let statuses {
            guard let status, statuses.contains(status) else { return false }
        }
        return true
    }
}

/// A request path pattern.
///
/// A glob matches the path without its query: `*` is any run of characters
/// but `/`, `**` any run including `/`, `?` one character but `/`; the
/// whole path must match. A regex matches anywhere in the path with its
/// query (anchor it with `^…$` to match all of it).
public enum PathPattern: Sendable, Hashable, CustomStringConvertible {
    case glob(String, CompiledRegex)
    case regex(CompiledRegex)

    /// A glob pattern; compiling it cannot fail because every other character is literal.
    public static func glob(_ glob: String) -> PathPattern {
        var pattern = "^"
        var chars = Array(glob)[...]
        while let c = chars.popFirst() {
            switch c {
            case "*" where chars.first == "*":
                chars.removeFirst()
                pattern += ".*"
            case "*": pattern += "[^/]*"
            case "?": pattern += "[^/]"
            default: pattern += CompiledRegex.literal(String(c))
            }
        }
        pattern += "$"
        // Only escaped literals and the three fixed constructs above: always valid.
        guard let regex = try? CompiledRegex(pattern) else { preconditionFailure("glob translation produced \(pattern)") }
        return .glob(glob, regex)
    }

    /// The rule-file field this pattern comes from.
    var fieldName: String {
        switch self {
        case .glob: return "path"
        case .regex: return "pathRegex"
        }
    }

    func matches(_ request: HTTPRequestHead) -> Bool {
        switch self {
        case .glob(_, let regex): return regex.matches(request.pathOnly)
        case .regex(let regex): return regex.matches(request.path)
        }
    }

    public var description: String {
        switch self {
        case .glob(let glob, _): return glob
        case .regex(let regex): return "/\(regex.pattern)/"
        }
    }
}
