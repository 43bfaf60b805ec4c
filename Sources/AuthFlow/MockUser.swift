import Foundation

/// A user the mock server accepts, with the profile its bootstrap response
/// returns (*synthetic*: the public record does not describe Appian's
/// bootstrap schema).
///
/// Users file format (JSON, UTF-8), `username` and `password` required, the
/// rest optional with the defaults shown:
///
/// ```json
/// { "users": [
///   { "username": "alice", "password": "s3cret",
///     "displayName": "alice", "email": "alice@example.invalid",
///     "locale": "en_US", "timeZone": "UTC" } ] }
/// ```
public struct MockUser: Hashable, Sendable, Codable {
    public var username: String
    public var password: String
    public var displayName: String
    public var email: String
    public var locale: String
    public var timeZone: String

    public init(username: String, password: String, displayName: String? = nil, email: String? = nil,
                locale: String = "en_US", timeZone: String = "UTC") {
        self.username = username
        self.password = password
        self.displayName = displayName ?? username
        self.email = email ?? "\(username)@example.invalid"
        self.locale = locale
        self.timeZone = timeZone
    }

    /// The default demo user: `demo` / `intact-demo`.
    public static let demo = MockUser(username: "demo", password: "intact-demo", displayName: "Demo User",
                                      email: "demo@example.invalid")

    /// Why a users file was refused.
    public enum FileError: Error, Hashable, Sendable, CustomStringConvertible {
        case notJSON(String)
        case missingUsersArray
        case entryNotObject(index: Int)
        case missingField(index: Int, field: String)
        case fieldNotString(index: Int, field: String)
        case duplicateUsername(String)
        case noUsers
        case unreadable(path: String, reason: String)

        public var description: String {
            switch self {
            case .notJSON(let reason): return "users file is not JSON: \(reason)"
            case .missingUsersArray: return "users file must be an object with a \"users\" array"
            case .entryNotObject(let i): return "users[\(i)] is not an object"
            case .missingField(let i, let field): return "users[\(i)] has no \"\(field)\""
            case .fieldNotString(let i, let field): return "users[\(i)].\(field) is not a non-empty string"
            case .duplicateUsername(let name): return "username \"\(name)\" appears twice"
            case .noUsers: return "users file lists no users"
            case .unreadable(let path, let reason): return "cannot read users file \(path): \(reason)"
            }
        }
    }

    /// Parses a users file's bytes (format above).
    public static func parseUsersFile(_ bytes: [UInt8]) throws(FileError) -> [MockUser] {
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: Data(bytes))
        } catch {
            throw .notJSON(error.localizedDescription)
        }
        guard let object = root as? [String: Any], let entries = object["users"] as? [Any] else {
            throw .missingUsersArray
        }
        guard !entries.isEmpty else { throw .noUsers }
        var users: [MockUser] = []
        var seen = Set<String>()
        for (index, entry) in entries.enumerated() {
            guard let fields = entry as? [String: Any] else { throw .entryNotObject(index: index) }
            func string(_ field: String, required: Bool) throws(FileError) -> String? {
                guard let raw = fields[field] else {
                    if required { throw .missingField(index: index, field: field) }
                    return nil
                }
                guard let text = raw as? String, !text.isEmpty else { throw .fieldNotString(index: index, field: field) }
                return text
            }
            let username = try string("username", required: true) ?? ""
            let password = try string("password", required: true) ?? ""
            guard seen.insert(username).inserted else { throw .duplicateUsername(username) }
            users.append(MockUser(username: username, password: password,
                                  displayName: try string("displayName", required: false),
                                  email: try string("email", required: false),
                                  locale: try string("locale", required: false) ?? "en_US",
                                  timeZone: try string("timeZone", required: false) ?? "UTC"))
        }
        return users
    }

    /// Reads and parses a users file. Blocks on disk I/O: never call on an event-loop queue.
    public static func loadUsersFile(atPath path: String) throws(FileError) -> [MockUser] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .unreadable(path: path, reason: "no such file or not readable")
        }
        return try parseUsersFile(Array(data))
    }
}
