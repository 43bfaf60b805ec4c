/// A mistake in how a command was invoked: an unknown or repeated option, a
/// missing value or argument, a malformed value. Reported as
/// `intact: <message>` followed by the command's usage, exit status 2.
struct UsageError: Error, CustomStringConvertible {
    let message: String
    /// The command whose usage is printed after the message.
    let path: CommandPath

    init(_ message: String, path: CommandPath) {
        self.message = message
        self.path = path
    }

    var description: String { message }
}

/// A command that ran and failed for a reason the user can act on (not a
/// usage mistake): printed as `intact: <message>`, exit status 1.
struct CommandFailure: Error, CustomStringConvertible {
    let message: String

    init(_ message: String) { self.message = message }

    var description: String { message }
}

/// The exit statuses `intact` uses.
enum ExitStatus {
    static let success: Int32 = 0
    /// The command ran and failed.
    static let failure: Int32 = 1
    /// The command line was malformed.
    static let usage: Int32 = 2
}
