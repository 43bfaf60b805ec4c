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
    public static func load(path: String) throws -> VerificationPolicy {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw PolicyError(path: path, reason: "cannot read: \((error as NSError).localizedDescription)")
        }
        return try decode(data, path: path)
    }

    /// Parses a policy from JSON bytes; `path` names it in errors.
    public static func decode(_ data: Data, path: String) throws -> VerificationPolicy {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw PolicyError(path: path, reason: "not JSON")
        }
        var reader = PolicyReader(path: path, text: String(decoding: data, as: UTF8.self))
        return try reader.policy(object)
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

/// A policy file that cannot be used, naming the file (and line, when known) and what is wrong.
public struct PolicyError: Error, Hashable, Sendable, CustomStringConvertible {
    public var path: String
    /// The 1-based line the problem is on, when known.
    public var line: Int?
    public var reason: String

    public init(path: String, line: Int? = nil, reason: String) {
        self.path = path
        self.line = line
        self.reason = reason
    }

    public var description: String { "\(path)\(line.map { ":\($0)" } ?? ""): policy: \(reason)" }
}

/// Reads the JSON object of a policy file, checking every key and type.
private struct PolicyReader {
    let path: String
    /// The file's text, to name the line of a top-level key in errors.
    let text: String

    func fail(_ reason: String, line: Int? = nil) -> PolicyError { PolicyError(path: path, line: line, reason: reason) }

    mutating func policy(_ object: Any) throws -> VerificationPolicy {
        let top = try dictionary(object, at: "the top level", keys: ["name", "description", "tolerate", "intermediaryRequests"])
        let name = try string(top["name"], at: "name") ?? URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        let description = try string(top["description"], at: "description")
        let intermediaryRequests = try intermediaryRule(top["intermediaryRequests"])
        var tolerations: [Toleration] = []
        if let rules = top["tolerate"] {
            guard let list = rules as? [Any] else { throw fail("tolerate: expected a list of rules") }
            tolerations = try list.enumerated().map { try toleration($1, at: "tolerate[\($0)]") }
        }
        return VerificationPolicy(name: name, description: description, tolerations: tolerations,
                                  intermediaryRequests: intermediaryRequests)
    }

    /// `"allow"`, `"forbid"`, or a non-empty list of paths (each starting with `/`).
    private func intermediaryRule(_ value: Any?) throws -> IntermediaryRequestRule {
        guard let value else { return .allow }
        let expected = "expected " + IntermediaryRequestRule.words.map { "\"\($0)\"" }.joined(separator: ", ")
            + " or a list of allowed paths such as [\"/health\"]"
        let line = line(ofKey: "intermediaryRequests")
        switch value {
        case let word as String:
            switch word {
            case "allow": return .allow
            case "forbid": return .forbid
            default: throw fail("intermediaryRequests: unknown value \"\(word)\" (\(expected))", line: line)
            }
        case let list as [Any]:
            let paths = list.compactMap { $0 as? String }
            guard !paths.isEmpty, paths.count == list.count, paths.allSatisfy({ $0.hasPrefix("/") }) else {
                throw fail("intermediaryRequests: a list must hold paths starting with \"/\" (\(expected))", line: line)
            }
            return .paths(paths)
        default:
            throw fail("intermediaryRequests: \(expected)", line: line)
        }
    }

    /// The 1-based line where `"key"` first appears in the file; nil when it does not.
    private func line(ofKey key: String) -> Int? {
        guard let range = text.range(of: "\"\(key)\"") else { return nil }
        return text[..<range.lowerBound].reduce(1) { $1 == "\n" ? $0 + 1 : $0 }
    }

    private func toleration(_ object: Any, at place: String) throws -> Toleration {
        let rule = try dictionary(object, at: place, keys: ["field", "cookie", "changes", "message", "reason"])
        let subject: Toleration.Subject
        switch (try string(rule["field"], at: place + ".field"), try string(rule["cookie"], at: place + ".cookie")) {
        case (let field?, nil):
            guard !field.isEmpty, field.utf8.allSatisfy(PolicyReader.isTokenByte) else {
                throw fail("\(place).field: \"\(field)\" is not a field name")
            }
            subject = .field(HTTPField.lowercaseASCII(field))
        case (nil, let cookie?):
            guard !cookie.isEmpty, cookie.utf8.allSatisfy(PolicyReader.isTokenByte) else {
                throw fail("\(place).cookie: \"\(cookie)\" is not a cookie name")
            }
            subject = .cookie(cookie)
        default:
            throw fail("\(place): give exactly one of \"field\" or \"cookie\"")
        }
        var changes: Set<Toleration.Change> = [.added]
        if let given = rule["changes"] {
            guard let words = given as? [String], !words.isEmpty else {
                throw fail("\(place).changes: expected a non-empty list of \"added\", \"removed\", \"changed\"")
            }
            changes = try Set(words.map { word in
                guard let change = Toleration.Change(rawValue: word) else {
                    throw fail("\(place).changes: unknown change \"\(word)\" (expected added, removed or changed)")
                }
                return change
            })
        }
        var message: Toleration.Message?
        if let word = try string(rule["message"], at: place + ".message") {
            guard let parsed = Toleration.Message(rawValue: word) else {
                throw fail("\(place).message: expected \"request\" or \"response\", found \"\(word)\"")
            }
            message = parsed
        }
        return Toleration(subject, changes: changes, message: message, reason: try string(rule["reason"], at: place + ".reason"))
    }

    private func dictionary(_ object: Any, at place: String, keys: Set<String>) throws -> [String: Any] {
        guard let dictionary = object as? [String: Any] else { throw fail("\(place): expected an object") }
        if let unknown = dictionary.keys.sorted().first(where: { !keys.contains($0) }) {
            throw fail("\(place): unknown key \"\(unknown)\" (expected \(keys.sorted().joined(separator: ", ")))")
        }
        return dictionary
    }

    private func string(_ value: Any?, at place: String) throws -> String? {
        guard let value else { return nil }
        guard let text = value as? String else { throw fail("\(place): expected a string") }
        return text
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
