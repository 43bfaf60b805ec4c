import ConfigurationFile
import Foundation
import HTTP

/// What a verification accepts besides identical and equivalent messages.
///
/// `strict` (the default) is the document's rule: "both the request and
/// response must remain unmodified" — every difference fails. A policy file
/// may tolerate named fields (`Via`, `X-Forwarded-For`) and named cookies (an
/// affinity cookie); a tolerated difference is still reported, marked with the
/// rule that tolerates it, and never hidden.
///
/// The file is JSON (see `Examples/policies/README.md`):
///
///     {
///       "name": "behind-the-load-balancer",
///       "description": "optional sentence",
///       "tolerate": [
///         {"field": "Via", "changes": ["added"], "message": "request", "reason": "the LB announces itself"},
///         {"cookie": "SERVERID", "changes": ["added", "changed"], "message": "response"}
///       ]
///     }
///
/// Unknown keys are errors, so a misspelt rule cannot silently tolerate nothing.
/// Every error is a `ConfigurationError` naming the file, line and column.
public struct VerificationPolicy: Hashable, Sendable {
    public var name: String
    public var description: String?
    public var tolerations: [Toleration]
    /// Whether requests an intermediary makes itself (health checks) are
    /// allowed; `allow` unless the file says `"intermediaryRequests"`.
    public var intermediaryRequests: IntermediaryRequestRule

    public init(name: String, description: String? = nil, tolerations: [Toleration] = [],
                intermediaryRequests: IntermediaryRequestRule = .allow) {
        self.name = name
        self.description = description
        self.tolerations = tolerations
        self.intermediaryRequests = intermediaryRequests
    }

    /// The document's rule: nothing but identical or equivalent messages.
    public static let strict = VerificationPolicy(
        name: "strict",
        description: "requests and responses must remain unmodified (identical or equivalent) on every hop")

    /// Reads a policy file. Blocks on disk I/O.
    public static func load(path: String) throws(ConfigurationError) -> VerificationPolicy {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ConfigurationError(kind: .unreadable((error as NSError).localizedDescription), position: nil, path: "",
                                     file: path)
        }
        return try decode(data, path: path)
    }

    /// Parses a policy from JSON bytes; `path` names it in errors, and its base name is the default name.
    public static func decode(_ data: Data, path: String) throws(ConfigurationError) -> VerificationPolicy {
        try ConfigurationError.inFile(path) { () throws(ConfigurationError) -> VerificationPolicy in
            try PolicyReader.policy(LocatedJSON.parse(Array(data)),
                                    defaultName: URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent)
        }
    }
}

/// One rule of a policy: a named field or cookie whose named kinds of change
/// are tolerated, in requests, responses or both.
public struct Toleration: Hashable, Sendable, CustomStringConvertible {
    /// What the rule names.
    public enum Subject: Hashable, Sendable {
        /// A field, by its name lowercased.
        case field(String)
        /// A cookie by its exact name, or every name starting with a prefix
        /// when it ends in `*` (`AWSALB*`): a crumb of `Cookie` in requests,
        /// a `Set-Cookie` line in responses. Works on redacted recordings:
        /// cookies are recorded part by part, only their values digested.
        case cookie(String)

        /// Whether the subject names this cookie.
        public func names(cookie name: String) -> Bool {
            guard case .cookie(let pattern) = self else { return false }
            if pattern.hasSuffix("*") { return name.hasPrefix(pattern.dropLast()) }
            return pattern == name
        }
    }

    public enum Change: String, Hashable, Sendable, CaseIterable {
        case added, removed, changed
    }

    public enum Message: String, Hashable, Sendable {
        case request, response
    }

    public var subject: Subject
    public var changes: Set<Change>
    /// Nil: requests and responses.
    public var message: Message?
    /// Why it is tolerated, shown beside each difference it tolerates.
    public var reason: String?

    public init(_ subject: Subject, changes: Set<Change> = [.added], message: Message? = nil, reason: String? = nil) {
        self.subject = subject
        self.changes = changes
        self.message = message
        self.reason = reason
    }

    /// Whether the rule covers this kind of change of this message.
    func covers(_ change: Change, in message: Message) -> Bool {
        changes.contains(change) && (self.message == nil || self.message == message)
    }

    /// `field Via added in requests (the LB announces itself)`.
    public var description: String {
        let what: String
        switch subject {
        case .field(let name): what = "field \(name)"
        case .cookie(let name): what = "cookie \(name)"
        }
        let kinds = Change.allCases.filter(changes.contains).map(\.rawValue).joined(separator: " or ")
        let scope = message.map { " in \($0.rawValue)s" } ?? ""
        return "\(what) \(kinds)\(scope)" + (reason.map { " (\($0))" } ?? "")
    }
}

/// What a policy says about requests an intermediary makes itself (seen
/// behind it, never in front of it): the document's rule is about the app's
/// messages, so `strict` allows them; a policy may forbid them, or allow
/// only some paths (`"intermediaryRequests": ["/health"]`).
public enum IntermediaryRequestRule: Hashable, Sendable, CustomStringConvertible {
    case allow
    case forbid
    /// Allowed when the request's path (without its query) is one of these.
    case paths([String])

    /// The words a policy file may give instead of a list.
    public static let words = ["allow", "forbid"]

    public func allows(target: String) -> Bool {
        switch self {
        case .allow: return true
        case .forbid: return false
        case .paths(let paths):
            let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? target
            return paths.contains(path)
        }
    }

    public var description: String {
        switch self {
        case .allow: return "allowed"
        case .forbid: return "forbidden"
        case .paths(let paths): return "allowed to " + paths.joined(separator: ", ") + " only"
        }
    }
}

/// Reads the JSON object of a policy file. Each object's fields are
/// declared once, in the lists below; adding a field is adding it there and
/// reading it where the object is read.
private enum PolicyReader {
    static let policyFields = ["name", "description", "tolerate", "intermediaryRequests"]
    static let tolerationFields = ["field", "cookie", "changes", "message", "reason"]

    static func policy(_ json: LocatedJSON, defaultName: String) throws(ConfigurationError) -> VerificationPolicy {
        let top = try JSONFieldReader(json, path: "", allowed: policyFields)
        var tolerations: [Toleration] = []
        for rule in try top.objects("tolerate", allowed: tolerationFields) ?? [] {
            tolerations.append(try toleration(rule))
        }
        return VerificationPolicy(name: try top.name("name") ?? defaultName, description: try top.string("description"),
                                  tolerations: tolerations, intermediaryRequests: try intermediaryRule(top))
    }

    /// `"allow"`, `"forbid"`, or a non-empty list of paths, each starting with `/`.
    private static func intermediaryRule(_ top: JSONFieldReader) throws(ConfigurationError) -> IntermediaryRequestRule {
        let key = "intermediaryRequests"
        guard let value = top.value(key) else { return .allow }
        let expected = IntermediaryRequestRule.words.map { "\"\($0)\"" }.joined(separator: ", ")
            + " or a list of allowed paths such as [\"/health\"]"
        switch value.value {
        case .string(let word):
            switch word {
            case "allow": return .allow
            case "forbid": return .forbid
            default: throw top.error(.invalid("unknown value \"\(word)\" (expected \(expected))"), key)
            }
        case .array:
            let paths = try top.strings(key) ?? []
            guard !paths.isEmpty, paths.allSatisfy({ $0.hasPrefix("/") }) else {
                throw top.error(.invalid("a list must hold paths starting with \"/\" (expected \(expected))"), key)
            }
            return .paths(paths)
        default:
            throw top.error(.wrongType(expected: expected, found: value.typeName), key)
        }
    }

    private static func toleration(_ rule: JSONFieldReader) throws(ConfigurationError) -> Toleration {
        let subject: Toleration.Subject
        switch (try rule.string("field"), try rule.string("cookie")) {
        case (let field?, nil):
            guard !field.isEmpty, field.utf8.allSatisfy(isTokenByte) else {
                throw rule.error(.invalid("\"\(field)\" is not a field name"), "field")
            }
            subject = .field(HTTPField.lowercaseASCII(field))
        case (nil, let cookie?):
            guard !cookie.isEmpty, cookie.utf8.allSatisfy(isTokenByte) else {
                throw rule.error(.invalid("\"\(cookie)\" is not a cookie name"), "cookie")
            }
            subject = .cookie(cookie)
        default:
            throw rule.error(.inconsistent("give exactly one of \"field\" or \"cookie\""))
        }
        var changes: Set<Toleration.Change> = [.added]
        if let given = try rule.choices("changes", Toleration.Change.self) {
            guard !given.isEmpty else {
                throw rule.error(.invalid("expected at least one of added, removed, changed"), "changes")
            }
            changes = Set(given)
        }
        return Toleration(subject, changes: changes, message: try rule.choice("message", among: [.request, .response]),
                          reason: try rule.string("reason"))
    }

    /// RFC 9110 `tchar`.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }
}
