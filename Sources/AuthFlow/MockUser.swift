import ConfigurationFile
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

    /// The fields of the users file's objects, declared once: adding a field is adding it here and reading it below.
    static let fileFields = ["users"]
    static let userFields = ["username", "password", "displayName", "email", "locale", "timeZone"]

    /// Parses a users file's bytes (format above); `file` names it in errors,
    /// which give the line, column and field (`ConfigurationError`).
    public static func parseUsersFile(_ bytes: [UInt8], file: String? = nil) throws(ConfigurationError) -> [MockUser] {
        try ConfigurationError.inFile(file) { () throws(ConfigurationError) -> [MockUser] in
            let top = try JSONFieldReader(LocatedJSON.parse(bytes), path: "", allowed: fileFields)
            let entries = try top.required("users") { (key: String) throws(ConfigurationError) in
                try top.objects(key, allowed: userFields)
            }
            guard !entries.isEmpty else { throw top.error(.invalid("the users file lists no users"), "users") }
            var users: [MockUser] = []
            for entry in entries {
                let username = try entry.required("username", entry.name)
                guard !users.contains(where: { $0.username == username }) else {
                    throw entry.error(.invalid("username \"\(username)\" appears twice"), "username")
                }
                users.append(MockUser(username: username, password: try entry.required("password", entry.name),
                                      displayName: try entry.name("displayName"), email: try entry.name("email"),
                                      locale: try entry.name("locale") ?? "en_US",
                                      timeZone: try entry.name("timeZone") ?? "UTC"))
            }
            return users
        }
    }

    /// Reads and parses a users file. Blocks on disk I/O: never call on an event-loop queue.
    public static func loadUsersFile(atPath path: String) throws(ConfigurationError) -> [MockUser] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(kind: .unreadable("no such file or not readable"), position: nil, path: "", file: path)
        }
        return try parseUsersFile(Array(data), file: path)
    }
}
