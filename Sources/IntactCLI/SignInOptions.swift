import AuthFlow
import Evidence
import Foundation
import SignIn

/// Options `intact server` and `intact client` share: the *synthetic* token
/// POST format (both sides must agree on it) and how the tap records.
enum SignInOptions {
    /// `--token-field`, `--verifier-field`, `--token-encoding`.
    struct TokenPostGroup: OptionGroup {
        let tokenField = Option.value("token-field", .string("NAME"),
                                      help: "synthetic: token POST field carrying the sign-in token", default: "token")
        let verifierField = Option.value("verifier-field", .string("NAME"),
                                         help: "synthetic: token POST field carrying the PKCE code verifier",
                                         default: "codeVerifier")
        let encoding = Option.value("token-encoding", .choice([TokenPostFormat.BodyEncoding.form, .json], "form|json"),
                                    help: "synthetic: token POST body encoding", default: .form)
    }

    /// `--record`, `--tap`, `--record-secrets`, `--digest-key`, `--secret-name`, `--record-bodies` for a tap
    /// named `defaultTap` by default.
    struct RecordingGroup: OptionGroup {
        let record = Option.optional("record", .string("FILE"),
                                     help: "write this tap's view of every exchange to a new recording")
        let tap: Option<String>
        let recordSecrets = Option.flag("record-secrets",
                                        help: "keep cookies, Authorization, tokens and passwords in clear (default: keyed digests)")
        let secrets = RecordingOptions()
        let recordBodies = Option.value("record-bodies", .integer(in: 0...(64 * 1024 * 1024), "BYTES"),
                                        help: "keep up to BYTES of each body in the recording", default: 0)

        init(defaultTap: String) {
            tap = Option.value("tap", .string("NAME"), help: "the tap's name in the recording", default: defaultTap)
        }
    }

    /// Discussion lines saying what is synthetic, for `--help`.
    static let syntheticNote = """
        Parts marked "synthetic" are Intact's choices where the public description of the
        flow is silent (the token POST's field names and encoding, the bootstrap schema,
        the login form); client and server must be given the same values.
        """

    /// The token POST format from the options.
    static func tokenPostFormat(_ arguments: ParsedArguments, _ options: TokenPostGroup) throws -> TokenPostFormat {
        let token = arguments[options.tokenField]
        guard token != arguments[options.verifierField] else {
            throw UsageError("--token-field and --verifier-field must differ (both are '\(token)')", path: arguments.path)
        }
        return TokenPostFormat(tokenField: token, verifierField: arguments[options.verifierField],
                               encoding: arguments[options.encoding])
    }

    /// The recorder the options ask for, created now (nil without `--record`).
    /// Blocks on disk I/O; a recording that exists is refused.
    ///
    /// - Parameters:
    ///   - keyDirectory: where the digest key lives unless `--digest-key` says (the CA's directory).
    ///   - announce: told when the digest key was made now.
    static func recorder(_ arguments: ParsedArguments, _ options: RecordingGroup, role: ExchangeRecord.Leg.Role,
                         mode: String, options recorded: [String: String], keyDirectory: String,
                         origin: String? = nil, announce: (String) -> Void) throws -> TapRecorder? {
        guard let path = arguments[options.record] else { return nil }
        let redaction = try options.secrets.redaction(arguments, recordSecrets: arguments[options.recordSecrets],
                                                      keyDirectory: keyDirectory, announce: announce)
        let settings = TapRecorder.Settings(tap: arguments[options.tap], role: role, redaction: redaction,
                                            bodyStoreLimit: arguments[options.recordBodies])
        return try TapRecorder(path: path, settings: settings, toolVersion: IntactVersion.string, mode: mode,
                               options: recorded, origin: origin)
    }
}
