import AuthFlow
import Evidence
import Foundation
import SignIn

/// Options `intact server` and `intact client` share: the *synthetic* token
/// POST format (both sides must agree on it) and how the tap records.
enum SignInOptions {
    static let tokenPostOptions: [CommandOption] = [
        .value("token-field", valueName: "NAME",
               help: "synthetic: token POST field carrying the sign-in token", defaultValue: "token"),
        .value("verifier-field", valueName: "NAME",
               help: "synthetic: token POST field carrying the PKCE code verifier", defaultValue: "codeVerifier"),
        .value("token-encoding", valueName: "form|json",
               help: "synthetic: token POST body encoding", defaultValue: "form"),
    ]

    /// `--record`, `--tap`, `--record-secrets`, `--record-bodies` for a tap named `defaultTap` by default.
    static func recordingOptions(defaultTap: String) -> [CommandOption] {
        [
            .value("record", valueName: "FILE", help: "write this tap's view of every exchange to a new recording"),
            .value("tap", valueName: "NAME", help: "the tap's name in the recording", defaultValue: defaultTap),
            .flag("record-secrets", help: "keep cookies, Authorization, tokens and passwords in clear (default: keyed digests)"),
            .value("record-bodies", valueName: "BYTES", help: "keep up to BYTES of each body in the recording",
                   defaultValue: "0"),
        ] + RecordingOptions.options
    }

    /// Discussion lines saying what is synthetic, for `--help`.
    static let syntheticNote = """
        Parts marked "synthetic" are Intact's choices where the public description of the
        flow is silent (the token POST's field names and encoding, the bootstrap schema,
        the login form); client and server must be given the same values.
        """

    /// The token POST format from the options.
    static func tokenPostFormat(_ arguments: ParsedArguments) throws -> TokenPostFormat {
        guard let token = arguments.value("token-field"), let verifier = arguments.value("verifier-field"),
              let encodingName = arguments.value("token-encoding") else {
            preconditionFailure("the token POST options have defaults")
        }
        guard let encoding = TokenPostFormat.BodyEncoding(rawValue: encodingName) else {
            throw UsageError("option --token-encoding expects form or json, got '\(encodingName)'", path: arguments.path)
        }
        guard token != verifier else {
            throw UsageError("--token-field and --verifier-field must differ (both are '\(token)')", path: arguments.path)
        }
        return TokenPostFormat(tokenField: token, verifierField: verifier, encoding: encoding)
    }

    /// The recorder the options ask for, created now (nil without `--record`).
    /// Blocks on disk I/O; a recording that exists is refused.
    ///
    /// - Parameters:
    ///   - keyDirectory: where the digest key lives unless `--digest-key` says (the CA's directory).
    ///   - announce: told when the digest key was made now.
    static func recorder(_ arguments: ParsedArguments, role: ExchangeRecord.Leg.Role, mode: String,
                         options: [String: String], keyDirectory: String,
                         announce: (String) -> Void) throws -> TapRecorder? {
        guard let path = arguments.value("record") else { return nil }
        guard let tap = arguments.value("tap"),
              let bodies = try arguments.integer("record-bodies", in: 0...(64 * 1024 * 1024)) else {
            preconditionFailure("--tap and --record-bodies have defaults")
        }
        let settings = TapRecorder.Settings(tap: tap, role: role,
                                            redaction: try RecordingOptions.redaction(arguments, keyDirectory: keyDirectory,
                                                                                      announce: announce),
                                            bodyStoreLimit: bodies)
        return try TapRecorder(path: path, settings: settings, toolVersion: IntactVersion.string, mode: mode,
                               options: options)
    }

    /// A duration in seconds: `120`, `1.5`, `90s`, `500ms`, `65m`, `2h`; positive.
    static func seconds(_ arguments: ParsedArguments, _ long: String) throws -> TimeInterval? {
        guard let text = arguments.value(long) else { return nil }
        let units: [(suffix: String, scale: Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("", 1)]
        for unit in units where text.hasSuffix(unit.suffix) {
            if let number = Double(text.dropLast(unit.suffix.count)), number.isFinite, number > 0 {
                return number * unit.scale
            }
            break
        }
        throw UsageError("option --\(long) expects a positive duration such as 120, 90s, 500ms or 65m, got '\(text)'",
                         path: arguments.path)
    }
}
