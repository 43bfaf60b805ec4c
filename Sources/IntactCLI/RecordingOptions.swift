import Evidence
import Hashing

/// The options every recording tap shares for its secrets: the digest key
/// (`--digest-key`) and further secret names (`--secret-name`), and the
/// `RedactionPolicy` they make with `--record-secrets`.
enum RecordingOptions {
    static let options: [CommandOption] = [
        .value("digest-key", valueName: "FILE",
               help: "key for the HMAC digests of secrets, shared by the taps of a setup "
                   + "(default: \(DigestKeyFile.fileName) beside the CA; made if missing, 32 bytes, mode 0600)"),
        .value("secret-name", valueName: "NAME",
               help: "also digest this header field, query parameter or form field (repeatable)", isRepeatable: true),
    ]

    /// The policy the options ask for. Loads (or makes) the digest key unless
    /// secrets are recorded in clear; a refused key file is a `CommandFailure`
    /// naming the reason. Blocks on disk I/O.
    ///
    /// - Parameters:
    ///   - keyDirectory: where the key lives by default (the CA's directory).
    ///   - announce: told when a key file was made now.
    static func redaction(_ arguments: ParsedArguments, keyDirectory: String,
                          announce: (String) -> Void) throws -> RedactionPolicy {
        let names = arguments.values("secret-name")
        if let empty = names.first(where: { $0.isEmpty || $0.contains("=") || $0.contains("&") }) {
            throw UsageError("option --secret-name expects a field or parameter name, got '\(empty)'", path: arguments.path)
        }
        if arguments.flag("record-secrets") {
            return RedactionPolicy(recordSecrets: true, extraSecretNames: names)
        }
        let path = arguments.value("digest-key") ?? DigestKeyFile.path(besideCA: keyDirectory)
        do {
            let (digester, created) = try DigestKeyFile.loadOrCreate(at: path)
            if created { announce("made the digest key \(path) (key \(digester.fingerprint)); give it to every tap of this setup") }
            return RedactionPolicy(extraSecretNames: names, digester: digester)
        } catch {
            throw CommandFailure("\(error)")
        }
    }
}
