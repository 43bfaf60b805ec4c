import Evidence

/// The options every recording tap shares for its secrets, `--digest-key`
/// and `--secret-name`, and the `RedactionPolicy` they make with
/// `--record-secrets`.
struct RecordingOptions: OptionGroup {
    let digestKey = Option.optional(
        "digest-key", .string("FILE"),
        help: "key of the HMAC digests of secrets and of every message, shared by the taps of a setup "
            + "(default: \(DigestKeyFile.fileName) beside the CA; made if missing: 32 bytes, mode 0600)")
    let secretNames = Option.repeatable("secret-name", .string("NAME"),
                                        help: "also digest this header field, query parameter or form field")

    /// The policy the options ask for. Loads (or makes) the digest key, also
    /// when secrets are recorded in clear: every digest of message content is
    /// keyed with it, so the taps of a setup compare whether or not each keeps
    /// secrets in clear. A refused key file is a `CommandFailure` naming the
    /// reason. Blocks on disk I/O.
    ///
    /// - Parameters:
    ///   - keyDirectory: where the key lives by default (the CA's directory).
    ///   - announce: told when a key file was made now.
    func redaction(_ arguments: ParsedArguments, recordSecrets: Bool, keyDirectory: String,
                   announce: (String) -> Void) throws -> RedactionPolicy {
        let names = arguments[secretNames]
        if let bad = names.first(where: { $0.isEmpty || $0.contains("=") || $0.contains("&") }) {
            throw UsageError("option --secret-name expects a field or parameter name, got '\(bad)'", path: arguments.path)
        }
        let path = arguments[digestKey] ?? DigestKeyFile.path(besideCA: keyDirectory)
        do {
            let (digester, created) = try DigestKeyFile.loadOrCreate(at: path)
            if created { announce("made the digest key \(path) (key \(digester.fingerprint)); give it to every tap of this setup") }
            return RedactionPolicy(recordSecrets: recordSecrets, extraSecretNames: names, digester: digester)
        } catch {
            throw CommandFailure("\(error)")
        }
    }

    /// The first of these options given, for "needs --record" errors.
    func firstGiven(_ arguments: ParsedArguments) -> String? {
        if arguments.isGiven(digestKey) { return digestKey.long }
        if arguments.isGiven(secretNames) { return secretNames.long }
        return nil
    }
}
